// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the command-line predicate parser, tool/parse.c: every
 * flag with good and bad values, the exact messages users see, and that
 * whatever the parser accepts the module's own check accepts too.
 *
 * Interface and namespace lookups go through a fake resolver with a fixed
 * little world:
 *   our netns  inode 4026531840, at /proc/self/ns/net: lo 1, eth0 2
 *   blue       inode 4026532001, at /run/netns/blue: lo 1, veth0 7
 *   red        inode 4026532002, at /run/netns/red: cannot be entered
 *   inode 4026532003: a namespace no file names
 *   /etc/passwd: not a namespace; /root/secret: permission denied
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "parse.h"

#define SELF_INO	4026531840u
#define BLUE_INO	4026532001u
#define RED_INO		4026532002u
#define LOST_INO	4026532003u

/* What the last ifindex lookup was asked: where did we look? */
static char last_lookup_path[64];
static int lookups;

static int fake_netns_ino(const char *path, __u32 *ino)
{
	if (!strcmp(path, "/run/netns/blue"))
		*ino = BLUE_INO;
	else if (!strcmp(path, "/run/netns/red"))
		*ino = RED_INO;
	else if (!strcmp(path, "/proc/self/ns/net"))
		*ino = SELF_INO;
	else if (!strcmp(path, "/etc/passwd"))
		return -EINVAL;
	else if (!strcmp(path, "/root/secret"))
		return -EACCES;
	else
		return -ENOENT;
	return 0;
}

static int fake_netns_path(__u32 ino, char *buf, size_t len)
{
	const char *p;

	if (ino == SELF_INO)
		p = "/proc/self/ns/net";
	else if (ino == BLUE_INO)
		p = "/run/netns/blue";
	else if (ino == RED_INO)
		p = "/run/netns/red";
	else
		return -ENOENT;
	snprintf(buf, len, "%s", p);
	return 0;
}

struct fake_if {
	const char *netns;	/* NULL: ours */
	const char *name;
	__u32 index;
};

static const struct fake_if fake_ifs[] = {
	{ NULL, "lo", 1 },
	{ NULL, "eth0", 2 },
	{ "/run/netns/blue", "lo", 1 },
	{ "/run/netns/blue", "veth0", 7 },
};

static int fake_where(const char **path)
{
	if (*path && !strcmp(*path, "/run/netns/red"))
		return -EPERM;			/* setns() refused */
	if (*path && !strcmp(*path, "/proc/self/ns/net"))
		*path = NULL;
	return 0;
}

static int same_ns(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int fake_ifindex(const char *name, const char *path, __u32 *idx)
{
	size_t i;
	int err;

	lookups++;
	snprintf(last_lookup_path, sizeof(last_lookup_path), "%s",
		 path ? path : "(ours)");
	err = fake_where(&path);
	if (err)
		return err;
	for (i = 0; i < ARRAY_SIZE(fake_ifs); i++) {
		if (same_ns(fake_ifs[i].netns, path) &&
		    !strcmp(fake_ifs[i].name, name)) {
			*idx = fake_ifs[i].index;
			return 0;
		}
	}
	return -ENODEV;
}

static int fake_ifname(__u32 idx, const char *path, char *buf, size_t len)
{
	size_t i;
	int err = fake_where(&path);

	if (err)
		return err;
	for (i = 0; i < ARRAY_SIZE(fake_ifs); i++) {
		if (same_ns(fake_ifs[i].netns, path) &&
		    fake_ifs[i].index == idx) {
			snprintf(buf, len, "%s", fake_ifs[i].name);
			return 0;
		}
	}
	return -ENODEV;
}

static const struct pf_resolver fake = {
	.netns_ino	= fake_netns_ino,
	.netns_path	= fake_netns_path,
	.ifindex	= fake_ifindex,
	.ifname		= fake_ifname,
};

static char err[256];

/* Parse a NULL-terminated list of arguments with the fake resolver. */
static enum pf_parse_status parsev(struct pf_filter *f, const char **args)
{
	int argc = 0;

	while (args[argc])
		argc++;
	err[0] = '\0';
	lookups = 0;
	last_lookup_path[0] = '\0';
	return pf_parse_filter(argc, (char *const *)args, f, &fake, err,
			       sizeof(err));
}

#define PARSE(f, ...) parsev(f, (const char *[]){ __VA_ARGS__, NULL })

/*
 * Expect success, and that the module's own check agrees: the tool must
 * never send what pf_spec_valid() refuses.
 */
#define OK(f, ...) do { \
	EXPECT_EQ(PF_PARSE_OK, PARSE(f, __VA_ARGS__)) { \
		TH_LOG("error: %s", err); \
	} \
	EXPECT_EQ(1, pf_spec_valid(&(f)->spec)); \
} while (0)

/* Expect failure of kind @st with exactly @msg. */
#define FAIL(st, msg, ...) do { \
	struct pf_filter __f; \
	EXPECT_EQ(st, PARSE(&__f, __VA_ARGS__)); \
	EXPECT_STREQ(msg, err); \
} while (0)

#define BAD(msg, ...)	FAIL(PF_PARSE_INVALID, msg, __VA_ARGS__)

static void addr(__u8 *out, const char *s)
{
	memset(out, 0, 16);
	inet_pton(strchr(s, ':') ? AF_INET6 : AF_INET, s, out);
}

/* The examples of the specification, word for word. */
TEST(documented_messages)
{
	BAD("--dport 70000: port out of range 0-65535", "--dport", "70000");
	BAD("--saddr 10.0.0.1/33: prefix length must be 0-32 for IPv4",
	    "--saddr", "10.0.0.1/33");
	BAD("--proto bogus: unknown protocol (tcp, udp, icmp, icmpv6)",
	    "--proto", "bogus");
	/* The same words for the --opt=value form. */
	BAD("--dport 70000: port out of range 0-65535", "--dport=70000");
	BAD("--saddr 10.0.0.1/33: prefix length must be 0-32 for IPv4",
	    "--saddr=10.0.0.1/33");
	BAD("--proto bogus: unknown protocol (tcp, udp, icmp, icmpv6)",
	    "--proto=bogus");
}

TEST(no_arguments_is_match_all_count_1)
{
	struct pf_filter f, zero;

	EXPECT_EQ(PF_PARSE_OK, parsev(&f, (const char *[]){ NULL }));
	memset(&zero, 0, sizeof(zero));
	EXPECT_EQ(0, memcmp(&zero.spec, &f.spec, sizeof(f.spec)));
	EXPECT_EQ(1, f.count);
	EXPECT_EQ(0, f.flags);
}

TEST(proto)
{
	struct pf_filter f;

	OK(&f, "--proto", "tcp");
	EXPECT_EQ(6, f.spec.proto);
	OK(&f, "--proto", "udp");
	EXPECT_EQ(17, f.spec.proto);
	OK(&f, "--proto", "icmp");
	EXPECT_EQ(1, f.spec.proto);
	OK(&f, "--proto", "icmpv6");
	EXPECT_EQ(58, f.spec.proto);
	OK(&f, "--proto=icmpv6");
	EXPECT_EQ(58, f.spec.proto);
	BAD("--proto TCP: unknown protocol (tcp, udp, icmp, icmpv6)",
	    "--proto", "TCP");
	BAD("--proto 6: unknown protocol (tcp, udp, icmp, icmpv6)",
	    "--proto", "6");
	BAD("--proto ipv6-icmp: unknown protocol (tcp, udp, icmp, icmpv6)",
	    "--proto", "ipv6-icmp");
}

TEST(saddr_ipv4)
{
	struct pf_filter f;
	__u8 a[16];

	OK(&f, "--saddr", "192.0.2.1");
	EXPECT_EQ(PF_FAMILY_IPV4, f.spec.saddr.family);
	EXPECT_EQ(32, f.spec.saddr.plen);
	addr(a, "192.0.2.1");
	EXPECT_EQ(0, memcmp(a, f.spec.saddr.addr, 16));
	/* Network order, as the UAPI wants: first byte first. */
	EXPECT_EQ(192, f.spec.saddr.addr[0]);
	EXPECT_EQ(1, f.spec.saddr.addr[3]);
	EXPECT_EQ(0, f.spec.daddr.family);

	OK(&f, "--saddr", "10.0.0.0/8");
	EXPECT_EQ(8, f.spec.saddr.plen);
	OK(&f, "--saddr", "0.0.0.0/0");
	EXPECT_EQ(PF_FAMILY_IPV4, f.spec.saddr.family);
	EXPECT_EQ(0, f.spec.saddr.plen);
	OK(&f, "--saddr", "10.0.0.1/32");
	EXPECT_EQ(32, f.spec.saddr.plen);
	OK(&f, "--saddr", "10.0.0.1/08");	/* decimal, not octal */
	EXPECT_EQ(8, f.spec.saddr.plen);
	OK(&f, "--saddr", "10.1.2.3/8");	/* host bits: allowed */
	EXPECT_EQ(3, f.spec.saddr.addr[3]);
}

TEST(saddr_ipv6)
{
	struct pf_filter f;
	__u8 a[16];

	OK(&f, "--saddr", "2001:db8::1");
	EXPECT_EQ(PF_FAMILY_IPV6, f.spec.saddr.family);
	EXPECT_EQ(128, f.spec.saddr.plen);
	addr(a, "2001:db8::1");
	EXPECT_EQ(0, memcmp(a, f.spec.saddr.addr, 16));
	OK(&f, "--saddr", "2001:db8::/32");
	EXPECT_EQ(32, f.spec.saddr.plen);
	OK(&f, "--saddr", "::/0");
	EXPECT_EQ(PF_FAMILY_IPV6, f.spec.saddr.family);
	EXPECT_EQ(0, f.spec.saddr.plen);
	OK(&f, "--saddr", "::ffff:10.0.0.1/127");
	EXPECT_EQ(PF_FAMILY_IPV6, f.spec.saddr.family);
	EXPECT_EQ(127, f.spec.saddr.plen);
}

TEST(bad_addresses)
{
	BAD("--saddr ::1/129: prefix length must be 0-128 for IPv6",
	    "--saddr", "::1/129");
	BAD("--daddr 10.0.0.1/33: prefix length must be 0-32 for IPv4",
	    "--daddr", "10.0.0.1/33");
	BAD("--saddr 10.0.0.1/: prefix length must be 0-32 for IPv4",
	    "--saddr", "10.0.0.1/");
	BAD("--saddr 10.0.0.1/-1: prefix length must be 0-32 for IPv4",
	    "--saddr", "10.0.0.1/-1");
	BAD("--saddr 10.0.0.1/+8: prefix length must be 0-32 for IPv4",
	    "--saddr", "10.0.0.1/+8");
	BAD("--saddr 10.0.0.1/ 8: prefix length must be 0-32 for IPv4",
	    "--saddr", "10.0.0.1/ 8");
	BAD("--saddr 10.0.0.1/0x8: prefix length must be 0-32 for IPv4",
	    "--saddr", "10.0.0.1/0x8");
	BAD("--saddr ::/99999999999999999999: prefix length must be 0-128 for IPv6",
	    "--saddr", "::/99999999999999999999");
	BAD("--saddr 10.0.0: not an IPv4 or IPv6 address (ADDR[/LEN])",
	    "--saddr", "10.0.0");
	BAD("--saddr 10.0.0.256: not an IPv4 or IPv6 address (ADDR[/LEN])",
	    "--saddr", "10.0.0.256");
	BAD("--saddr 1.2.3.4.5: not an IPv4 or IPv6 address (ADDR[/LEN])",
	    "--saddr", "1.2.3.4.5");
	BAD("--daddr example.com: not an IPv4 or IPv6 address (ADDR[/LEN])",
	    "--daddr", "example.com");
	BAD("--daddr fe80::1%eth0: not an IPv4 or IPv6 address (ADDR[/LEN])",
	    "--daddr", "fe80::1%eth0");
	BAD("--daddr 2001:db8:::1: not an IPv4 or IPv6 address (ADDR[/LEN])",
	    "--daddr", "2001:db8:::1");
	BAD("--daddr /24: not an IPv4 or IPv6 address (ADDR[/LEN])",
	    "--daddr", "/24");
	BAD("--daddr 1111:2222:3333:4444:5555:6666:7777:8888:9999: not an IPv4 or IPv6 address (ADDR[/LEN])",
	    "--daddr", "1111:2222:3333:4444:5555:6666:7777:8888:9999");
}

TEST(daddr_and_families)
{
	struct pf_filter f;

	OK(&f, "--saddr", "10.0.0.1", "--daddr", "10.0.0.2/31");
	EXPECT_EQ(PF_FAMILY_IPV4, f.spec.daddr.family);
	EXPECT_EQ(31, f.spec.daddr.plen);
	EXPECT_EQ(2, f.spec.daddr.addr[3]);
	OK(&f, "--daddr", "2001:db8::2", "--saddr", "2001:db8::1");
	EXPECT_EQ(PF_FAMILY_IPV6, f.spec.daddr.family);
	BAD("--saddr 10.0.0.1, --daddr ::1: one is IPv4, the other IPv6: no packet could match",
	    "--saddr", "10.0.0.1", "--daddr", "::1");
	BAD("--saddr ::/0, --daddr 0.0.0.0/0: one is IPv4, the other IPv6: no packet could match",
	    "--daddr=0.0.0.0/0", "--saddr=::/0");
}

TEST(icmp_and_families)
{
	struct pf_filter f;

	OK(&f, "--proto", "icmp", "--saddr", "10.0.0.1");
	OK(&f, "--proto", "icmpv6", "--daddr", "2001:db8::/64");
	OK(&f, "--proto", "tcp", "--daddr", "2001:db8::/64");
	OK(&f, "--proto", "udp", "--daddr", "10.0.0.0/8");
	BAD("--proto icmp: ICMP is IPv4 only, 2001:db8::1 is IPv6 (use --proto icmpv6)",
	    "--proto", "icmp", "--saddr", "2001:db8::1");
	BAD("--proto icmp: ICMP is IPv4 only, ::/0 is IPv6 (use --proto icmpv6)",
	    "--daddr", "::/0", "--proto", "icmp");
	BAD("--proto icmpv6: ICMPv6 is IPv6 only, 10.0.0.1 is IPv4 (use --proto icmp)",
	    "--proto", "icmpv6", "--daddr", "10.0.0.1");
	BAD("--proto icmpv6: ICMPv6 is IPv6 only, 0.0.0.0/0 is IPv4 (use --proto icmp)",
	    "--saddr=0.0.0.0/0", "--proto=icmpv6");
}

TEST(ports)
{
	struct pf_filter f;

	OK(&f, "--dport", "80");
	EXPECT_EQ(1, f.spec.dport.set);
	EXPECT_EQ(80, f.spec.dport.min);
	EXPECT_EQ(80, f.spec.dport.max);
	EXPECT_EQ(0, f.spec.sport.set);
	OK(&f, "--sport", "1000-2000");
	EXPECT_EQ(1, f.spec.sport.set);
	EXPECT_EQ(1000, f.spec.sport.min);
	EXPECT_EQ(2000, f.spec.sport.max);
	OK(&f, "--sport", "0");
	EXPECT_EQ(1, f.spec.sport.set);
	EXPECT_EQ(0, f.spec.sport.max);
	OK(&f, "--dport", "65535");
	EXPECT_EQ(65535, f.spec.dport.min);
	OK(&f, "--dport", "0-65535");
	EXPECT_EQ(0, f.spec.dport.min);
	EXPECT_EQ(65535, f.spec.dport.max);
	OK(&f, "--dport", "443-443");
	EXPECT_EQ(443, f.spec.dport.min);
	EXPECT_EQ(443, f.spec.dport.max);
	OK(&f, "--dport", "0080");
	EXPECT_EQ(80, f.spec.dport.min);
	OK(&f, "--dport", "000000000000000000080-0000000000000000000090");
	EXPECT_EQ(80, f.spec.dport.min);
	EXPECT_EQ(90, f.spec.dport.max);
	OK(&f, "--proto", "tcp", "--sport", "1", "--dport", "2");
	OK(&f, "--proto", "udp", "--sport", "1", "--dport", "2");
}

TEST(bad_ports)
{
	BAD("--sport 65536: port out of range 0-65535", "--sport", "65536");
	BAD("--sport 99999999999999999999999: port out of range 0-65535",
	    "--sport", "99999999999999999999999");
	BAD("--dport 1-70000: port out of range 0-65535", "--dport", "1-70000");
	BAD("--dport 90-80: range start is greater than its end",
	    "--dport", "90-80");
	BAD("--sport 65535-0: range start is greater than its end",
	    "--sport", "65535-0");
	BAD("--dport -1: not a port or port range (P or P-P)", "--dport", "-1");
	BAD("--dport 80-: not a port or port range (P or P-P)",
	    "--dport", "80-");
	BAD("--dport 1-2-3: not a port or port range (P or P-P)",
	    "--dport", "1-2-3");
	BAD("--dport http: not a port or port range (P or P-P)",
	    "--dport", "http");
	BAD("--dport 0x50: not a port or port range (P or P-P)",
	    "--dport", "0x50");
	BAD("--dport  80: not a port or port range (P or P-P)",
	    "--dport", " 80");
	BAD("--dport 80,443: not a port or port range (P or P-P)",
	    "--dport", "80,443");
	BAD("--dport +80: not a port or port range (P or P-P)",
	    "--dport", "+80");
	BAD("--sport 1e3: not a port or port range (P or P-P)",
	    "--sport", "1e3");
}

TEST(ports_and_icmp)
{
	BAD("--dport 80: --proto icmp packets have no ports",
	    "--proto", "icmp", "--dport", "80");
	BAD("--sport 0-65535: --proto icmpv6 packets have no ports",
	    "--sport", "0-65535", "--proto", "icmpv6");
	BAD("--sport 1: --proto icmp packets have no ports",
	    "--sport", "1", "--dport", "2", "--proto", "icmp");
}

TEST(dev_in_our_netns)
{
	struct pf_filter f;

	OK(&f, "--dev", "eth0");
	EXPECT_EQ(2, f.spec.ifindex);
	EXPECT_STREQ("(ours)", last_lookup_path);
	/* An index is per namespace: ours is added. */
	EXPECT_EQ(SELF_INO, f.spec.netns);
	OK(&f, "--dev=lo");
	EXPECT_EQ(1, f.spec.ifindex);
	EXPECT_EQ(SELF_INO, f.spec.netns);
	BAD("--dev veth0: no such interface", "--dev", "veth0");
	BAD("--dev 0123456789abcdef: interface names are at most 15 characters",
	    "--dev", "0123456789abcdef");
	BAD("--dev a/b: not a valid interface name", "--dev", "a/b");
	BAD("--dev a b: not a valid interface name", "--dev", "a b");
	/* 15 characters is fine; it just does not exist here. */
	BAD("--dev 0123456789abcde: no such interface",
	    "--dev", "0123456789abcde");
}

/* The name is looked up inside --netns, wherever --netns comes. */
TEST(dev_in_other_netns)
{
	struct pf_filter f;

	OK(&f, "--netns", "/run/netns/blue", "--dev", "veth0");
	EXPECT_EQ(7, f.spec.ifindex);
	EXPECT_EQ(BLUE_INO, f.spec.netns);
	EXPECT_STREQ("/run/netns/blue", last_lookup_path);
	OK(&f, "--dev", "veth0", "--netns", "/run/netns/blue");
	EXPECT_EQ(7, f.spec.ifindex);
	EXPECT_STREQ("/run/netns/blue", last_lookup_path);
	/* lo is 1 everywhere: the netns predicate tells them apart. */
	OK(&f, "--dev=lo", "--netns=/run/netns/blue");
	EXPECT_EQ(1, f.spec.ifindex);
	EXPECT_EQ(BLUE_INO, f.spec.netns);
	BAD("--dev eth0: no such interface in netns /run/netns/blue",
	    "--netns", "/run/netns/blue", "--dev", "eth0");
	/* An inode number: found through the file that names it. */
	OK(&f, "--netns", "4026532001", "--dev", "veth0");
	EXPECT_EQ(7, f.spec.ifindex);
	EXPECT_STREQ("/run/netns/blue", last_lookup_path);
	OK(&f, "--netns", "4026531840", "--dev", "eth0");
	EXPECT_EQ(2, f.spec.ifindex);
	EXPECT_EQ(SELF_INO, f.spec.netns);
	BAD("--dev lo: cannot look up a name in netns 4026532003: no file names that namespace; give --netns as a path, or use --ifindex",
	    "--netns", "4026532003", "--dev", "lo");
	/* Cannot enter: not the user's typo, a runtime failure. */
	FAIL(PF_PARSE_SYSTEM,
	     "--dev lo: entering netns /run/netns/red: Operation not permitted",
	     "--netns", "/run/netns/red", "--dev", "lo");
}

TEST(ifindex)
{
	struct pf_filter f;

	OK(&f, "--ifindex", "5");
	EXPECT_EQ(5, f.spec.ifindex);
	EXPECT_EQ(0, lookups);
	EXPECT_EQ(0, f.spec.netns);		/* said as is: any netns */
	OK(&f, "--ifindex=4294967295", "--netns=4026532003");
	EXPECT_EQ(4294967295u, f.spec.ifindex);
	BAD("--ifindex 0: interface index must be 1-4294967295",
	    "--ifindex", "0");
	BAD("--ifindex 4294967296: interface index must be 1-4294967295",
	    "--ifindex", "4294967296");
	BAD("--ifindex eth0: interface index must be 1-4294967295",
	    "--ifindex", "eth0");
	BAD("--dev and --ifindex name the same predicate: give one",
	    "--dev", "eth0", "--ifindex", "2");
}

TEST(netns_number_vs_path)
{
	struct pf_filter f;

	/* A number is used as it is: no file is consulted. */
	OK(&f, "--netns", "4026532003");
	EXPECT_EQ(LOST_INO, f.spec.netns);
	EXPECT_EQ(0, lookups);
	OK(&f, "--netns", "1");
	EXPECT_EQ(1, f.spec.netns);
	OK(&f, "--netns", "4294967295");
	EXPECT_EQ(4294967295u, f.spec.netns);
	/* A path is stat()ed by the resolver for its inode. */
	OK(&f, "--netns", "/run/netns/blue");
	EXPECT_EQ(BLUE_INO, f.spec.netns);
	OK(&f, "--netns=/proc/self/ns/net");
	EXPECT_EQ(SELF_INO, f.spec.netns);
	EXPECT_EQ(0, f.spec.ifindex);

	BAD("--netns 0: namespace inode number must be 1-4294967295",
	    "--netns", "0");
	BAD("--netns 4294967296: namespace inode number must be 1-4294967295",
	    "--netns", "4294967296");
	BAD("--netns 12ab: namespace inode number must be 1-4294967295",
	    "--netns", "12ab");
	BAD("--netns /etc/passwd: not a network namespace",
	    "--netns", "/etc/passwd");
	BAD("--netns /run/netns/green: No such file or directory",
	    "--netns", "/run/netns/green");
	BAD("--netns green: No such file or directory", "--netns", "green");
	FAIL(PF_PARSE_SYSTEM, "--netns /root/secret: Permission denied",
	     "--netns", "/root/secret");
}

TEST(mark)
{
	struct pf_filter f;

	OK(&f, "--mark", "5");
	EXPECT_EQ(1, f.spec.has_mark);
	EXPECT_EQ(5, f.spec.mark);
	EXPECT_EQ(0xffffffffu, f.spec.mark_mask);
	OK(&f, "--mark", "0x10/0xff");
	EXPECT_EQ(0x10, f.spec.mark);
	EXPECT_EQ(0xff, f.spec.mark_mask);
	OK(&f, "--mark", "0XABCDEF01/0Xffff0000");
	EXPECT_EQ(0xabcdef01u, f.spec.mark);
	EXPECT_EQ(0xffff0000u, f.spec.mark_mask);
	OK(&f, "--mark", "4294967295/255");
	EXPECT_EQ(0xffffffffu, f.spec.mark);
	EXPECT_EQ(255, f.spec.mark_mask);
	OK(&f, "--mark", "010");			/* ten */
	EXPECT_EQ(10, f.spec.mark);
	OK(&f, "--mark", "00000000000000000000001/0x000000000000ff");
	EXPECT_EQ(1, f.spec.mark);
	EXPECT_EQ(0xff, f.spec.mark_mask);
	OK(&f, "--mark", "0");
	EXPECT_EQ(1, f.spec.has_mark);
	EXPECT_EQ(0, f.spec.mark);
	OK(&f, "--mark=0x0/0x0");
	EXPECT_EQ(0, f.spec.mark_mask);
	OK(&f, "--proto", "tcp");
	EXPECT_EQ(0, f.spec.has_mark);

	BAD("--mark 4294967296: mark must be a 32-bit number, decimal or 0x hex",
	    "--mark", "4294967296");
	BAD("--mark 0x100000000: mark must be a 32-bit number, decimal or 0x hex",
	    "--mark", "0x100000000");
	BAD("--mark 0x: mark must be a 32-bit number, decimal or 0x hex",
	    "--mark", "0x");
	BAD("--mark -1: mark must be a 32-bit number, decimal or 0x hex",
	    "--mark", "-1");
	BAD("--mark 0x1g: mark must be a 32-bit number, decimal or 0x hex",
	    "--mark", "0x1g");
	BAD("--mark /0xff: mark must be a 32-bit number, decimal or 0x hex",
	    "--mark", "/0xff");
	BAD("--mark 1/: mask must be a 32-bit number, decimal or 0x hex",
	    "--mark", "1/");
	BAD("--mark 1/0x1ffffffff: mask must be a 32-bit number, decimal or 0x hex",
	    "--mark", "1/0x1ffffffff");
	BAD("--mark 1/2/3: mask must be a 32-bit number, decimal or 0x hex",
	    "--mark", "1/2/3");
}

TEST(count)
{
	struct pf_filter f;

	OK(&f, "--proto", "udp");
	EXPECT_EQ(1, f.count);			/* the default */
	OK(&f, "--count", "0");
	EXPECT_EQ(0, f.count);			/* no limit */
	OK(&f, "--count", "5");
	EXPECT_EQ(5, f.count);
	OK(&f, "--count=4294967295");
	EXPECT_EQ(4294967295u, f.count);
	BAD("--count 4294967296: count must be a number 0-4294967295 (0: no limit)",
	    "--count", "4294967296");
	BAD("--count -1: count must be a number 0-4294967295 (0: no limit)",
	    "--count", "-1");
	BAD("--count 1.5: count must be a number 0-4294967295 (0: no limit)",
	    "--count", "1.5");
	BAD("--count 0x10: count must be a number 0-4294967295 (0: no limit)",
	    "--count", "0x10");
	BAD("--count many: count must be a number 0-4294967295 (0: no limit)",
	    "--count", "many");
}

/* Version 6: --snaplen, sent only if given; refused for older modules. */
TEST(snaplen)
{
	struct pf_filter f;
	char buf[256];

	OK(&f, "--proto", "udp");
	EXPECT_FALSE(f.snaplen_set);
	OK(&f, "--snaplen", "0");
	EXPECT_TRUE(f.snaplen_set);
	EXPECT_EQ(0, f.snaplen);
	OK(&f, "--snaplen=1500");
	EXPECT_EQ(1500, f.snaplen);
	pf_format_filter(&f, NULL, buf, sizeof(buf));
	EXPECT_NE(NULL, strstr(buf, " --snaplen 1500"));
	BAD("--snaplen 1501: a number of bytes, 0-1500", "--snaplen", "1501");
	BAD("--snaplen -1: a number of bytes, 0-1500", "--snaplen", "-1");
	BAD("--snaplen x: a number of bytes, 0-1500", "--snaplen", "x");
	OK(&f, "--snaplen", "64");
	EXPECT_EQ(PF_COMPAT_FAIL, pf_stages_compat(&f, 5, PF_TRACE_DEFAULT_STAGES,
						   buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "version 5: its events carry no packet bytes"));
	EXPECT_EQ(PF_COMPAT_OK, pf_stages_compat(&f, 6, PF_TRACE_DEFAULT_STAGES,
						 buf, sizeof(buf)));
}

TEST(at_stages)
{
	struct pf_filter f;
	char buf[64];

	OK(&f, "--proto", "udp");
	EXPECT_EQ(0, f.stages);			/* not given: the caller's default */
	OK(&f, "--at", "rx");
	EXPECT_EQ(1U << PKTFILT_STAGE_RX, f.stages);
	OK(&f, "--at=l4");
	EXPECT_EQ(1U << PKTFILT_STAGE_L4, f.stages);
	OK(&f, "--at", "tx,rx,l4");
	EXPECT_EQ(PKTFILT_STAGES_ALL, f.stages);
	OK(&f, "--at", "tx,rx", "--proto", "icmp");
	EXPECT_EQ((1U << PKTFILT_STAGE_RX) | (1U << PKTFILT_STAGE_TX),
		  f.stages);
	EXPECT_EQ(5, pf_format_stages(f.stages, buf, sizeof(buf)));
	EXPECT_STREQ("rx,tx", buf);

	BAD("--at rx,foo: unknown stage 'foo' (l4, rx, tx)", "--at", "rx,foo");
	BAD("--at RX: unknown stage 'RX' (l4, rx, tx)", "--at", "RX");
	BAD("--at rx,tx,rx: stage 'rx' given twice", "--at", "rx,tx,rx");
	BAD("--at rx,: an empty stage (l4, rx, tx, comma-separated)",
	    "--at", "rx,");
	BAD("--at ,tx: an empty stage (l4, rx, tx, comma-separated)",
	    "--at=,tx");
	BAD("--at rx,,tx: an empty stage (l4, rx, tx, comma-separated)",
	    "--at", "rx,,tx");
	BAD("--at rx tx: unknown stage 'rx tx' (l4, rx, tx)", "--at", "rx tx");
	BAD("--at given twice", "--at", "rx", "--at", "tx");
	FAIL(PF_PARSE_SYNTAX, "--at: empty value", "--at", "");
	FAIL(PF_PARSE_SYNTAX, "--at: missing value", "--at");
}

/* The loaded module's version against --at. */
TEST(at_and_module_version)
{
	struct pf_filter f;
	char msg[512];

	/* Ours: trace's default is rx, sent. */
	OK(&f, "--proto", "tcp");
	EXPECT_EQ(PF_COMPAT_OK, pf_stages_compat(&f, 2, PF_TRACE_DEFAULT_STAGES,
						 msg, sizeof(msg)));
	EXPECT_EQ(1U << PKTFILT_STAGE_RX, f.stages);
	EXPECT_STREQ("", msg);
	/* set's is l4, sent too. */
	OK(&f, "--proto", "tcp");
	EXPECT_EQ(PF_COMPAT_OK, pf_stages_compat(&f, 2, PF_SET_DEFAULT_STAGES,
						 msg, sizeof(msg)));
	EXPECT_EQ(1U << PKTFILT_STAGE_L4, f.stages);
	/* set's default to a version 1 module: l4 anyway, nothing said. */
	OK(&f, "--proto", "tcp");
	EXPECT_EQ(PF_COMPAT_OK, pf_stages_compat(&f, 1, PF_SET_DEFAULT_STAGES,
						 msg, sizeof(msg)));
	EXPECT_EQ(0, f.stages);
	EXPECT_STREQ("", msg);
	/* Unknown (0): taken as ours. */
	OK(&f, "--at", "tx");
	EXPECT_EQ(PF_COMPAT_OK, pf_stages_compat(&f, 0, PF_TRACE_DEFAULT_STAGES, msg, sizeof(msg)));
	EXPECT_EQ(1U << PKTFILT_STAGE_TX, f.stages);

	/* Version 1, no --at: l4, said once, nothing sent. */
	OK(&f, "--proto", "tcp");
	EXPECT_EQ(PF_COMPAT_NOTE, pf_stages_compat(&f, 1, PF_TRACE_DEFAULT_STAGES, msg, sizeof(msg)));
	EXPECT_EQ(0, f.stages);
	EXPECT_NE(NULL, strstr(msg, "version 1"));
	EXPECT_NE(NULL, strstr(msg, "--at l4"));
	/* Version 1, --at l4: fine, and nothing sent. */
	OK(&f, "--at", "l4");
	EXPECT_EQ(PF_COMPAT_OK, pf_stages_compat(&f, 1, PF_TRACE_DEFAULT_STAGES, msg, sizeof(msg)));
	EXPECT_EQ(0, f.stages);
	/* Version 1, another stage asked for: refused, with what to do. */
	OK(&f, "--at", "l4,rx");
	EXPECT_EQ(PF_COMPAT_FAIL, pf_stages_compat(&f, 1, PF_TRACE_DEFAULT_STAGES, msg, sizeof(msg)));
	EXPECT_STREQ("--at l4,rx: the loaded pktfilt.ko speaks version 1: it traces only --at l4; load this release's module (rmmod pktfilt; insmod pktfilt.ko) or give --at l4",
		     msg);

	/* A newer module: a warning, and on. */
	OK(&f, "--at", "rx");
	EXPECT_EQ(PF_COMPAT_WARN, pf_stages_compat(&f, PKTFILT_GENL_VERSION + 1, PF_TRACE_DEFAULT_STAGES, msg, sizeof(msg)));
	EXPECT_EQ(1U << PKTFILT_STAGE_RX, f.stages);
	EXPECT_NE(NULL, strstr(msg, "older than the module"));
}

TEST(syntax_errors)
{
	FAIL(PF_PARSE_SYNTAX, "unknown option '--foo'", "--foo");
	FAIL(PF_PARSE_SYNTAX, "unknown option '--foo=1'", "--foo=1");
	FAIL(PF_PARSE_SYNTAX, "unknown option '-p'", "-p", "tcp");
	FAIL(PF_PARSE_SYNTAX, "unknown option '--proto-'", "--proto-", "tcp");
	FAIL(PF_PARSE_SYNTAX, "unknown option '--PROTO'", "--PROTO", "tcp");
	/* A word that is not an option is the filter expression's. */
	BAD("filter expression 'extra': can't parse filter expression: syntax error",
	    "--proto", "tcp", "extra");
	BAD("filter expression '-': can't parse filter expression: syntax error",
	    "-");
	FAIL(PF_PARSE_SYNTAX,
	     "an empty argument: a filter expression is words of pcap-filter(7)",
	     "--proto", "tcp", "");
	FAIL(PF_PARSE_SYNTAX, "--dport: missing value", "--dport");
	FAIL(PF_PARSE_SYNTAX, "--count: missing value", "--proto", "tcp",
	     "--count");
	FAIL(PF_PARSE_SYNTAX, "--dport: empty value", "--dport=");
	FAIL(PF_PARSE_SYNTAX, "--saddr: empty value", "--saddr", "");
	BAD("--proto given twice", "--proto", "tcp", "--proto", "udp");
	BAD("--count given twice", "--count=1", "--count", "1");
	BAD("--dport given twice", "--dport", "1", "--dport=2");
	/* A value that looks like an option is still the value. */
	BAD("--dport --proto: not a port or port range (P or P-P)",
	    "--dport", "--proto", "tcp");
}

/* Every option, both forms, same result. */
TEST(equals_form_is_the_same)
{
	static const char *const pairs[][2] = {
		{ "--proto", "udp" },
		{ "--saddr", "10.0.0.0/24" },
		{ "--daddr", "2001:db8::/48" },
		{ "--sport", "1-2" },
		{ "--dport", "53" },
		{ "--dev", "eth0" },
		{ "--ifindex", "9" },
		{ "--netns", "/run/netns/blue" },
		{ "--mark", "0x1/0x3" },
		{ "--count", "7" },
		{ "--at", "rx,tx" },
	};
	struct pf_filter a, b;
	char joined[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pairs); i++) {
		snprintf(joined, sizeof(joined), "%s=%s", pairs[i][0],
			 pairs[i][1]);
		OK(&a, pairs[i][0], pairs[i][1]);
		OK(&b, joined);
		EXPECT_EQ(0, memcmp(&a, &b, sizeof(a))) {
			TH_LOG("%s differs", joined);
		}
	}
	/* "=" inside the value belongs to the value. */
	BAD("--dev a=b: no such interface", "--dev=a=b");
}

TEST(all_together)
{
	struct pf_filter f;

	OK(&f, "--proto", "tcp", "--saddr=192.0.2.0/24",
	   "--daddr", "198.51.100.1", "--sport", "1024-65535",
	   "--dport=443", "--netns", "/run/netns/blue", "--dev", "veth0",
	   "--mark", "0x2/0x2", "--count", "3");
	EXPECT_EQ(6, f.spec.proto);
	EXPECT_EQ(24, f.spec.saddr.plen);
	EXPECT_EQ(32, f.spec.daddr.plen);
	EXPECT_EQ(1024, f.spec.sport.min);
	EXPECT_EQ(65535, f.spec.sport.max);
	EXPECT_EQ(443, f.spec.dport.min);
	EXPECT_EQ(7, f.spec.ifindex);
	EXPECT_EQ(BLUE_INO, f.spec.netns);
	EXPECT_EQ(2, f.spec.mark);
	EXPECT_EQ(2, f.spec.mark_mask);
	EXPECT_EQ(3, f.count);
}

/* The incremental API leaves options it does not know to its caller. */
/* tcpdump's language: compiled by libpcap for raw IP, run as the module does. */
TEST(filter_expressions)
{
	/* 10.1.2.3:1234 -> 10.9.0.2:443, TCP SYN, no options */
	static const unsigned char syn[40] = {
		0x45, 0, 0, 40, 0, 1, 0x40, 0, 64, 6, 0, 0,
		10, 1, 2, 3, 10, 9, 0, 2,
		0x04, 0xd2, 0x01, 0xbb, 0, 0, 0, 1, 0, 0, 0, 0,
		0x50, 0x02, 0x20, 0, 0, 0, 0, 0,
	};
	struct pf_filter f;
	char buf[2048];

	OK(&f, "tcp dst port 443 and src net 10.1.0.0/16 and tcp[tcpflags] & tcp-syn != 0");
	EXPECT_LT(0, f.bpf_len);
	EXPECT_NE(0, pf_expr_run(f.bpf, f.bpf_len, syn, sizeof(syn)));
	EXPECT_STREQ("tcp dst port 443 and src net 10.1.0.0/16 and tcp[tcpflags] & tcp-syn != 0",
		     f.expr);
	/* Words are joined, and options may come between them. */
	OK(&f, "tcp", "dst", "port", "--count", "5", "444");
	EXPECT_STREQ("tcp dst port 444", f.expr);
	EXPECT_EQ(5, f.count);
	EXPECT_EQ(0, pf_expr_run(f.bpf, f.bpf_len, syn, sizeof(syn)));
	/* ANDed with the flags: both are kept. */
	OK(&f, "--proto", "udp", "ip[8] < 5");
	EXPECT_EQ(IPPROTO_UDP, f.spec.proto);
	EXPECT_EQ(0, pf_expr_run(f.bpf, f.bpf_len, syn, sizeof(syn)));
	OK(&f, "ip6 and udp port 53");
	EXPECT_EQ(0, pf_expr_run(f.bpf, f.bpf_len, syn, sizeof(syn)));
	/* A bytes beyond the packet: no match, as in the kernel. */
	OK(&f, "ip[100] = 1");
	EXPECT_EQ(0, pf_expr_run(f.bpf, f.bpf_len, syn, sizeof(syn)));

	/* show's line: the expression as one shell word. */
	OK(&f, "--proto", "tcp", "port 80 and host 10.0.0.1");
	pf_format_filter(&f, &fake, buf, sizeof(buf));
	EXPECT_NE(NULL, strstr(buf, " 'port 80 and host 10.0.0.1'"));

	/* libpcap's message, with the expression; link-layer words said so. */
	BAD("filter expression 'udp and (port 53': can't parse filter expression: syntax error",
	    "udp and (port 53");
	FAIL(PF_PARSE_INVALID,
	     "filter expression 'vlan and udp': no VLAN support for Raw IP (pktfilt sees packets from their IP header on: 'vlan' and other link-layer words do not apply)",
	     "vlan and udp");
	{
		struct pf_filter g;

		EXPECT_EQ(PF_PARSE_INVALID, PARSE(&g, "ether host 1:2:3:4:5:6"));
		EXPECT_NE(NULL, strstr(err, "'ether' and other link-layer words"));
	}
	/*
	 * Issue 31: "ip broadcast" as tcpdump -r takes it (netmask 0: the
	 * all-ones and all-zeros addresses), no link-layer hint for IP's
	 * broadcast.
	 */
	{
		static const unsigned char bcast[28] = {
			0x45, 0, 0, 28, 0, 1, 0, 0, 64, 17, 0, 0,
			10, 1, 2, 3, 255, 255, 255, 255,
			0x04, 0xd2, 0x00, 0x43, 0, 8, 0, 0,
		};

		OK(&f, "ip broadcast");
		EXPECT_NE(0, pf_expr_run(f.bpf, f.bpf_len, bcast, sizeof(bcast)));
		EXPECT_EQ(0, pf_expr_run(f.bpf, f.bpf_len, syn, sizeof(syn)));
		OK(&f, "udp and not ip broadcast");
		EXPECT_EQ(0, pf_expr_run(f.bpf, f.bpf_len, bcast, sizeof(bcast)));
	}
	{
		struct pf_filter g;

		EXPECT_EQ(PF_PARSE_INVALID, PARSE(&g, "ip6 broadcast"));
		EXPECT_EQ(NULL, strstr(err, "do not apply"));
		EXPECT_EQ(PF_PARSE_INVALID, PARSE(&g, "broadcast"));
		EXPECT_NE(NULL, strstr(err, "'broadcast' and other link-layer words"));
	}
	/*
	 * The kernel's packet metadata (inbound matched every packet at rx):
	 * refused, with what to use instead.
	 */
	{
		static const char *const meta[] = {
			"inbound", "outbound", "udp and ifindex 3",
			"not inbound",
		};
		struct pf_filter g;
		size_t i;

		for (i = 0; i < sizeof(meta) / sizeof(meta[0]); i++) {
			EXPECT_EQ(PF_PARSE_INVALID, PARSE(&g, meta[i]));
			EXPECT_NE(NULL, strstr(err, "packet metadata"));
			EXPECT_NE(NULL, strstr(err, "--at"));
		}
	}
	/* Link-layer loads: on raw IP they would read the IP header. */
	{
		static const char *const link[] = {
			"ether[0] = 0x45", "ppp[0] = 0x45", "slip [0] = 0x45",
			"udp and link[9] = 17", "wlan[0:2] != 0",
		};
		struct pf_filter g;
		size_t i;

		for (i = 0; i < sizeof(link) / sizeof(link[0]); i++) {
			EXPECT_EQ(PF_PARSE_INVALID, PARSE(&g, link[i]));
			EXPECT_NE(NULL, strstr(err, "reads the link-layer header"));
		}
		/* Not a load: libpcap's own check of the IP version. */
		OK(&f, "ether proto \\ip");
		EXPECT_NE(0, pf_expr_run(f.bpf, f.bpf_len, syn, sizeof(syn)));
		OK(&f, "ip[0] = 0x45");
	}
	/* protochain: a loop, which the kernel's checker refuses. */
	{
		struct pf_filter g;

		EXPECT_EQ(PF_PARSE_INVALID, PARSE(&g, "ip6 protochain 17"));
		EXPECT_NE(NULL, strstr(err, "compiles to a loop"));
	}
	/* A version 1 module takes no expression: refused before sending. */
	{
		char msg[512];

		OK(&f, "udp");
		EXPECT_EQ(PF_COMPAT_FAIL,
			  pf_stages_compat(&f, 1, PF_SET_DEFAULT_STAGES, msg,
					   sizeof(msg)));
		EXPECT_NE(NULL, strstr(msg, "no filter expression"));
	}
}

TEST(incremental_parser)
{
	char *argv[] = { "--proto", "udp", "--timeout", "5", "--dport=53" };
	struct pf_filter f;
	struct pf_parser p;
	int i = 0;

	pf_parser_init(&p, &f, &fake);
	ASSERT_EQ(PF_PARSE_OK, pf_parse_arg(&p, 5, argv, &i));
	EXPECT_EQ(2, i);
	ASSERT_EQ(PF_PARSE_UNKNOWN, pf_parse_arg(&p, 5, argv, &i));
	EXPECT_EQ(2, i);
	i += 2;					/* the caller's --timeout */
	ASSERT_EQ(PF_PARSE_OK, pf_parse_arg(&p, 5, argv, &i));
	EXPECT_EQ(5, i);
	ASSERT_EQ(PF_PARSE_OK, pf_parse_finish(&p));
	EXPECT_EQ(17, f.spec.proto);
	EXPECT_EQ(53, f.spec.dport.min);
}

static void format(struct __test_metadata *_metadata, const char *want,
		   const char **args)
{
	struct pf_filter f, again;
	char buf[512], copy[512];
	const char *words[32];
	int n = 0;
	char *w, *save;

	ASSERT_EQ(PF_PARSE_OK, parsev(&f, args)) {
		TH_LOG("%s", err);
	}
	EXPECT_EQ((int)strlen(want), pf_format_filter(&f, &fake, buf,
						      sizeof(buf)));
	EXPECT_STREQ(want, buf);

	/* What "show" prints must parse back to the same filter. */
	snprintf(copy, sizeof(copy), "%s", buf);
	for (w = strtok_r(copy, " ", &save); w && n < 31;
	     w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	words[n] = NULL;
	ASSERT_EQ(PF_PARSE_OK, parsev(&again, words)) {
		TH_LOG("%s: %s", buf, err);
	}
	EXPECT_EQ(0, memcmp(&f, &again, sizeof(f))) {
		TH_LOG("%s did not round-trip", buf);
	}
}

#define FORMAT(want, ...) \
	format(_metadata, want, (const char *[]){ __VA_ARGS__, NULL })

TEST(format_round_trip)
{
	FORMAT("--count 1", "--count", "1");
	FORMAT("--count 0", "--count=0");
	FORMAT("--proto tcp --saddr 10.0.0.0/8 --dport 80-90 --count 1",
	       "--dport", "80-90", "--saddr", "10.0.0.0/8", "--proto", "tcp");
	FORMAT("--saddr 192.0.2.1 --daddr 192.0.2.2 --count 1",
	       "--daddr", "192.0.2.2/32", "--saddr", "192.0.2.1");
	FORMAT("--proto icmpv6 --saddr 2001:db8::/32 --daddr ::1 --count 2",
	       "--proto", "icmpv6", "--saddr", "2001:db8::/32",
	       "--daddr", "::1/128", "--count", "2");
	FORMAT("--saddr ::/0 --count 1", "--saddr", "::/0");
	FORMAT("--sport 0 --dport 65535 --count 1",
	       "--sport", "0-0", "--dport", "65535");
	FORMAT("--mark 0x10 --count 1", "--mark", "16");
	FORMAT("--mark 0x10/0xff --count 1", "--mark", "0x10/255");
	FORMAT("--netns 4026531840 --dev eth0 --count 1", "--dev", "eth0");
	FORMAT("--ifindex 9 --count 1", "--ifindex", "9");
	FORMAT("--proto udp --count 1 --at rx", "--at", "rx", "--proto", "udp");
	FORMAT("--count 2 --at l4,rx,tx", "--at", "tx,l4,rx", "--count", "2");
	FORMAT("--netns /run/netns/blue --dev veth0 --count 1",
	       "--dev", "veth0", "--netns", "4026532001");
	/* Our own netns prints as a number: /proc/self is the reader's. */
	FORMAT("--netns 4026531840 --dev eth0 --count 1",
	       "--netns", "/proc/self/ns/net", "--dev", "eth0");
	FORMAT("--netns 4026532003 --ifindex 4 --count 1",
	       "--netns", "4026532003", "--ifindex", "4");
	FORMAT("--netns /run/netns/red --ifindex 4 --count 1",
	       "--netns", "4026532002", "--ifindex", "4");
	FORMAT("--proto udp --saddr 10.1.2.3/9 --daddr 10.0.0.0/0 --sport 1-2 --dport 3-4 --netns /run/netns/blue --dev lo --mark 0xffffffff/0x0 --count 4294967295",
	       "--count", "4294967295", "--mark", "0xffffffff/0",
	       "--dev", "lo", "--netns", "/run/netns/blue", "--dport", "3-4",
	       "--sport", "1-2", "--daddr", "10.0.0.0/0",
	       "--saddr", "10.1.2.3/9", "--proto", "udp");
}

TEST(format_truncates_safely)
{
	struct pf_filter f;
	char buf[8];
	int n;

	ASSERT_EQ(PF_PARSE_OK, PARSE(&f, "--proto", "tcp"));
	n = pf_format_filter(&f, &fake, buf, sizeof(buf));
	EXPECT_EQ((int)strlen("--proto tcp --count 1"), n);
	EXPECT_STREQ("--proto", buf);
	EXPECT_EQ(n, pf_format_filter(&f, &fake, NULL, 0));
}

TEST(number_parsers)
{
	unsigned long v;
	__u32 u;

	EXPECT_EQ(0, pf_parse_decimal("0", 10, &v));
	EXPECT_EQ(0, v);
	EXPECT_EQ(0, pf_parse_decimal("10", 10, &v));
	EXPECT_EQ(10, v);
	EXPECT_EQ(-ERANGE, pf_parse_decimal("11", 10, &v));
	EXPECT_EQ(-ERANGE, pf_parse_decimal("184467440737095516160", ~0UL,
					    &v));
	EXPECT_EQ(-EINVAL, pf_parse_decimal("", 10, &v));
	EXPECT_EQ(-EINVAL, pf_parse_decimal("1 ", 10, &v));
	EXPECT_EQ(0, pf_parse_u32("0xffffffff", &u));
	EXPECT_EQ(0xffffffffu, u);
	EXPECT_EQ(0, pf_parse_u32("0x0000000000000001", &u));
	EXPECT_EQ(1, u);
	EXPECT_EQ(-ERANGE, pf_parse_u32("4294967296", &u));
	EXPECT_EQ(-EINVAL, pf_parse_u32("0x", &u));
	EXPECT_EQ(-EINVAL, pf_parse_u32("x1", &u));
}

/*
 * The real resolver, on what every Linux system has: lo, and our own
 * namespace file.
 */
TEST(system_resolver)
{
	struct pf_filter f;
	char name[16], path[64];
	__u32 ino, idx;

	ASSERT_EQ(0, pf_system_resolver.netns_ino("/proc/self/ns/net", &ino));
	EXPECT_NE(0, ino);
	EXPECT_EQ(-EINVAL, pf_system_resolver.netns_ino("/proc/self/ns/uts",
							 &ino));
	EXPECT_EQ(-EINVAL, pf_system_resolver.netns_ino("/proc/self/stat",
							 &ino));
	EXPECT_EQ(-ENOENT, pf_system_resolver.netns_ino("/nonexistent",
							 &ino));
	ASSERT_EQ(0, pf_system_resolver.netns_ino("/proc/self/ns/net", &ino));
	ASSERT_EQ(0, pf_system_resolver.netns_path(ino, path, sizeof(path)));
	EXPECT_STREQ("/proc/self/ns/net", path);

	ASSERT_EQ(0, pf_system_resolver.ifindex("lo", NULL, &idx));
	EXPECT_NE(0, idx);
	ASSERT_EQ(0, pf_system_resolver.ifname(idx, NULL, name, sizeof(name)));
	EXPECT_STREQ("lo", name);
	/* Our own namespace by path: no setns(), no privilege needed. */
	ASSERT_EQ(0, pf_system_resolver.ifindex("lo", "/proc/self/ns/net",
						&idx));
	EXPECT_EQ(-ENODEV, pf_system_resolver.ifindex("pktfilt-none0", NULL,
						      &idx));
	EXPECT_EQ(-ENODEV, pf_system_resolver.ifname(0x7fffffff, NULL, name,
						     sizeof(name)));

	ASSERT_EQ(PF_PARSE_OK, pf_parse_filter(4, (char *[]){ "--netns",
		  "/proc/self/ns/net", "--dev", "lo" }, &f,
		  &pf_system_resolver, err, sizeof(err)));
	EXPECT_EQ(ino, f.spec.netns);
	EXPECT_EQ(idx, f.spec.ifindex);
	ASSERT_EQ(PF_PARSE_OK, pf_parse_filter(2, (char *[]){ "--dev", "lo" },
		  &f, &pf_system_resolver, err, sizeof(err)));
	EXPECT_EQ(ino, f.spec.netns);
	EXPECT_EQ(idx, f.spec.ifindex);
}

TEST_HARNESS_MAIN
