// SPDX-License-Identifier: GPL-2.0
/*
 * Command-line predicates <-> struct pf_filter. See parse.h.
 *
 * Every message names the option as the user would type it with a space
 * ("--dport 70000: ..."), whether it was given as "--dport=70000" or not.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* setns() */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <linux/nsfs.h>

#include "pktfilt.h"
#include "parse.h"

enum pf_opt {
	PF_OPT_PROTO,
	PF_OPT_SADDR,
	PF_OPT_DADDR,
	PF_OPT_SPORT,
	PF_OPT_DPORT,
	PF_OPT_DEV,
	PF_OPT_IFINDEX,
	PF_OPT_NETNS,
	PF_OPT_MARK,
	PF_OPT_COUNT,
	PF_OPT_AT,
	PF_OPT_SNAPLEN,
};

struct pf_option {
	const char *name;
	enum pf_parse_status (*parse)(struct pf_parser *p, const char *name,
				      const char *val);
};

struct pf_proto_name {
	const char *name;
	__u8 proto;
};

static const struct pf_proto_name pf_protos[] = {
	{ "tcp",	PKTFILT_PROTO_TCP },
	{ "udp",	PKTFILT_PROTO_UDP },
	{ "icmp",	PKTFILT_PROTO_ICMP },
	{ "icmpv6",	PKTFILT_PROTO_ICMPV6 },
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Our own network namespace, to compare with or to come back to. */
#define PF_SELF_NETNS	"/proc/self/ns/net"

static enum pf_parse_status __attribute__((format(printf, 3, 4)))
pf_fail(struct pf_parser *p, enum pf_parse_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
	return st;
}

/*
 * Decimal digits only, the first @n characters of @s: strtoul() would take
 * signs, blanks and "0x", and need a copy of a substring.
 */
static int pf_parse_decimal_n(const char *s, size_t n, unsigned long max,
			      unsigned long *val)
{
	unsigned long v = 0;
	size_t i;

	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		if (v > (ULONG_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return -ERANGE;
	*val = v;
	return 0;
}

int pf_parse_decimal(const char *s, unsigned long max, unsigned long *val)
{
	return pf_parse_decimal_n(s, strlen(s), max, val);
}

static int pf_parse_hex_n(const char *s, size_t n, unsigned long max,
			  unsigned long *val)
{
	unsigned long v = 0;
	size_t i;
	int d;

	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			d = s[i] - '0';
		else if (s[i] >= 'a' && s[i] <= 'f')
			d = s[i] - 'a' + 10;
		else if (s[i] >= 'A' && s[i] <= 'F')
			d = s[i] - 'A' + 10;
		else
			return -EINVAL;
		if (v > (ULONG_MAX >> 4))
			return -ERANGE;
		v = (v << 4) | (unsigned long)d;
	}
	if (v > max)
		return -ERANGE;
	*val = v;
	return 0;
}

/* Decimal, or hex after "0x". No octal: "010" is ten, as a human means. */
static int pf_parse_u32_n(const char *s, size_t n, __u32 *val)
{
	unsigned long v;
	int err;

	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		err = pf_parse_hex_n(s + 2, n - 2, UINT32_MAX, &v);
	else
		err = pf_parse_decimal_n(s, n, UINT32_MAX, &v);
	if (!err)
		*val = (__u32)v;
	return err;
}

int pf_parse_u32(const char *s, __u32 *val)
{
	return pf_parse_u32_n(s, strlen(s), val);
}

static enum pf_parse_status pf_opt_proto(struct pf_parser *p,
					 const char *name, const char *val)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pf_protos); i++) {
		if (!strcmp(val, pf_protos[i].name)) {
			p->filter->spec.proto = pf_protos[i].proto;
			return PF_PARSE_OK;
		}
	}
	return pf_fail(p, PF_PARSE_INVALID,
		       "%s %s: unknown protocol (tcp, udp, icmp, icmpv6)",
		       name, val);
}

static enum pf_parse_status pf_addr(struct pf_parser *p, const char *name,
				    const char *val, struct pf_addr_pred *pred)
{
	char buf[INET6_ADDRSTRLEN];
	const char *slash = strchr(val, '/');
	size_t len = slash ? (size_t)(slash - val) : strlen(val);
	unsigned long plen;
	int maxlen;

	memset(pred, 0, sizeof(*pred));
	if (len >= sizeof(buf))
		goto bad_addr;
	memcpy(buf, val, len);
	buf[len] = '\0';

	/* A colon can only be IPv6; inet_pton(AF_INET) takes dotted quads. */
	if (strchr(buf, ':')) {
		if (inet_pton(AF_INET6, buf, pred->addr) != 1)
			goto bad_addr;
		pred->family = PF_FAMILY_IPV6;
		maxlen = 128;
	} else {
		if (inet_pton(AF_INET, buf, pred->addr) != 1)
			goto bad_addr;
		pred->family = PF_FAMILY_IPV4;
		maxlen = 32;
	}

	plen = (unsigned long)maxlen;
	if (slash && pf_parse_decimal(slash + 1, (unsigned long)maxlen, &plen))
		return pf_fail(p, PF_PARSE_INVALID,
			       "%s %s: prefix length must be 0-%d for %s",
			       name, val, maxlen,
			       maxlen == 32 ? "IPv4" : "IPv6");
	pred->plen = (__u8)plen;
	return PF_PARSE_OK;

bad_addr:
	memset(pred, 0, sizeof(*pred));
	return pf_fail(p, PF_PARSE_INVALID,
		       "%s %s: not an IPv4 or IPv6 address (ADDR[/LEN])",
		       name, val);
}

static enum pf_parse_status pf_opt_saddr(struct pf_parser *p,
					 const char *name, const char *val)
{
	p->saddr = val;
	return pf_addr(p, name, val, &p->filter->spec.saddr);
}

static enum pf_parse_status pf_opt_daddr(struct pf_parser *p,
					 const char *name, const char *val)
{
	p->daddr = val;
	return pf_addr(p, name, val, &p->filter->spec.daddr);
}

/* The port in the first @n characters of @s, part of the option's @val. */
static enum pf_parse_status pf_port(struct pf_parser *p, const char *name,
				    const char *val, const char *s, size_t n,
				    __u16 *port)
{
	unsigned long v;
	int err = pf_parse_decimal_n(s, n, 65535, &v);

	if (err == -ERANGE)
		return pf_fail(p, PF_PARSE_INVALID,
			       "%s %s: port out of range 0-65535", name, val);
	if (err)
		return pf_fail(p, PF_PARSE_INVALID,
			       "%s %s: not a port or port range (P or P-P)",
			       name, val);
	*port = (__u16)v;
	return PF_PARSE_OK;
}

static enum pf_parse_status pf_ports(struct pf_parser *p, const char *name,
				     const char *val, struct pf_port_pred *pred)
{
	const char *dash = strchr(val, '-');
	enum pf_parse_status st;

	memset(pred, 0, sizeof(*pred));
	if (!dash) {
		st = pf_port(p, name, val, val, strlen(val), &pred->min);
		pred->max = pred->min;
	} else {
		st = pf_port(p, name, val, val, (size_t)(dash - val),
			     &pred->min);
		if (st == PF_PARSE_OK)
			st = pf_port(p, name, val, dash + 1, strlen(dash + 1),
				     &pred->max);
	}
	if (st != PF_PARSE_OK)
		return st;
	if (pred->min > pred->max)
		return pf_fail(p, PF_PARSE_INVALID,
			       "%s %s: range start is greater than its end",
			       name, val);
	pred->set = 1;
	return PF_PARSE_OK;
}

static enum pf_parse_status pf_opt_sport(struct pf_parser *p,
					 const char *name, const char *val)
{
	p->sport = val;
	return pf_ports(p, name, val, &p->filter->spec.sport);
}

static enum pf_parse_status pf_opt_dport(struct pf_parser *p,
					 const char *name, const char *val)
{
	p->dport = val;
	return pf_ports(p, name, val, &p->filter->spec.dport);
}

/* The name is looked up in pf_parse_finish(), once --netns is known. */
static enum pf_parse_status pf_opt_dev(struct pf_parser *p, const char *name,
				       const char *val)
{
	if (strlen(val) >= IF_NAMESIZE)
		return pf_fail(p, PF_PARSE_INVALID,
			       "%s %s: interface names are at most %d characters",
			       name, val, IF_NAMESIZE - 1);
	if (strchr(val, '/') || strpbrk(val, " \t\n"))
		return pf_fail(p, PF_PARSE_INVALID,
			       "%s %s: not a valid interface name", name, val);
	p->dev = val;
	return PF_PARSE_OK;
}

static enum pf_parse_status pf_opt_ifindex(struct pf_parser *p,
					   const char *name, const char *val)
{
	unsigned long v;

	if (pf_parse_decimal(val, UINT32_MAX, &v) || !v)
		return pf_fail(p, PF_PARSE_INVALID,
			       "%s %s: interface index must be 1-4294967295",
			       name, val);
	p->filter->spec.ifindex = (__u32)v;
	return PF_PARSE_OK;
}

/*
 * A number is a namespace inode as the kernel reports it (ls -iL, lsns);
 * anything else is a file naming a namespace, like /run/netns/NAME.
 */
static int pf_netns_is_inode(const char *val)
{
	return val[0] >= '0' && val[0] <= '9' && !strchr(val, '/');
}

static enum pf_parse_status pf_opt_netns(struct pf_parser *p,
					 const char *name, const char *val)
{
	unsigned long v;
	__u32 ino;
	int err;

	p->netns = val;
	if (pf_netns_is_inode(val)) {
		if (pf_parse_decimal(val, UINT32_MAX, &v) || !v)
			return pf_fail(p, PF_PARSE_INVALID,
				       "%s %s: namespace inode number must be 1-4294967295",
				       name, val);
		p->filter->spec.netns = (__u32)v;
		return PF_PARSE_OK;
	}

	err = p->res->netns_ino(val, &ino);
	if (err == -EINVAL)
		return pf_fail(p, PF_PARSE_INVALID,
			       "%s %s: not a network namespace", name, val);
	if (err == -ENOENT || err == -ENOTDIR)
		return pf_fail(p, PF_PARSE_INVALID, "%s %s: %s", name, val,
			       strerror(-err));
	if (err)
		return pf_fail(p, PF_PARSE_SYSTEM, "%s %s: %s", name, val,
			       strerror(-err));
	p->filter->spec.netns = ino;
	return PF_PARSE_OK;
}

static enum pf_parse_status pf_opt_mark(struct pf_parser *p, const char *name,
					const char *val)
{
	struct pf_spec *spec = &p->filter->spec;
	const char *slash = strchr(val, '/');
	size_t len = slash ? (size_t)(slash - val) : strlen(val);

	if (pf_parse_u32_n(val, len, &spec->mark))
		return pf_fail(p, PF_PARSE_INVALID,
			       "%s %s: mark must be a 32-bit number, decimal or 0x hex",
			       name, val);
	spec->mark_mask = UINT32_MAX;
	if (slash && pf_parse_u32(slash + 1, &spec->mark_mask))
		return pf_fail(p, PF_PARSE_INVALID,
			       "%s %s: mask must be a 32-bit number, decimal or 0x hex",
			       name, val);
	spec->has_mark = 1;
	return PF_PARSE_OK;
}

static enum pf_parse_status pf_opt_count(struct pf_parser *p,
					 const char *name, const char *val)
{
	unsigned long v;

	if (pf_parse_decimal(val, UINT32_MAX, &v))
		return pf_fail(p, PF_PARSE_INVALID,
			       "%s %s: count must be a number 0-4294967295 (0: no limit)",
			       name, val);
	p->filter->count = (__u32)v;
	return PF_PARSE_OK;
}

static enum pf_parse_status pf_opt_snaplen(struct pf_parser *p,
					   const char *name, const char *val)
{
	unsigned long v;

	if (pf_parse_decimal(val, PKTFILT_SNAPLEN_MAX, &v))
		return pf_fail(p, PF_PARSE_INVALID,
			       "%s %s: a number of bytes, 0-%d",
			       name, val, PKTFILT_SNAPLEN_MAX);
	p->filter->snaplen = (__u32)v;
	p->filter->snaplen_set = true;
	return PF_PARSE_OK;
}

/*
 * snprintf() that appends at *off and keeps counting past the end. Every
 * piece starts with a blank to separate it from the previous one: the
 * first piece has none to separate from.
 */
static void __attribute__((format(printf, 4, 5)))
pf_append(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!*off && fmt[0] == ' ')
		fmt++;
	va_start(ap, fmt);
	n = vsnprintf(*off < len ? buf + *off : NULL,
		      *off < len ? len - *off : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += (size_t)n;
}

static const char *const pf_stage_names[] = {
	[PKTFILT_STAGE_L4]	= "l4",
	[PKTFILT_STAGE_RX]	= "rx",
	[PKTFILT_STAGE_TX]	= "tx",
};

int pf_parse_stages(const char *val, __u32 *stages, char *err, size_t len)
{
	const char *p = val, *end;
	__u32 bits = 0;
	size_t n, i;

	for (;;) {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		if (!n) {
			snprintf(err, len,
				 "--at %s: an empty stage (l4, rx, tx, comma-separated)",
				 val);
			return -1;
		}
		for (i = 0; i < ARRAY_SIZE(pf_stage_names); i++)
			if (strlen(pf_stage_names[i]) == n &&
			    !strncmp(p, pf_stage_names[i], n))
				break;
		if (i == ARRAY_SIZE(pf_stage_names)) {
			snprintf(err, len, "--at %s: unknown stage '%.*s' (l4, rx, tx)",
				 val, (int)(n > 64 ? 64 : n), p);
			return -1;
		}
		if (bits & (1U << i)) {
			snprintf(err, len, "--at %s: stage '%s' given twice", val,
				 pf_stage_names[i]);
			return -1;
		}
		bits |= 1U << i;
		if (!end)
			break;
		p = end + 1;
	}
	*stages = bits;
	return 0;
}

int pf_format_stages(__u32 stages, char *buf, size_t len)
{
	size_t off = 0, i;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < 32; i++) {
		if (!(stages & (1U << i)))
			continue;
		if (i < ARRAY_SIZE(pf_stage_names))
			pf_append(buf, len, &off, "%s%s", off ? "," : "",
				  pf_stage_names[i]);
		else	/* a newer module's */
			pf_append(buf, len, &off, "%s%zu", off ? "," : "", i);
	}
	return (int)off;
}

enum pf_compat pf_stages_compat(struct pf_filter *f, unsigned int version,
				__u32 default_stages, char *msg, size_t len)
{
	char at[64];

	if (len)
		msg[0] = '\0';
	if (!version)
		version = PKTFILT_GENL_VERSION;
	if (f->snaplen_set && version < 6) {
		snprintf(msg, len,
			 "--snaplen: the loaded pktfilt.ko speaks version %u: its events carry no packet bytes; load this release's module (rmmod pktfilt; insmod pktfilt.ko)",
			 version);
		return PF_COMPAT_FAIL;
	}
	if (version >= 2) {
		if (!f->stages)
			f->stages = default_stages;
		if (version <= PKTFILT_GENL_VERSION)
			return PF_COMPAT_OK;
		snprintf(msg, len,
			 "warning: the loaded pktfilt.ko speaks version %u, this pktfilt version %d: pktfilt is older than the module (going on; install this release's pktfilt)",
			 version, PKTFILT_GENL_VERSION);
		return PF_COMPAT_WARN;
	}
	if (f->expr[0]) {
		snprintf(msg, len,
			 "the loaded pktfilt.ko speaks version %u: it takes no filter expression; load this release's module (rmmod pktfilt; insmod pktfilt.ko)",
			 version);
		return PF_COMPAT_FAIL;
	}
	if (f->stages & ~(1U << PKTFILT_STAGE_L4)) {
		pf_format_stages(f->stages, at, sizeof(at));
		snprintf(msg, len,
			 "--at %s: the loaded pktfilt.ko speaks version %u: it traces only --at l4; load this release's module (rmmod pktfilt; insmod pktfilt.ko) or give --at l4",
			 at, version);
		return PF_COMPAT_FAIL;
	}
	if (f->stages || !(default_stages & ~(1U << PKTFILT_STAGE_L4))) {
		f->stages = 0;	/* l4: what version 1 does, unasked */
		return PF_COMPAT_OK;
	}
	pf_format_stages(default_stages, at, sizeof(at));
	snprintf(msg, len,
		 "note: the loaded pktfilt.ko speaks version %u: it traces only --at l4 (the protocol handlers), not the default --at %s; load this release's module for rx and tx",
		 version, at);
	return PF_COMPAT_NOTE;
}

static enum pf_parse_status pf_opt_at(struct pf_parser *p, const char *name,
				      const char *val)
{
	(void)name;
	if (pf_parse_stages(val, &p->filter->stages, p->err, sizeof(p->err)))
		return PF_PARSE_INVALID;
	return PF_PARSE_OK;
}

/* Indexed by enum pf_opt. */
static const struct pf_option pf_options[] = {
	[PF_OPT_PROTO]	 = { "--proto",	  pf_opt_proto },
	[PF_OPT_SADDR]	 = { "--saddr",	  pf_opt_saddr },
	[PF_OPT_DADDR]	 = { "--daddr",	  pf_opt_daddr },
	[PF_OPT_SPORT]	 = { "--sport",	  pf_opt_sport },
	[PF_OPT_DPORT]	 = { "--dport",	  pf_opt_dport },
	[PF_OPT_DEV]	 = { "--dev",	  pf_opt_dev },
	[PF_OPT_IFINDEX] = { "--ifindex", pf_opt_ifindex },
	[PF_OPT_NETNS]	 = { "--netns",	  pf_opt_netns },
	[PF_OPT_MARK]	 = { "--mark",	  pf_opt_mark },
	[PF_OPT_COUNT]	 = { "--count",	  pf_opt_count },
	[PF_OPT_AT]	 = { "--at",	  pf_opt_at },
	[PF_OPT_SNAPLEN] = { "--snaplen", pf_opt_snaplen },
};

void pf_parser_init(struct pf_parser *p, struct pf_filter *filter,
		    const struct pf_resolver *res)
{
	memset(p, 0, sizeof(*p));
	memset(filter, 0, sizeof(*filter));
	filter->count = PF_DEFAULT_COUNT;
	p->filter = filter;
	p->res = res;
}

/* Returns the option argv[*i] names, or -1; *val gets an "=value" part. */
static int pf_lookup_option(const char *arg, const char **val)
{
	const char *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	size_t i;

	*val = eq ? eq + 1 : NULL;
	for (i = 0; i < ARRAY_SIZE(pf_options); i++)
		if (strlen(pf_options[i].name) == len &&
		    !strncmp(arg, pf_options[i].name, len))
			return (int)i;
	return -1;
}

enum pf_parse_status pf_parse_arg(struct pf_parser *p, int argc,
				  char *const *argv, int *i)
{
	const char *val;
	const char *name;
	int opt = pf_lookup_option(argv[*i], &val);
	int used = 1;

	if (opt < 0)
		return PF_PARSE_UNKNOWN;
	name = pf_options[opt].name;

	if (!val) {
		if (*i + 1 >= argc)
			return pf_fail(p, PF_PARSE_SYNTAX,
				       "%s: missing value", name);
		val = argv[*i + 1];
		used = 2;
	}
	if (!*val)
		return pf_fail(p, PF_PARSE_SYNTAX, "%s: empty value", name);
	/* A repeated option would silently replace the first: say so. */
	if (p->given & (1U << opt))
		return pf_fail(p, PF_PARSE_INVALID, "%s given twice", name);
	p->given |= 1U << opt;

	*i += used;
	return pf_options[opt].parse(p, name, val);
}

static const char *pf_proto_name(__u8 proto)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pf_protos); i++)
		if (pf_protos[i].proto == proto)
			return pf_protos[i].name;
	return NULL;
}

/*
 * An interface index means nothing across namespaces (lo is 1 in every
 * one), and "--dev eth0" means the eth0 we see: without --netns, add the
 * predicate for our own namespace.
 */
static enum pf_parse_status pf_dev_own_netns(struct pf_parser *p)
{
	int err = p->res->netns_ino(PF_SELF_NETNS, &p->filter->spec.netns);

	if (err)
		return pf_fail(p, PF_PARSE_SYSTEM,
			       "--dev %s: cannot find our own network namespace (%s): %s",
			       p->dev, PF_SELF_NETNS, strerror(-err));
	return PF_PARSE_OK;
}

/* Where to look --dev up: the --netns file, or one naming that inode. */
static enum pf_parse_status pf_finish_dev(struct pf_parser *p)
{
	const char *where = NULL;
	char path[PATH_MAX];
	__u32 idx;
	int err;

	if (p->netns && !pf_netns_is_inode(p->netns)) {
		where = p->netns;
	} else if (p->netns) {
		err = p->res->netns_path(p->filter->spec.netns, path,
					 sizeof(path));
		if (err)
			return pf_fail(p, PF_PARSE_INVALID,
				       "--dev %s: cannot look up a name in netns %s: no file names that namespace; give --netns as a path, or use --ifindex",
				       p->dev, p->netns);
		where = path;
	}

	err = p->res->ifindex(p->dev, where, &idx);
	if (err == -ENODEV && where)
		return pf_fail(p, PF_PARSE_INVALID,
			       "--dev %s: no such interface in netns %s",
			       p->dev, p->netns);
	if (err == -ENODEV)
		return pf_fail(p, PF_PARSE_INVALID,
			       "--dev %s: no such interface", p->dev);
	if (err)
		return pf_fail(p, PF_PARSE_SYSTEM, "--dev %s: %s%s: %s",
			       p->dev, where ? "entering netns " : "",
			       where ? p->netns : "", strerror(-err));
	p->filter->spec.ifindex = idx;
	return p->netns ? PF_PARSE_OK : pf_dev_own_netns(p);
}

/* The rules of pf_spec_valid(), with a message a human can act on. */
static enum pf_parse_status pf_check_spec(struct pf_parser *p)
{
	const struct pf_spec *s = &p->filter->spec;
	const char *v4 = NULL, *v6 = NULL;
	const char *proto = pf_proto_name(s->proto);

	if (s->saddr.family && s->daddr.family &&
	    s->saddr.family != s->daddr.family)
		return pf_fail(p, PF_PARSE_INVALID,
			       "--saddr %s, --daddr %s: one is IPv4, the other IPv6: no packet could match",
			       p->saddr, p->daddr);

	if (s->saddr.family == PF_FAMILY_IPV4)
		v4 = p->saddr;
	else if (s->saddr.family == PF_FAMILY_IPV6)
		v6 = p->saddr;
	if (s->daddr.family == PF_FAMILY_IPV4)
		v4 = p->daddr;
	else if (s->daddr.family == PF_FAMILY_IPV6)
		v6 = p->daddr;

	if (s->proto == PKTFILT_PROTO_ICMP && v6)
		return pf_fail(p, PF_PARSE_INVALID,
			       "--proto icmp: ICMP is IPv4 only, %s is IPv6 (use --proto icmpv6)",
			       v6);
	if (s->proto == PKTFILT_PROTO_ICMPV6 && v4)
		return pf_fail(p, PF_PARSE_INVALID,
			       "--proto icmpv6: ICMPv6 is IPv6 only, %s is IPv4 (use --proto icmp)",
			       v4);
	if ((s->proto == PKTFILT_PROTO_ICMP ||
	     s->proto == PKTFILT_PROTO_ICMPV6) && (s->sport.set || s->dport.set))
		return pf_fail(p, PF_PARSE_INVALID,
			       "%s %s: --proto %s packets have no ports",
			       s->sport.set ? "--sport" : "--dport",
			       s->sport.set ? p->sport : p->dport, proto);
	return PF_PARSE_OK;
}

enum pf_parse_status pf_parse_word(struct pf_parser *p, const char *word)
{
	struct pf_filter *f = p->filter;
	size_t have = strlen(f->expr), n = strlen(word);

	if (!n)
		return pf_fail(p, PF_PARSE_SYNTAX,
			       "an empty argument: a filter expression is words of pcap-filter(7)");
	if (have + !!have + n > PF_EXPR_MAX)
		return pf_fail(p, PF_PARSE_INVALID,
			       "the filter expression is longer than %d bytes",
			       PF_EXPR_MAX);
	if (have)
		f->expr[have++] = ' ';
	memcpy(f->expr + have, word, n + 1);
	return PF_PARSE_OK;
}

bool pf_is_option(const char *arg)
{
	return arg[0] == '-' && arg[1] && !strpbrk(arg, " \t\n");
}

enum pf_parse_status pf_parse_finish(struct pf_parser *p)
{
	enum pf_parse_status st;
	struct pf_filter *f = p->filter;

	if (f->expr[0]) {
		f->bpf_len = pf_expr_compile(f->expr, f->bpf, p->err,
					     sizeof(p->err));
		if (!f->bpf_len)
			return PF_PARSE_INVALID;
	}

	if ((p->given & (1U << PF_OPT_DEV)) &&
	    (p->given & (1U << PF_OPT_IFINDEX)))
		return pf_fail(p, PF_PARSE_INVALID,
			       "--dev and --ifindex name the same predicate: give one");
	if (p->dev) {
		st = pf_finish_dev(p);
		if (st != PF_PARSE_OK)
			return st;
	}
	return pf_check_spec(p);
}

enum pf_parse_status pf_parse_filter(int argc, char *const *argv,
				     struct pf_filter *filter,
				     const struct pf_resolver *res,
				     char *err, size_t errlen)
{
	struct pf_parser p;
	enum pf_parse_status st = PF_PARSE_OK;
	int i = 0;

	pf_parser_init(&p, filter, res);
	while (i < argc && st == PF_PARSE_OK) {
		st = pf_parse_arg(&p, argc, argv, &i);
		if (st != PF_PARSE_UNKNOWN)
			continue;
		if (pf_is_option(argv[i])) {
			pf_fail(&p, PF_PARSE_SYNTAX, "unknown option '%s'",
				argv[i]);
			st = PF_PARSE_SYNTAX;
		} else {
			st = pf_parse_word(&p, argv[i++]);
		}
	}
	if (st == PF_PARSE_OK)
		st = pf_parse_finish(&p);
	if (st != PF_PARSE_OK && err && errlen)
		snprintf(err, errlen, "%s", p.err);
	return st;
}

static void pf_format_addr(char *buf, size_t len, size_t *off,
			   const char *name, const struct pf_addr_pred *a)
{
	char str[INET6_ADDRSTRLEN];
	int af = a->family == PF_FAMILY_IPV4 ? AF_INET : AF_INET6;
	int full = a->family == PF_FAMILY_IPV4 ? 32 : 128;

	if (!a->family || !inet_ntop(af, a->addr, str, sizeof(str)))
		return;
	pf_append(buf, len, off, " %s %s", name, str);
	if (a->plen != full)
		pf_append(buf, len, off, "/%u", a->plen);
}

static void pf_format_ports(char *buf, size_t len, size_t *off,
			    const char *name, const struct pf_port_pred *pp)
{
	if (!pp->set)
		return;
	pf_append(buf, len, off, " %s %u", name, pp->min);
	if (pp->max != pp->min)
		pf_append(buf, len, off, "-%u", pp->max);
}

/*
 * A namespace prints as its /run/netns name if it has one, else as the
 * inode; the interface by name if we can see into that namespace.
 */
static void pf_format_dev(char *buf, size_t len, size_t *off,
			  const struct pf_spec *s,
			  const struct pf_resolver *res)
{
	char path[PATH_MAX], name[IF_NAMESIZE];
	const char *where = NULL;
	int named = 0;

	if (s->netns && !res->netns_path(s->netns, path, sizeof(path))) {
		where = path;
		named = !strncmp(path, "/run/netns/", 11);
	}
	if (s->netns && named)
		pf_append(buf, len, off, " --netns %s", path);
	else if (s->netns)
		pf_append(buf, len, off, " --netns %u", s->netns);

	if (!s->ifindex)
		return;
	if ((!s->netns || where) &&
	    !res->ifname(s->ifindex, where, name, sizeof(name)))
		pf_append(buf, len, off, " --dev %s", name);
	else
		pf_append(buf, len, off, " --ifindex %u", s->ifindex);
}

int pf_format_filter(const struct pf_filter *f, const struct pf_resolver *res,
		     char *buf, size_t len)
{
	const struct pf_spec *s = &f->spec;
	const char *proto = pf_proto_name(s->proto);
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	if (proto)
		pf_append(buf, len, &off, " --proto %s", proto);
	else if (s->proto)	/* a newer module? show it, even if unusable */
		pf_append(buf, len, &off, " --proto %u", s->proto);
	pf_format_addr(buf, len, &off, "--saddr", &s->saddr);
	pf_format_addr(buf, len, &off, "--daddr", &s->daddr);
	pf_format_ports(buf, len, &off, "--sport", &s->sport);
	pf_format_ports(buf, len, &off, "--dport", &s->dport);
	pf_format_dev(buf, len, &off, s, res);
	if (s->has_mark && s->mark_mask == UINT32_MAX)
		pf_append(buf, len, &off, " --mark 0x%x", s->mark);
	else if (s->has_mark)
		pf_append(buf, len, &off, " --mark 0x%x/0x%x", s->mark,
			  s->mark_mask);
	pf_append(buf, len, &off, " --count %u", f->count);
	if (f->stages) {
		char at[64];

		pf_format_stages(f->stages, at, sizeof(at));
		pf_append(buf, len, &off, " --at %s", at);
	}
	if (f->snaplen_set)
		pf_append(buf, len, &off, " --snaplen %u", f->snaplen);
	if (f->expr[0]) {
		/* One shell word: '...', with each ' as '\'' */
		const char *c;

		pf_append(buf, len, &off, " '");
		for (c = f->expr; *c; c++) {
			if (*c == '\'')
				pf_append(buf, len, &off, "'\\''");
			else
				pf_append(buf, len, &off, "%c", *c);
		}
		pf_append(buf, len, &off, "'");
	}
	return (int)off;
}

/*
 * The system resolver. Namespace files are checked to be nsfs files of a
 * network namespace: /run/netns/NAME left over without its bind mount is a
 * plain empty file whose inode number means nothing.
 */
static int sys_netns_ino(const char *path, __u32 *ino)
{
	struct statfs sfs;
	struct stat st;
	int fd, type, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstatfs(fd, &sfs) || fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (sfs.f_type != NSFS_MAGIC || st.st_ino > UINT32_MAX) {
		err = -EINVAL;
		goto out;
	}
	/* NS_GET_NSTYPE is 4.11+; older kernels: any nsfs file will do. */
	type = ioctl(fd, NS_GET_NSTYPE);
	if (type >= 0 && type != CLONE_NEWNET) {
		err = -EINVAL;
		goto out;
	}
	*ino = (__u32)st.st_ino;
out:
	close(fd);
	return err;
}

static int sys_netns_path(__u32 ino, char *buf, size_t len)
{
	struct stat nsfs, st;
	struct dirent *de;
	DIR *dir;
	int err = -ENOENT;

	if (stat(PF_SELF_NETNS, &nsfs))
		return -errno;
	if (nsfs.st_ino == ino) {
		snprintf(buf, len, "%s", PF_SELF_NETNS);
		return 0;
	}
	dir = opendir("/run/netns");
	if (!dir)
		return -ENOENT;
	while (err && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(buf, len, "/run/netns/%s", de->d_name);
		/* Same device as our own ns file: a mounted nsfs file. */
		if (!stat(buf, &st) && st.st_dev == nsfs.st_dev &&
		    st.st_ino == ino)
			err = 0;
	}
	closedir(dir);
	return err;
}

struct sys_if_arg {
	const char *name;
	__u32 index;
	char *buf;
	size_t len;
};

static int sys_if_by_name(struct sys_if_arg *a)
{
	unsigned int idx;

	errno = 0;
	idx = if_nametoindex(a->name);
	if (!idx)
		return errno && errno != ENXIO ? -errno : -ENODEV;
	a->index = idx;
	return 0;
}

static int sys_if_by_index(struct sys_if_arg *a)
{
	char name[IF_NAMESIZE];

	if (!if_indextoname(a->index, name))
		return errno == ENXIO || !errno ? -ENODEV : -errno;
	snprintf(a->buf, a->len, "%s", name);
	return 0;
}

/*
 * Run @fn inside the network namespace at @path and come back. The
 * interface lookups open their socket inside @fn, so it lives there too.
 * Failing to come back would send our netlink request from the wrong
 * namespace: that is fatal.
 */
static int sys_in_netns(const char *path, int (*fn)(struct sys_if_arg *),
			struct sys_if_arg *arg)
{
	struct stat self, target;
	int self_fd, fd, err;

	if (!path)
		return fn(arg);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	self_fd = open(PF_SELF_NETNS, O_RDONLY | O_CLOEXEC);
	if (self_fd < 0 || fstat(fd, &target) || fstat(self_fd, &self)) {
		err = -errno;
		goto out;
	}
	/* Our own namespace: no need for setns() and CAP_SYS_ADMIN. */
	if (target.st_dev == self.st_dev && target.st_ino == self.st_ino) {
		err = fn(arg);
		goto out;
	}
	if (setns(fd, CLONE_NEWNET)) {
		err = -errno;
		goto out;
	}
	err = fn(arg);
	if (setns(self_fd, CLONE_NEWNET)) {
		fprintf(stderr, "pktfilt: cannot return from netns %s: %s\n",
			path, strerror(errno));
		exit(1);
	}
out:
	if (self_fd >= 0)
		close(self_fd);
	close(fd);
	return err;
}

static int sys_ifindex(const char *name, const char *netns_path, __u32 *idx)
{
	struct sys_if_arg a = { .name = name };
	int err = sys_in_netns(netns_path, sys_if_by_name, &a);

	if (!err)
		*idx = a.index;
	return err;
}

static int sys_ifname(__u32 idx, const char *netns_path, char *buf,
		      size_t len)
{
	struct sys_if_arg a = { .index = idx, .buf = buf, .len = len };

	return sys_in_netns(netns_path, sys_if_by_index, &a);
}

const struct pf_resolver pf_system_resolver = {
	.netns_ino	= sys_netns_ino,
	.netns_path	= sys_netns_path,
	.ifindex	= sys_ifindex,
	.ifname		= sys_ifname,
};
