// SPDX-License-Identifier: GPL-2.0
/*
 * pffuzz - a generic netlink fuzzer for the pktfilt family.
 *
 *   pffuzz [--family NAME] [--cmds LIST] [--count N] [--seed S] [--uid U]
 *          [--batch N] [--lax] [-v]...
 *
 * Sends --count (default 100000) random generic netlink messages, most of
 * them malformed, to the family (default "pktfilt") over a raw
 * NETLINK_GENERIC socket with NETLINK_EXT_ACK and NETLINK_CAP_ACK on, one to
 * --batch (default 8) messages per send(), and checks every answer.
 *
 * What is sent: commands mostly 0..6 (pktfilt has SET, GET, CLEAR and STATS,
 * 1..4; 5 is the multicast-only PACKET), sometimes any 0..255; random genl
 * version and reserved byte; nlmsg_flags with or without NLM_F_REQUEST,
 * NLM_F_ACK, NLM_F_DUMP, NLM_F_ECHO and random high bits; SET attributes
 * that make a valid filter (with --count, prefixes, ranges, marks), one that
 * breaks a rule (prefix length above 32/128, port min > max, conflicting
 * IPv4/IPv6 addresses, ...), or a soup of wrong-sized, unknown, flagged
 * (NLA_F_NESTED, NLA_F_NET_BYTEORDER) and nested garbage attributes,
 * attributes whose nla_len lies (zero, shorter than its header, longer than
 * the message), trailing bytes; an nlmsg_len that truncates the genl header
 * or the attributes, is below the netlink header, swallows the following
 * messages, runs past the end of what was sent, or leaves unparsed bytes
 * behind; oversized messages (up to 64 KiB of attributes).
 *
 * What is checked: the kernel walks a batch the way netlink_rcv_skb() does,
 * and pffuzz replays that walk to know which messages the kernel parses.
 * Every parsed request must get exactly one final answer (NLMSG_ERROR with
 * its seq, NLMSG_DONE for a dump) when it asked for an ack or was refused,
 * a non-request exactly an ack of 0 when it set NLM_F_ACK, nothing else.
 * After each batch a NLMSG_NOOP request is sent: the kernel processes
 * netlink input synchronously, so its ack is the last answer of the batch.
 * Each message ends up as one of:
 *   ok                 error 0, a data reply, or (SET/CLEAR without
 *                      NLM_F_ACK) no answer, as asked
 *   err_extack         refused with an extack message
 *   err_core_noextack  refused without one where the generic netlink core
 *                      answers before the family is reached, as pffuzz
 *                      predicts from what it sent: EINVAL for a header
 *                      shorter than the genl header, EOPNOTSUPP for a
 *                      command or a dump the family does not have, EPERM
 *                      for a GENL_ADMIN_PERM command (the family's ops, as
 *                      the controller lists them)
 *   violation          anything else: refused without extack by the family
 *                      itself, a wrong or duplicated answer, an answer with
 *                      a seq never sent, an unexpected message type; for
 *                      pktfilt also a SET or CLEAR that succeeded without
 *                      privileges, or a data reply to anything but GET/STATS
 *   missing            an answer that should have come did not
 *   unverified         an answer lost because the receive queue overflowed
 *                      (ENOBUFS, counted in enobufs)
 *   unparsed, noreply  not parsed by the kernel, or no answer asked for
 *
 * --uid U drops to uid and gid U (setgroups, setgid, setuid) before any
 * socket is opened, so the kernel sees an unprivileged sender. --seed makes
 * a run reproducible (the messages depend on the seed only). --family fuzzes
 * another family for a dry run, with the commands of --cmds only (e.g.
 * nlctrl: --cmds 3,10, CTRL_CMD_GETFAMILY and GETPOLICY, which only read);
 * --lax then counts its own refusals without extack as err_noextack instead
 * of violations. -v: progress and every violation as it happens; -vv: every
 * message.
 *
 * Output: the family, then at the end
 *   pffuzz: sent=N answered=N ok=N err_extack=N err_core_noextack=N
 *           violations=N missing=N enobufs=N seed=S unverified=N unparsed=N
 *           noreply=N eperm=N set_ok=N clear_ok=N   (one line)
 * and the first violations in detail. Exit status 0 if violations and
 * missing are 0, 1 if not, 2 on a usage or setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <grp.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "../../include/pktfilt.h"

#define BATCH_MAX	8		/* messages per send() at most */
#define MSG_LIMIT	4096		/* bytes of an ordinary message at most */
#define BIG_ATTRS	(64 * 1024)	/* attributes of an oversized message */
#define BATCH_CAP	(BATCH_MAX * MSG_LIMIT + BIG_ATTRS + 1024)
#define RCVBUF_WANT	(4 * 1024 * 1024)
#define RCV_TIMEOUT_S	5
#define MAX_TIMEOUTS	3		/* batches in a row without the sentinel */
#define MAX_REPORTED	10
#define HEX_BYTES	64

/* In family.op_flags: the command exists (its flags may be 0 on old kernels). */
#define OP_EXISTS	(1U << 31)

/* Errnos the core may answer with, as a set. */
enum core_err {
	CORE_EINVAL	= 1 << 0,
	CORE_EOPNOTSUPP	= 1 << 1,
	CORE_EPERM	= 1 << 2,
};

/* How a message's nlmsg_len relates to the bytes sent for it. */
enum framing {
	FRAME_EXACT,	/* nlmsg_len = content, padded to 4 */
	FRAME_TRUNC,	/* nlmsg_len cuts the content (genl header, attributes) */
	FRAME_SHORT,	/* nlmsg_len below NLMSG_HDRLEN: the kernel stops here */
	FRAME_LONG,	/* nlmsg_len past the end of the send: the kernel stops */
	FRAME_SWALLOW,	/* nlmsg_len covers the next messages too */
	FRAME_TAIL,	/* last message: a few bytes beyond nlmsg_len, ignored */
};

struct family {
	char name[GENL_NAMSIZ];
	uint16_t id;
	uint32_t version;
	uint32_t hdrsize;
	uint32_t maxattr;
	uint32_t op_flags[256];	/* GENL_CMD_CAP_* and *_PERM; 0: no such op */
	bool is_pktfilt;	/* the stricter pktfilt-specific checks apply */
};

struct options {
	const char *family;
	unsigned long count;
	uint64_t seed;
	long uid;		/* -1: stay who we are */
	unsigned int batch;
	bool lax;
	int verbose;
	uint8_t cmds[256];	/* --cmds, if ncmds */
	unsigned int ncmds;
};

/* One message of a batch: what was sent, what the kernel should do, what
 * it did. */
struct req {
	unsigned long msgno;	/* index in the run, from 0 */
	const char *kind;	/* what the generator meant */
	size_t off;		/* where it starts in the batch */
	size_t content;		/* bytes built */
	size_t wire;		/* bytes it occupies in the batch */
	enum framing framing;
	struct nlmsghdr hdr;	/* as sent (after framing) */
	uint8_t cmd;

	bool parsed;		/* the kernel's walk reaches its header */
	bool request;		/* NLM_F_REQUEST */
	bool ack;		/* NLM_F_ACK */
	bool dump;		/* NLM_F_DUMP, both bits */
	unsigned int core_errs;	/* what the core may refuse it with */

	unsigned int answers;
	unsigned int finals;	/* NLMSG_ERROR / NLMSG_DONE */
	unsigned int datas;	/* family messages */
	int err;
	bool has_extack;
	char extack[128];
	const char *why;	/* first violation found, if any */
};

struct batch {
	uint8_t buf[BATCH_CAP];
	size_t len;
	size_t limit;		/* the message being built ends before this */
	struct req req[BATCH_MAX];
	unsigned int n;
	bool has_dump;		/* a dump the family could start is in it */
	uint32_t sentinel_seq;
	bool sentinel_seen;
	bool lost;		/* ENOBUFS: some answers were dropped */
	bool timed_out;
};

struct counts {
	unsigned long sent, answered, ok, err_extack, err_core_noextack;
	unsigned long err_noextack_lax, violations, missing, enobufs;
	unsigned long unverified, unparsed, noreply, eperm, set_ok, clear_ok;
};

/* A violation or a missing answer, kept to be shown in detail. */
struct problem {
	const char *what;
	unsigned long msgno;
	uint32_t seq;
	uint8_t cmd;
	uint16_t flags;
	uint32_t nlmsg_len;
	size_t wire;
	const char *kind;
	int err;
	char extack[128];
	char why[160];
	uint8_t bytes[HEX_BYTES];
	size_t nbytes;
};

struct fuzz {
	int fd;
	uint32_t portid;
	struct family fam;
	bool privileged;
	uint32_t next_seq;
	unsigned long msgno;
	struct counts n;
	struct problem problems[MAX_REPORTED];
	unsigned int nproblems;
	unsigned int timeouts;	/* in a row */
};

static struct options opt = {
	.family = PKTFILT_GENL_NAME,
	.count = 100000,
	.uid = -1,
	.batch = BATCH_MAX,
};

static struct batch batch;	/* 100+ KiB: not on the stack */
static uint8_t rbuf[256 * 1024];

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("pffuzz: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/* --- random numbers: splitmix64, so that a seed replays a run ---------- */

static uint64_t rng_state;

static uint64_t rnd64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* 0 .. n-1 */
static uint32_t rnd(uint32_t n)
{
	return n ? (uint32_t)(rnd64() % n) : 0;
}

/* true with probability pct percent */
static bool pct(unsigned int p)
{
	return rnd(100) < p;
}

static void rnd_bytes(void *p, size_t n)
{
	uint8_t *b = p;

	while (n--)
		*b++ = (uint8_t)rnd64();
}

/* --- building messages into the batch ------------------------------------ */

/* Appends n bytes (zeroed) to the message being built, or NULL if they do
 * not fit within its limit. */
static void *put(struct batch *b, size_t n)
{
	void *p;

	if (b->len + n > b->limit)
		return NULL;
	p = b->buf + b->len;
	memset(p, 0, n);
	b->len += n;
	return p;
}

/* An attribute with a nla_len of its own choosing and n payload bytes. */
static bool put_attr_raw(struct batch *b, uint16_t type, uint16_t nla_len,
			 const void *data, size_t n)
{
	struct nlattr *a;

	if (b->len + NLA_HDRLEN + NLA_ALIGN(n) > b->limit)
		return false;
	a = put(b, NLA_HDRLEN);
	a->nla_type = type;
	a->nla_len = nla_len;
	if (n)
		memcpy(put(b, NLA_ALIGN(n)), data, n);
	return true;
}

static bool put_attr(struct batch *b, uint16_t type, const void *data, size_t n)
{
	return put_attr_raw(b, type, (uint16_t)(NLA_HDRLEN + n), data, n);
}

static bool put_u8(struct batch *b, uint16_t type, uint8_t v)
{
	return put_attr(b, type, &v, 1);
}

static bool put_u16(struct batch *b, uint16_t type, uint16_t v)
{
	return put_attr(b, type, &v, 2);
}

static bool put_u32(struct batch *b, uint16_t type, uint32_t v)
{
	return put_attr(b, type, &v, 4);
}

/* Opens a nested attribute; nest_end() sets its length. */
static size_t nest_start(struct batch *b, uint16_t type)
{
	size_t off = b->len;

	if (!put_attr(b, type | NLA_F_NESTED, NULL, 0))
		return 0;
	return off;
}

static void nest_end(struct batch *b, size_t off)
{
	struct nlattr *a = (struct nlattr *)(b->buf + off);

	if (off)	/* 0: nest_start() did not fit; off 0 is never an attribute */
		a->nla_len = (uint16_t)(b->len - off);
}

/* --- attribute generators ------------------------------------------------ */

/* Payload size of each SET attribute, 0 for those SET does not take. */
static const uint8_t pf_attr_size[PKTFILT_A_MAX + 1] = {
	[PKTFILT_A_PROTO] = 1,
	[PKTFILT_A_SADDR4] = 4,		[PKTFILT_A_SADDR6] = 16,
	[PKTFILT_A_SADDR_PLEN] = 1,
	[PKTFILT_A_DADDR4] = 4,		[PKTFILT_A_DADDR6] = 16,
	[PKTFILT_A_DADDR_PLEN] = 1,
	[PKTFILT_A_SPORT_MIN] = 2,	[PKTFILT_A_SPORT_MAX] = 2,
	[PKTFILT_A_DPORT_MIN] = 2,	[PKTFILT_A_DPORT_MAX] = 2,
	[PKTFILT_A_IFINDEX] = 4,	[PKTFILT_A_NETNS] = 4,
	[PKTFILT_A_MARK] = 4,		[PKTFILT_A_MARK_MASK] = 4,
	[PKTFILT_A_COUNT] = 4,		[PKTFILT_A_FLAGS] = 4,
	[PKTFILT_A_STAGES] = 4,
};

static void rnd_addr4(uint8_t a[4])
{
	static const uint8_t net[4] = { 10, 9, 0, 0 };

	if (pct(70)) {
		memcpy(a, net, 4);
		a[3] = (uint8_t)(1 + rnd(4));
	} else {
		rnd_bytes(a, 4);
	}
}

static void rnd_addr6(uint8_t a[16])
{
	if (pct(70)) {
		memset(a, 0, 16);
		a[0] = 0xfd;
		a[15] = (uint8_t)(1 + rnd(4));
	} else {
		rnd_bytes(a, 16);
	}
}

static uint16_t rnd_port(void)
{
	return pct(50) ? (uint16_t)(9000 + rnd(3)) : (uint16_t)rnd64();
}

/* A plausible value for SET attribute type, of the right size. */
static void put_pf_value(struct batch *b, uint16_t type, uint16_t flags)
{
	static const uint8_t protos[] = { 1, 6, 17, 58 };
	uint8_t v[16];

	switch (type) {
	case PKTFILT_A_PROTO:
		v[0] = pct(80) ? protos[rnd(4)] : (uint8_t)rnd64();
		break;
	case PKTFILT_A_SADDR4:
	case PKTFILT_A_DADDR4:
		rnd_addr4(v);
		break;
	case PKTFILT_A_SADDR6:
	case PKTFILT_A_DADDR6:
		rnd_addr6(v);
		break;
	case PKTFILT_A_SADDR_PLEN:
	case PKTFILT_A_DADDR_PLEN:
		v[0] = (uint8_t)rnd(pct(80) ? 140 : 256);
		break;
	case PKTFILT_A_SPORT_MIN:
	case PKTFILT_A_SPORT_MAX:
	case PKTFILT_A_DPORT_MIN:
	case PKTFILT_A_DPORT_MAX: {
		uint16_t p = rnd_port();

		memcpy(v, &p, 2);
		break;
	}
	default: {
		uint32_t u = pct(60) ? rnd(6) : (uint32_t)rnd64();

		memcpy(v, &u, 4);
		break;
	}
	}
	put_attr(b, type | flags, v, pf_attr_size[type]);
}

static uint16_t rnd_set_type(void)
{
	if (pct(8))
		return PKTFILT_A_STAGES;
	return (uint16_t)(PKTFILT_A_PROTO + rnd(PKTFILT_A_FLAGS - PKTFILT_A_PROTO + 1));
}

/* A type the policy refuses: 0, beyond the maximum, or one SET does not
 * take (reply-only types have no policy entry). */
static uint16_t rnd_unknown_type(const struct family *f)
{
	uint16_t type;

	switch (rnd(4)) {
	case 0:
		return 0;
	case 1:
		return (uint16_t)(f->maxattr + 1 + rnd(20));
	case 2:
		return (uint16_t)rnd(NLA_TYPE_MASK + 1);
	default:
		if (!f->is_pktfilt)
			return (uint16_t)rnd(f->maxattr + 2);
		if (pct(20))
			return PKTFILT_A_PAD;
		/* Reply-only types (STAGES, which SET takes, excepted). */
		type = (uint16_t)(PKTFILT_A_STATE +
				  rnd(PKTFILT_A_MAX - PKTFILT_A_STATE + 1));
		return type == PKTFILT_A_STAGES ? PKTFILT_A_STAGE : type;
	}
}

/* A known type of the family with a size that may be right. */
static void put_known_attr(const struct family *f, struct batch *b, uint16_t flags)
{
	uint8_t v[24];
	uint16_t type;

	if (f->is_pktfilt) {
		put_pf_value(b, rnd_set_type(), flags);
		return;
	}
	type = (uint16_t)(1 + rnd(f->maxattr ? f->maxattr : 8));
	rnd_bytes(v, sizeof(v));
	put_attr(b, type | flags, v, (size_t[]){ 1, 2, 4, 8, 16 }[rnd(5)]);
}

static void put_random_attr(const struct family *f, struct batch *b, int depth);

/* NLA_F_NESTED around random attributes, maybe nested again. */
static void put_nested_garbage(const struct family *f, struct batch *b, int depth)
{
	uint16_t type = pct(50) ? (f->is_pktfilt ? rnd_set_type() : (uint16_t)rnd(8)) :
				  (uint16_t)rnd(NLA_TYPE_MASK + 1);
	size_t nest = nest_start(b, type & NLA_TYPE_MASK);
	unsigned int i, n = rnd(5);

	for (i = 0; i < n; i++)
		put_random_attr(f, b, depth + 1);
	nest_end(b, nest);
}

/* An attribute header whose nla_len lies: 0, within the header, or past
 * the end of the message. It ends the attributes: what follows is noise. */
static void put_lying_attr(const struct family *f, struct batch *b)
{
	uint8_t v[16];
	uint16_t len;

	switch (rnd(4)) {
	case 0:
		len = 0;
		break;
	case 1:
		len = (uint16_t)(1 + rnd(NLA_HDRLEN - 1));
		break;
	case 2:
		len = 0xffff;
		break;
	default:	/* just past the end of what is there */
		len = (uint16_t)(NLA_HDRLEN + 16 + 1 + rnd(64));
		break;
	}
	rnd_bytes(v, sizeof(v));
	put_attr_raw(b, f->is_pktfilt ? rnd_set_type() : (uint16_t)rnd(16), len,
		     v, rnd(17));
}

/* One attribute of the soup: known, wrong-sized, unknown, flagged, nested. */
static void put_random_attr(const struct family *f, struct batch *b, int depth)
{
	uint8_t v[24];
	unsigned int r = rnd(100);

	if (r < 40) {
		put_known_attr(f, b, 0);
	} else if (r < 55) {		/* a known type, any size */
		rnd_bytes(v, sizeof(v));
		put_attr(b, f->is_pktfilt ? rnd_set_type() : (uint16_t)rnd(16), v,
			 rnd(sizeof(v) + 1));
	} else if (r < 70) {
		rnd_bytes(v, sizeof(v));
		put_attr(b, rnd_unknown_type(f), v, rnd(9));
	} else if (r < 82) {
		put_known_attr(f, b, pct(50) ? NLA_F_NESTED :
				     pct(50) ? NLA_F_NET_BYTEORDER :
				     NLA_F_NESTED | NLA_F_NET_BYTEORDER);
	} else if (r < 95 && depth < 3) {
		put_nested_garbage(f, b, depth);
	} else {
		put_known_attr(f, b, 0);
	}
}

/* A soup of 1..12 attributes, maybe ending in a lie or unaligned bytes. */
static void put_attr_soup(const struct family *f, struct batch *b)
{
	unsigned int i, n = 1 + rnd(12);

	for (i = 0; i < n; i++)
		put_random_attr(f, b, 0);
	if (pct(10)) {
		put_lying_attr(f, b);
	} else if (pct(5)) {
		/* 1..3 bytes after the last attribute: left over. */
		size_t n = 1 + rnd(3);
		uint8_t *p = put(b, n);

		if (p)
			rnd_bytes(p, n);
	}
}

/* --- SET bodies ----------------------------------------------------------- */

static void put_addr_pred(struct batch *b, int family, uint16_t a4, uint16_t a6,
			  uint16_t aplen)
{
	uint8_t v[16];

	if (family == 4) {
		rnd_addr4(v);
		put_attr(b, a4, v, 4);
		if (pct(40))
			put_u8(b, aplen, (uint8_t)rnd(33));
	} else {
		rnd_addr6(v);
		put_attr(b, a6, v, 16);
		if (pct(40))
			put_u8(b, aplen, (uint8_t)rnd(129));
	}
}

static void put_port_pred(struct batch *b, uint16_t amin, uint16_t amax)
{
	uint16_t lo = rnd_port();

	put_u16(b, amin, lo);
	if (pct(40))
		put_u16(b, amax, (uint16_t)(lo + rnd(0x10000 - lo)));
}

/* A SET the module should accept (root, tracing ready). */
static void put_set_valid(struct batch *b)
{
	int family = (int[]){ 0, 4, 6 }[rnd(3)];
	uint8_t proto = 0;

	switch (rnd(5)) {
	case 1: proto = 6; break;
	case 2: proto = 17; break;
	case 3: proto = family == 6 ? 58 : 1; break;
	case 4: proto = family == 4 ? 1 : 58; break;
	}
	if (proto)
		put_u8(b, PKTFILT_A_PROTO, proto);
	if (family) {
		bool src = pct(50), dst = !src || pct(50);

		if (src)
			put_addr_pred(b, family, PKTFILT_A_SADDR4, PKTFILT_A_SADDR6,
				      PKTFILT_A_SADDR_PLEN);
		if (dst)
			put_addr_pred(b, family, PKTFILT_A_DADDR4, PKTFILT_A_DADDR6,
				      PKTFILT_A_DADDR_PLEN);
	}
	if (proto != 1 && proto != 58) {
		if (pct(30))
			put_port_pred(b, PKTFILT_A_SPORT_MIN, PKTFILT_A_SPORT_MAX);
		if (pct(60))
			put_port_pred(b, PKTFILT_A_DPORT_MIN, PKTFILT_A_DPORT_MAX);
	}
	if (pct(10))
		put_u32(b, PKTFILT_A_IFINDEX, 1 + rnd(8));
	if (pct(10))
		put_u32(b, PKTFILT_A_NETNS, 1 + (uint32_t)rnd64() % 0xfffffffe);
	if (pct(10)) {
		put_u32(b, PKTFILT_A_MARK, (uint32_t)rnd64());
		if (pct(50))
			put_u32(b, PKTFILT_A_MARK_MASK, (uint32_t)rnd64());
	}
	if (pct(70))
		put_u32(b, PKTFILT_A_COUNT, rnd(6));
	if (pct(20))
		put_u32(b, PKTFILT_A_FLAGS, rnd(PKTFILT_F_ALL + 1));
	if (pct(50))
		put_u32(b, PKTFILT_A_STAGES, 1 + rnd(PKTFILT_STAGES_ALL));
	if (pct(15)) {
		/* "ip[9] = 17" as libpcap compiles it for raw IP, or accept-all. */
		static const struct sock_filter udp[] = {
			{ 0x30, 0, 0, 9 }, { 0x15, 0, 1, 17 },
			{ 0x06, 0, 0, 65535 }, { 0x06, 0, 0, 0 },
		};
		static const struct sock_filter all[] = { { 0x06, 0, 0, 65535 } };

		if (pct(50))
			put_attr(b, PKTFILT_A_BPF, udp, sizeof(udp));
		else
			put_attr(b, PKTFILT_A_BPF, all, sizeof(all));
		if (pct(70))
			put_attr(b, PKTFILT_A_EXPR, "ip[9] = 17", 11);
	}
}

/* A SET that breaks one rule of the UAPI; returns what it breaks. */
static const char *put_set_invalid(struct batch *b)
{
	uint8_t a4[4], a6[16];

	rnd_addr4(a4);
	rnd_addr6(a6);
	switch (rnd(17)) {
	case 16: {
		/*
		 * A program bpf_check_classic() refuses: a jump past the end,
		 * no return at the end, an unknown opcode, a scratch slot out
		 * of range, a division by a constant 0; or a length that is no
		 * multiple of 8, or an empty one.
		 */
		struct sock_filter bad[8];
		unsigned int n = 1 + rnd(7);

		switch (rnd(7)) {
		case 0:
			bad[0] = (struct sock_filter){ 0x05, 0, 0, 1000 }; /* ja +1000 */
			bad[1] = (struct sock_filter){ 0x06, 0, 0, 0 };
			n = 2;
			break;
		case 1:
			bad[0] = (struct sock_filter){ 0x30, 0, 0, 9 };	/* no ret */
			n = 1;
			break;
		case 2:
			bad[0] = (struct sock_filter){ 0xff, 0, 0, 0 };
			bad[1] = (struct sock_filter){ 0x06, 0, 0, 0 };
			n = 2;
			break;
		case 3:
			bad[0] = (struct sock_filter){ 0x02, 0, 0, 99 };	/* st M[99] */
			bad[1] = (struct sock_filter){ 0x06, 0, 0, 0 };
			n = 2;
			break;
		case 4:
			bad[0] = (struct sock_filter){ 0x34, 0, 0, 0 };	/* div #0 */
			bad[1] = (struct sock_filter){ 0x06, 0, 0, 0 };
			n = 2;
			break;
		case 5:
			rnd_bytes(bad, sizeof(bad));
			put_attr(b, PKTFILT_A_BPF, bad, 1 + rnd(sizeof(bad) - 1));
			return "SET BPF of a length no multiple of 8";
		default:
			rnd_bytes(bad, sizeof(bad));
			bad[n - 1] = (struct sock_filter){ 0x15, 200, 200, 0 };
			break;
		}
		put_attr(b, PKTFILT_A_BPF, bad, n * sizeof(bad[0]));
		return "SET BPF program the kernel refuses";
	}
	case 15:
		put_u32(b, PKTFILT_A_STAGES,
			pct(50) ? 0 : PKTFILT_STAGES_ALL + 1 + rnd(1000));
		return "SET no stage or an unknown one";
	case 0:
		put_attr(b, PKTFILT_A_DADDR4, a4, 4);
		put_u8(b, PKTFILT_A_DADDR_PLEN, (uint8_t)(33 + rnd(223)));
		return "SET IPv4 prefix length > 32";
	case 1:
		put_attr(b, PKTFILT_A_SADDR6, a6, 16);
		put_u8(b, PKTFILT_A_SADDR_PLEN, (uint8_t)(129 + rnd(127)));
		return "SET IPv6 prefix length > 128";
	case 2:
		put_u8(b, pct(50) ? PKTFILT_A_SADDR_PLEN : PKTFILT_A_DADDR_PLEN,
		       (uint8_t)rnd(33));
		return "SET prefix length without address";
	case 3:
		put_u16(b, PKTFILT_A_DPORT_MIN, (uint16_t)(1 + rnd(0xffff)));
		put_u16(b, PKTFILT_A_DPORT_MAX, 0);
		return "SET port max < min";
	case 4:
		put_u16(b, PKTFILT_A_SPORT_MAX, rnd_port());
		return "SET port max without min";
	case 5:
		put_attr(b, PKTFILT_A_SADDR4, a4, 4);
		put_attr(b, PKTFILT_A_SADDR6, a6, 16);
		return "SET SADDR4 with SADDR6";
	case 6:
		put_attr(b, PKTFILT_A_DADDR6, a6, 16);
		put_attr(b, PKTFILT_A_DADDR4, a4, 4);
		return "SET DADDR4 with DADDR6";
	case 7:
		put_attr(b, PKTFILT_A_SADDR4, a4, 4);
		put_attr(b, PKTFILT_A_DADDR6, a6, 16);
		return "SET mixed address families";
	case 8:
		put_u8(b, PKTFILT_A_PROTO, 1);
		put_attr(b, PKTFILT_A_DADDR6, a6, 16);
		return "SET ICMP with IPv6";
	case 9:
		put_u8(b, PKTFILT_A_PROTO, 58);
		put_attr(b, PKTFILT_A_SADDR4, a4, 4);
		return "SET ICMPv6 with IPv4";
	case 10:
		put_u8(b, PKTFILT_A_PROTO, pct(50) ? 1 : 58);
		put_u16(b, PKTFILT_A_DPORT_MIN, rnd_port());
		return "SET ports with ICMP";
	case 11:
		put_u32(b, PKTFILT_A_MARK_MASK, (uint32_t)rnd64());
		return "SET mark mask without mark";
	case 12:
		put_u8(b, PKTFILT_A_PROTO, (uint8_t[]){ 0, 2, 4, 41, 132, 255 }[rnd(6)]);
		return "SET unknown protocol";
	case 13:
		put_u32(b, PKTFILT_A_FLAGS, PKTFILT_F_ALL + 1 + rnd(1000));
		return "SET unknown flags";
	default:
		put_u32(b, pct(50) ? PKTFILT_A_IFINDEX : PKTFILT_A_NETNS, 0);
		return "SET ifindex/netns 0";
	}
}

/* Up to BIG_ATTRS bytes of attributes: repeated valid ones, or big blobs. */
static void put_oversized(const struct family *f, struct batch *b)
{
	size_t target = 8192 + rnd(BIG_ATTRS - 8192);
	size_t start = b->len;
	uint8_t blob[4096];

	rnd_bytes(blob, sizeof(blob));
	while (b->len - start < target) {
		size_t before = b->len;

		if (pct(50))
			put_known_attr(f, b, 0);
		else
			put_attr(b, pct(50) ? rnd_unknown_type(f) : 0, blob,
				 rnd(sizeof(blob)));
		if (b->len == before)
			break;	/* the limit is reached */
	}
}

/* --- one message ---------------------------------------------------------- */

/* SET most (it parses attributes), CLEAR rarely (each one that follows a
 * SET unregisters the module's kprobes, and the next SET registers them
 * again: slow under TCG), the commands pktfilt lacks, any byte. */
static uint8_t pick_cmd(void)
{
	static const uint8_t absent[] = { PKTFILT_CMD_UNSPEC, PKTFILT_CMD_PACKET,
					  PKTFILT_CMD_PACKET + 1 };
	unsigned int r;

	if (opt.ncmds)
		return opt.cmds[rnd(opt.ncmds)];
	r = rnd(1000);
	if (r < 450)
		return PKTFILT_CMD_SET;
	if (r < 570)
		return PKTFILT_CMD_GET;
	if (r < 680)
		return PKTFILT_CMD_STATS;
	if (r < 690)
		return PKTFILT_CMD_CLEAR;
	if (r < 930)
		return absent[rnd(3)];
	return (uint8_t)rnd(256);
}

static uint16_t pick_flags(void)
{
	unsigned int r = rnd(100);
	uint16_t flags = NLM_F_REQUEST | NLM_F_ACK;

	if (r < 80)
		return flags;
	if (r < 86)
		return NLM_F_REQUEST;			/* no ack asked */
	if (r < 90)
		return pct(50) ? NLM_F_ACK : 0;		/* not a request */
	if (r < 94)
		return flags | NLM_F_DUMP;
	if (r < 96)
		return flags | NLM_F_ECHO;
	return flags | (uint16_t)rnd64();		/* random high bits too */
}

/* The body of a message for cmd; returns what it is meant to be. */
static const char *put_body(const struct family *f, struct batch *b, uint8_t cmd,
			    bool oversized)
{
	unsigned int r;

	if (oversized) {
		put_oversized(f, b);
		return "oversized";
	}
	if (!f->is_pktfilt || cmd != PKTFILT_CMD_SET) {
		if (pct(f->is_pktfilt ? 15 : 50)) {
			put_attr_soup(f, b);
			return "attribute soup";
		}
		return "no attributes";
	}
	r = rnd(20);
	if (r < 7) {
		put_set_valid(b);
		if (pct(5)) {
			put_attr_soup(f, b);
			return "SET valid + soup";
		}
		return "SET valid";
	}
	if (r < 12)
		return put_set_invalid(b);
	if (r < 13)
		return "SET empty";
	put_attr_soup(f, b);
	return "SET attribute soup";
}

static enum framing pick_framing(bool last)
{
	unsigned int r = rnd(100);

	if (r < 88)
		return FRAME_EXACT;
	if (r < 93)
		return FRAME_TRUNC;
	if (r < 95)
		return FRAME_SHORT;
	if (r < 97)
		return FRAME_LONG;
	return last ? FRAME_TAIL : FRAME_SWALLOW;
}

/* Sets nlmsg_len and the bytes the message occupies, per its framing
 * (FRAME_LONG and FRAME_SWALLOW need the whole batch: batch_frame()). */
static void frame_message(struct batch *b, struct req *r)
{
	struct nlmsghdr *h = (struct nlmsghdr *)(b->buf + r->off);
	size_t c = r->content;
	uint32_t len = (uint32_t)c;

	switch (r->framing) {
	case FRAME_TRUNC:
		/* A third of them cut into the genl header. */
		if (pct(33) || c <= NLMSG_HDRLEN + GENL_HDRLEN)
			len = NLMSG_HDRLEN + rnd(GENL_HDRLEN);
		else
			len = NLMSG_HDRLEN + GENL_HDRLEN +
			      rnd((uint32_t)(c - NLMSG_HDRLEN - GENL_HDRLEN));
		break;
	case FRAME_SHORT:
		len = rnd(NLMSG_HDRLEN);
		break;
	case FRAME_TAIL:
		/* 1..15 bytes beyond nlmsg_len, fewer than a header: ignored. */
		len = (uint32_t)(c - 1 - rnd(12));
		if (len < NLMSG_HDRLEN)
			len = (uint32_t)c;
		break;
	default:
		break;
	}
	h->nlmsg_len = len;
	if (r->framing == FRAME_TAIL) {
		r->wire = c;
	} else if (r->framing == FRAME_TRUNC) {
		r->wire = NLMSG_ALIGN(len);
	} else {
		r->wire = NLMSG_ALIGN(c);
		memset(b->buf + r->off + c, 0, r->wire - c);
	}
	b->len = r->off + r->wire;
}

/* Builds message i of the batch. */
static void gen_message(struct fuzz *fz, struct batch *b, unsigned int i, bool last,
			bool oversized)
{
	const struct family *f = &fz->fam;
	struct req *r = &b->req[i];
	struct nlmsghdr *h;
	struct genlmsghdr *g;

	memset(r, 0, sizeof(*r));
	r->msgno = fz->msgno++;
	r->off = b->len;
	b->limit = r->off + (oversized ? NLMSG_HDRLEN + GENL_HDRLEN + f->hdrsize + BIG_ATTRS :
					 MSG_LIMIT);
	h = put(b, NLMSG_HDRLEN);
	g = put(b, GENL_HDRLEN);
	if (f->hdrsize) {
		uint8_t *user = put(b, f->hdrsize);

		if (user)
			rnd_bytes(user, f->hdrsize);
	}

	r->cmd = pick_cmd();
	h->nlmsg_type = f->id;
	h->nlmsg_flags = pick_flags();
	h->nlmsg_seq = fz->next_seq++;
	h->nlmsg_pid = pct(95) ? 0 : (uint32_t)rnd64();
	g->cmd = r->cmd;
	g->version = pct(90) ? (uint8_t)f->version : (uint8_t)rnd64();
	g->reserved = pct(95) ? 0 : (uint16_t)(1 + rnd(0xffff));

	/* One dump the family would start per batch: a second one would be
	 * refused with EBUSY while the first is running. */
	if ((h->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP &&
	    (h->nlmsg_flags & NLM_F_REQUEST) &&
	    (f->op_flags[r->cmd] & GENL_CMD_CAP_DUMP)) {
		if (b->has_dump)
			h->nlmsg_flags &= (uint16_t)~NLM_F_ROOT;
		b->has_dump = true;
	}

	r->kind = put_body(f, b, r->cmd, oversized);
	r->content = b->len - r->off;
	r->framing = oversized ? FRAME_EXACT : pick_framing(last);
	frame_message(b, r);
}

/* nlmsg_len for the framings that depend on the messages after this one. */
static void batch_frame(struct batch *b)
{
	unsigned int i, k;

	for (i = 0; i < b->n; i++) {
		struct req *r = &b->req[i];
		struct nlmsghdr *h = (struct nlmsghdr *)(b->buf + r->off);
		size_t rest = b->len - r->off;

		if (r->framing == FRAME_LONG) {
			h->nlmsg_len = pct(20) ? UINT32_MAX :
				       (uint32_t)(rest + 1 + rnd(pct(50) ? 16 : 70000));
		} else if (r->framing == FRAME_SWALLOW) {
			/* Up to the end of a later message, on its 4-byte
			 * boundary (a FRAME_TAIL message has none). */
			k = i + 1 + rnd(b->n - i - 1);
			while (k > i && b->req[k].wire % NLMSG_ALIGNTO)
				k--;
			h->nlmsg_len = (uint32_t)(b->req[k].off + b->req[k].wire - r->off);
		}
		r->hdr = *h;
	}
}

/* --- what the kernel will do with the batch -------------------------------- */

static struct req *req_at(struct batch *b, size_t off)
{
	unsigned int i;

	for (i = 0; i < b->n; i++)
		if (b->req[i].off == off)
			return &b->req[i];
	return NULL;
}

/* Replays netlink_rcv_skb()'s walk: which headers the kernel parses. */
static void batch_walk(struct batch *b)
{
	size_t off = 0;

	while (b->len - off >= NLMSG_HDRLEN) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)(b->buf + off);
		struct req *r;
		size_t step;

		if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > b->len - off)
			break;
		r = req_at(b, off);
		if (!r)
			die("internal error: the walk lands at %zu, no message starts there",
			    off);
		r->parsed = true;
		step = NLMSG_ALIGN(h->nlmsg_len);
		off += step < b->len - off ? step : b->len - off;
	}
}

/* The errnos the generic netlink core may refuse r with before the
 * family's code runs (and without extack); genl_family_rcv_msg() checks,
 * in this order, the header length, the command (per do/dump since 6.2),
 * GENL_ADMIN_PERM, then (6.1) whether the op has a doit/dumpit. */
static unsigned int core_errs(const struct fuzz *fz, const struct req *r)
{
	uint32_t op = fz->fam.op_flags[r->cmd];
	uint32_t need = r->dump ? GENL_CMD_CAP_DUMP : GENL_CMD_CAP_DO;
	unsigned int errs = 0;

	if (r->hdr.nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN + fz->fam.hdrsize)
		return CORE_EINVAL;
	if (!(op & need))
		errs |= CORE_EOPNOTSUPP;
	if ((op & (GENL_ADMIN_PERM | GENL_UNS_ADMIN_PERM)) && !fz->privileged)
		errs |= CORE_EPERM;
	return errs;
}

static void batch_expect(struct fuzz *fz, struct batch *b)
{
	unsigned int i;

	batch_walk(b);
	for (i = 0; i < b->n; i++) {
		struct req *r = &b->req[i];

		r->request = r->hdr.nlmsg_flags & NLM_F_REQUEST;
		r->ack = r->hdr.nlmsg_flags & NLM_F_ACK;
		r->dump = (r->hdr.nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
		if (r->parsed && r->request)
			r->core_errs = core_errs(fz, r);
	}
}

static void batch_generate(struct fuzz *fz, struct batch *b, unsigned long left)
{
	bool oversized = rnd(100) == 0;
	unsigned int i, n = 1;

	if (!oversized && opt.batch > 1 && pct(60))
		n = 2 + rnd(opt.batch - 1);
	if (n > left)
		n = (unsigned int)left;
	b->len = 0;
	b->has_dump = false;
	b->n = n;
	for (i = 0; i < n; i++)
		gen_message(fz, b, i, i == n - 1, oversized);
	batch_frame(b);
	batch_expect(fz, b);
	b->sentinel_seq = fz->next_seq++;
	b->sentinel_seen = b->lost = b->timed_out = false;
}

/* --- reporting ------------------------------------------------------------ */

static const char *cmd_name(const struct family *f, uint8_t cmd)
{
	static const char *const names[] = { "UNSPEC", "SET", "GET", "CLEAR",
					     "STATS", "PACKET" };

	if (f->is_pktfilt && cmd < sizeof(names) / sizeof(names[0]))
		return names[cmd];
	return "-";
}

static void print_hex(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i % 32 == 0)
			printf("%s    ", i ? "\n" : "");
		printf("%02x%s", p[i], i % 4 == 3 ? " " : "");
	}
	printf("\n");
}

static void print_problem(const struct family *f, const struct problem *v)
{
	printf("pffuzz: %s at message %lu: %s\n", v->what, v->msgno, v->why);
	if (!v->nbytes)
		return;
	printf("  %s: cmd %u (%s) flags 0x%04x seq %" PRIu32 " nlmsg_len %" PRIu32
	       ", %zu bytes sent\n", v->kind, v->cmd, cmd_name(f, v->cmd), v->flags,
	       v->seq, v->nlmsg_len, v->wire);
	printf("  answer: error %d%s%s%s\n", v->err, v->err ? " (" : "",
	       v->err ? strerror(-v->err) : "", v->err ? ")" : "");
	if (v->extack[0])
		printf("  extack: %s\n", v->extack);
	printf("  first %zu bytes:\n", v->nbytes);
	print_hex(v->bytes, v->nbytes);
}

/* Keeps the first MAX_REPORTED problems (violations, missing answers) for
 * the end, and with -v prints each at once. r is NULL for an answer that
 * belongs to no message. */
static void record_problem(struct fuzz *fz, const struct batch *b, const struct req *r,
			   const char *what, const char *fmt, ...)
{
	struct problem v = { .what = what };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v.why, sizeof(v.why), fmt, ap);
	va_end(ap);
	if (r) {
		v.msgno = r->msgno;
		v.seq = r->hdr.nlmsg_seq;
		v.cmd = r->cmd;
		v.flags = r->hdr.nlmsg_flags;
		v.nlmsg_len = r->hdr.nlmsg_len;
		v.wire = r->wire;
		v.kind = r->kind;
		v.err = r->err;
		snprintf(v.extack, sizeof(v.extack), "%s", r->extack);
		v.nbytes = r->wire < HEX_BYTES ? r->wire : HEX_BYTES;
		memcpy(v.bytes, b->buf + r->off, v.nbytes);
	} else {
		v.msgno = b->n ? b->req[0].msgno : fz->msgno;
	}
	if (opt.verbose)
		print_problem(&fz->fam, &v);
	if (fz->nproblems < MAX_REPORTED)
		fz->problems[fz->nproblems++] = v;
}

/* --- answers -------------------------------------------------------------- */

static struct req *req_by_seq(struct batch *b, uint32_t seq)
{
	unsigned int i;

	for (i = 0; i < b->n; i++)
		if (b->req[i].hdr.nlmsg_seq == seq)
			return &b->req[i];
	return NULL;
}

/* Notes the first reason why r's answers are wrong. */
static void req_violates(struct req *r, const char *why)
{
	if (!r->why)
		r->why = why;
}

/* Walks the attributes in the n bytes at *p: the next one, or NULL at the
 * end; *bad is set if one is malformed (its nla_len lies). */
static const struct nlattr *attr_next(const uint8_t **p, size_t *n, bool *bad)
{
	const struct nlattr *a = (const struct nlattr *)*p;
	size_t step;

	if (*n < NLA_HDRLEN)
		return NULL;
	if (a->nla_len < NLA_HDRLEN || a->nla_len > *n) {
		*bad = true;
		return NULL;
	}
	step = NLA_ALIGN((size_t)a->nla_len);
	if (step > *n)
		step = *n;
	*p += step;
	*n -= step;
	return a;
}

static const void *attr_data(const struct nlattr *a)
{
	return (const uint8_t *)a + NLA_HDRLEN;
}

static size_t attr_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

/* The extack message among the TLVs at p, n bytes. */
static void parse_extack(struct req *r, const uint8_t *p, size_t n)
{
	const struct nlattr *a;
	bool bad = false;

	while ((a = attr_next(&p, &n, &bad))) {
		size_t len = attr_len(a);

		if ((a->nla_type & NLA_TYPE_MASK) != NLMSGERR_ATTR_MSG || !len)
			continue;
		if (len >= sizeof(r->extack))
			len = sizeof(r->extack) - 1;
		memcpy(r->extack, attr_data(a), len);
		r->extack[len] = 0;
		r->has_extack = r->extack[0] != 0;
	}
	if (bad)
		req_violates(r, "malformed extack TLVs");
}

static void on_error(struct req *r, const struct nlmsghdr *h)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);
	size_t tlv;

	if (h->nlmsg_len < NLMSG_HDRLEN + sizeof(*e)) {
		req_violates(r, "NLMSG_ERROR too short");
		return;
	}
	if (r->finals++)
		req_violates(r, "more than one final answer");
	r->err = e->error;
	/* The kernel quotes the header it parsed: exactly the one sent. */
	if (e->msg.nlmsg_len != r->hdr.nlmsg_len || e->msg.nlmsg_type != r->hdr.nlmsg_type ||
	    e->msg.nlmsg_flags != r->hdr.nlmsg_flags || e->msg.nlmsg_seq != r->hdr.nlmsg_seq)
		req_violates(r, "NLMSG_ERROR quotes another header than the one sent");
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	tlv = NLMSG_HDRLEN + sizeof(*e);
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		tlv += NLMSG_ALIGN(e->msg.nlmsg_len) - NLMSG_HDRLEN;
	if (tlv <= h->nlmsg_len)
		parse_extack(r, (const uint8_t *)h + tlv, h->nlmsg_len - tlv);
}

static void on_done(struct req *r, const struct nlmsghdr *h)
{
	int err = 0;

	if (r->finals++)
		req_violates(r, "more than one final answer");
	if (!r->dump)
		req_violates(r, "NLMSG_DONE for a message that is no dump");
	if (h->nlmsg_len >= NLMSG_HDRLEN + sizeof(int))
		memcpy(&err, NLMSG_DATA(h), sizeof(int));
	r->err = err;
	if ((h->nlmsg_flags & NLM_F_ACK_TLVS) && h->nlmsg_len > NLMSG_HDRLEN + sizeof(int))
		parse_extack(r, (const uint8_t *)NLMSG_DATA(h) + sizeof(int),
			     h->nlmsg_len - NLMSG_HDRLEN - sizeof(int));
}

static bool is_pf_read_cmd(const struct family *f, const struct req *r)
{
	return f->is_pktfilt &&
	       (r->cmd == PKTFILT_CMD_GET || r->cmd == PKTFILT_CMD_STATS);
}

static bool is_pf_admin_cmd(const struct family *f, const struct req *r)
{
	return f->is_pktfilt &&
	       (r->cmd == PKTFILT_CMD_SET || r->cmd == PKTFILT_CMD_CLEAR);
}

static void on_data(const struct family *f, struct req *r, const struct nlmsghdr *h)
{
	const struct genlmsghdr *g = NLMSG_DATA(h);

	r->datas++;
	if (r->finals)
		req_violates(r, "a data message after the final answer");
	if (h->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) {
		req_violates(r, "data message shorter than a genl header");
		return;
	}
	if (!f->is_pktfilt)
		return;
	/* pktfilt: one reply to GET/STATS, same cmd (genlmsg_put_reply). */
	if (!is_pf_read_cmd(f, r))
		req_violates(r, "a data reply to a command other than GET/STATS");
	else if (g->cmd != r->cmd || g->version != PKTFILT_GENL_VERSION)
		req_violates(r, "data reply with another cmd or version");
	else if (r->datas > 1)
		req_violates(r, "more than one data reply");
}

static void on_sentinel(struct fuzz *fz, struct batch *b, const struct nlmsghdr *h)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);

	if (h->nlmsg_type != NLMSG_ERROR || h->nlmsg_len < NLMSG_HDRLEN + sizeof(*e) ||
	    e->error != 0) {
		fz->n.violations++;
		record_problem(fz, b, NULL, "violation",
			       "the NLMSG_NOOP sentinel got type %u error %d", h->nlmsg_type,
			       h->nlmsg_type == NLMSG_ERROR ? e->error : 0);
	}
	b->sentinel_seen = true;
}

static void on_answer(struct fuzz *fz, struct batch *b, const struct nlmsghdr *h)
{
	struct req *r;

	if (h->nlmsg_seq == b->sentinel_seq) {
		on_sentinel(fz, b, h);
		return;
	}
	r = req_by_seq(b, h->nlmsg_seq);
	if (!r) {
		fz->n.violations++;
		record_problem(fz, b, NULL, "violation", "answer type %u with seq %" PRIu32
			       " that this batch never sent", h->nlmsg_type, h->nlmsg_seq);
		return;
	}
	r->answers++;
	if (!r->parsed)
		req_violates(r, "answer to a message the kernel should not have parsed");
	if (h->nlmsg_pid != fz->portid)
		req_violates(r, "answer addressed to another portid");
	if (h->nlmsg_type == NLMSG_ERROR)
		on_error(r, h);
	else if (h->nlmsg_type == NLMSG_DONE)
		on_done(r, h);
	else if (h->nlmsg_type == fz->fam.id)
		on_data(&fz->fam, r, h);
	else
		req_violates(r, "answer of an unexpected message type");
}

/* A dump that has started but not finished: recvmsg() continues it. */
static bool dump_pending(const struct batch *b)
{
	unsigned int i;

	for (i = 0; i < b->n; i++)
		if (b->req[i].parsed && b->req[i].request && b->req[i].dump &&
		    !b->req[i].finals && b->req[i].datas)
			return true;
	return false;
}

/* Reads answers until the sentinel's ack and the end of any dump. */
static void batch_collect(struct fuzz *fz, struct batch *b)
{
	while (!b->sentinel_seen || dump_pending(b)) {
		ssize_t n = recv(fz->fd, rbuf, sizeof(rbuf), MSG_TRUNC);
		const struct nlmsghdr *h;
		size_t left;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				/* The queue overflowed: answers are gone. */
				fz->n.enobufs++;
				b->lost = true;
				continue;
			}
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				b->timed_out = true;
				return;
			}
			die("recv: %s", strerror(errno));
		}
		if ((size_t)n > sizeof(rbuf)) {
			fz->n.violations++;
			record_problem(fz, b, NULL, "violation", "a %zd-byte answer datagram", n);
			n = sizeof(rbuf);
		}
		left = (size_t)n;
		for (h = (const struct nlmsghdr *)rbuf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left))
			on_answer(fz, b, h);
		if (left) {
			fz->n.violations++;
			record_problem(fz, b, NULL, "violation",
				       "%zu trailing bytes in an answer datagram", left);
		}
	}
}

/* --- judging each message ---------------------------------------------------- */

/* What became of one message (unless its answers violate the rules). */
enum outcome {
	OUT_OK,			/* error 0, a data reply, or a silent success */
	OUT_ERR_EXTACK,
	OUT_ERR_CORE,		/* refused by the core, as predicted */
	OUT_ERR_LAX,		/* --lax: refused by the family without extack */
	OUT_NOREPLY,		/* no answer, none asked for */
	OUT_UNPARSED,		/* the kernel's walk never reached it */
	OUT_MISSING,
	OUT_UNVERIFIED,		/* missing, but answers were lost (ENOBUFS) */
};

static enum outcome missing_or_lost(const struct batch *b)
{
	return b->lost ? OUT_UNVERIFIED : OUT_MISSING;
}

/* pktfilt's SET and CLEAR change the module's state: privileged only. */
static void note_success(struct fuzz *fz, struct req *r)
{
	if (!is_pf_admin_cmd(&fz->fam, r))
		return;
	if (r->cmd == PKTFILT_CMD_SET)
		fz->n.set_ok++;
	else
		fz->n.clear_ok++;
	if (!fz->privileged)
		req_violates(r, "SET/CLEAR succeeded without CAP_NET_ADMIN");
}

/* netlink_rcv_skb() acks a non-request with 0 iff it has NLM_F_ACK. */
static enum outcome judge_non_request(const struct batch *b, struct req *r)
{
	if (!r->ack) {
		if (r->answers)
			req_violates(r, "an answer to a non-request without NLM_F_ACK");
		return OUT_NOREPLY;
	}
	if (!r->answers)
		return missing_or_lost(b);
	if (r->finals != 1 || r->err || r->datas)
		req_violates(r, "a non-request with NLM_F_ACK must get just an ack of 0");
	return OUT_OK;
}

static bool core_predicted(const struct req *r)
{
	return (r->err == -EINVAL && (r->core_errs & CORE_EINVAL)) ||
	       (r->err == -EOPNOTSUPP && (r->core_errs & CORE_EOPNOTSUPP)) ||
	       (r->err == -EPERM && (r->core_errs & CORE_EPERM));
}

static enum outcome judge_refusal(struct fuzz *fz, struct req *r)
{
	if (r->err == -EPERM)
		fz->n.eperm++;
	if (r->has_extack)
		return OUT_ERR_EXTACK;
	if (core_predicted(r))
		return OUT_ERR_CORE;
	if (opt.lax && !r->core_errs)
		return OUT_ERR_LAX;
	req_violates(r, r->core_errs ? "refused without extack, not as the core would" :
				       "refused without an extack message");
	return OUT_ERR_EXTACK;
}

/* A parsed request with its final answer (NLMSG_ERROR or NLMSG_DONE). */
static enum outcome judge_final(struct fuzz *fz, struct req *r)
{
	if (r->err > 0) {
		req_violates(r, "a positive error code");
		return OUT_OK;
	}
	if (r->err < 0)
		return judge_refusal(fz, r);
	if (r->core_errs)
		req_violates(r, "accepted, but the core should have refused it");
	else if (!r->ack && !r->dump)
		req_violates(r, "an ack of 0 that was not asked for");
	else if (is_pf_read_cmd(&fz->fam, r) && r->datas != 1)
		req_violates(r, "GET/STATS acked without its data reply");
	note_success(fz, r);
	return OUT_OK;
}

/* A parsed request without a final answer: errors are always answered, so
 * this is a success if it asked for no ack, not a dump, and not for a
 * pktfilt GET/STATS (which reply). */
static enum outcome judge_unanswered(struct fuzz *fz, const struct batch *b, struct req *r)
{
	if (r->datas && !r->dump && !r->ack) {
		if (r->core_errs)
			req_violates(r, "a reply, but the core should have refused it");
		note_success(fz, r);
		return OUT_OK;
	}
	if (r->ack || r->dump || r->core_errs || is_pf_read_cmd(&fz->fam, r))
		return missing_or_lost(b);
	note_success(fz, r);
	return OUT_NOREPLY;
}

static void count_outcome(struct counts *n, enum outcome out)
{
	switch (out) {
	case OUT_OK: n->ok++; break;
	case OUT_ERR_EXTACK: n->err_extack++; break;
	case OUT_ERR_CORE: n->err_core_noextack++; break;
	case OUT_ERR_LAX: n->err_noextack_lax++; break;
	case OUT_NOREPLY: n->noreply++; break;
	case OUT_UNPARSED: n->unparsed++; break;
	case OUT_MISSING: n->missing++; break;
	case OUT_UNVERIFIED: n->unverified++; break;
	}
}

static void judge(struct fuzz *fz, struct batch *b, struct req *r)
{
	enum outcome out;

	if (!r->parsed)
		out = OUT_UNPARSED;	/* an answer already is a violation */
	else if (!r->request)
		out = judge_non_request(b, r);
	else if (r->finals)
		out = judge_final(fz, r);
	else
		out = judge_unanswered(fz, b, r);

	fz->n.sent++;
	if (r->answers)
		fz->n.answered++;
	if (r->why) {
		fz->n.violations++;
		record_problem(fz, b, r, "violation", "%s", r->why);
	} else {
		count_outcome(&fz->n, out);
		if (out == OUT_MISSING)
			record_problem(fz, b, r, "missing answer", "%s%s%s",
				       r->ack ? "NLM_F_ACK" : "",
				       r->dump ? " dump" : "",
				       r->core_errs ? " refusal by the core" : "");
	}
	if (opt.verbose > 1)
		printf("pffuzz: #%lu seq %" PRIu32 " cmd %u flags 0x%04x len %" PRIu32
		       "/%zu %s%s: answers %u finals %u datas %u err %d%s%s\n",
		       r->msgno, r->hdr.nlmsg_seq, r->cmd, r->hdr.nlmsg_flags,
		       r->hdr.nlmsg_len, r->wire, r->kind, r->parsed ? "" : " (unparsed)",
		       r->answers, r->finals, r->datas, r->err,
		       r->has_extack ? " extack: " : "", r->extack);
}

static void batch_judge(struct fuzz *fz, struct batch *b)
{
	unsigned int i;

	for (i = 0; i < b->n; i++)
		judge(fz, b, &b->req[i]);
}

/* --- the socket ------------------------------------------------------------ */

static void set_int_opt(int fd, int level, int name, int val, const char *what)
{
	if (setsockopt(fd, level, name, &val, sizeof(val)))
		die("setsockopt %s: %s", what, strerror(errno));
}

static int nl_open(uint32_t *portid)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = RCV_TIMEOUT_S };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	int size = RCVBUF_WANT;

	if (fd < 0)
		die("socket(AF_NETLINK, NETLINK_GENERIC): %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len))
		die("bind: %s", strerror(errno));
	*portid = sa.nl_pid;
	set_int_opt(fd, SOL_NETLINK, NETLINK_EXT_ACK, 1, "NETLINK_EXT_ACK");
	set_int_opt(fd, SOL_NETLINK, NETLINK_CAP_ACK, 1, "NETLINK_CAP_ACK");
	/* Large, so that ENOBUFS stays the exception it should be; beyond
	 * rmem_max only with CAP_NET_ADMIN. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		set_int_opt(fd, SOL_SOCKET, SO_RCVBUF, size, "SO_RCVBUF");
	set_int_opt(fd, SOL_SOCKET, SO_SNDBUF, 1024 * 1024, "SO_SNDBUF");
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		die("setsockopt SO_RCVTIMEO: %s", strerror(errno));
	return fd;
}

static void nl_send(int fd, const void *buf, size_t len)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t n;

	do
		n = sendto(fd, buf, len, 0, (struct sockaddr *)&kernel, sizeof(kernel));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		die("sendto (%zu bytes): %s", len, strerror(errno));
	if ((size_t)n != len)
		die("sendto: %zd of %zu bytes", n, len);
}

/* The NLMSG_NOOP whose ack closes a batch's answers. */
static void send_sentinel(struct fuzz *fz, uint32_t seq)
{
	struct nlmsghdr h = {
		.nlmsg_len = NLMSG_HDRLEN,
		.nlmsg_type = NLMSG_NOOP,
		.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
		.nlmsg_seq = seq,
	};

	nl_send(fz->fd, &h, sizeof(h));
}

/* --- resolving the family -------------------------------------------------- */

static uint32_t attr_u32(const struct nlattr *a)
{
	uint32_t v = 0;

	memcpy(&v, attr_data(a), attr_len(a) < 4 ? attr_len(a) : 4);
	return v;
}

/* Each nested CTRL_ATTR_OP_* entry of CTRL_ATTR_OPS. */
static void parse_ops(struct family *f, const struct nlattr *ops)
{
	const uint8_t *p = attr_data(ops);
	size_t n = attr_len(ops);
	const struct nlattr *op;
	bool bad = false;

	while ((op = attr_next(&p, &n, &bad))) {
		const uint8_t *q = attr_data(op);
		size_t m = attr_len(op);
		const struct nlattr *a;
		uint32_t id = 256, flags = 0;

		while ((a = attr_next(&q, &m, &bad))) {
			if (a->nla_type == CTRL_ATTR_OP_ID)
				id = attr_u32(a);
			else if (a->nla_type == CTRL_ATTR_OP_FLAGS)
				flags = attr_u32(a);
		}
		if (id < 256)
			f->op_flags[id] = flags | OP_EXISTS;
	}
	if (bad)
		die("malformed CTRL_ATTR_OPS in the controller's reply");
}

static void parse_family(struct family *f, const struct nlmsghdr *h)
{
	const uint8_t *p = (const uint8_t *)NLMSG_DATA(h) + GENL_HDRLEN;
	size_t n = h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	const struct nlattr *a;
	bool bad = false;

	while ((a = attr_next(&p, &n, &bad))) {
		switch (a->nla_type & NLA_TYPE_MASK) {
		case CTRL_ATTR_FAMILY_ID:
			f->id = (uint16_t)attr_u32(a);
			break;
		case CTRL_ATTR_VERSION:
			f->version = attr_u32(a);
			break;
		case CTRL_ATTR_HDRSIZE:
			f->hdrsize = attr_u32(a);
			break;
		case CTRL_ATTR_MAXATTR:
			f->maxattr = attr_u32(a);
			break;
		case CTRL_ATTR_OPS:
			parse_ops(f, a);
			break;
		}
	}
	if (bad)
		die("malformed attributes in the controller's reply");
}

/* CTRL_CMD_GETFAMILY: the family's id, header size and ops. */
static void resolve_family(struct fuzz *fz, const char *name)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
		uint8_t attrs[NLA_HDRLEN + GENL_NAMSIZ];
	} req = { 0 };
	struct nlattr *a = (struct nlattr *)req.attrs;
	size_t nlen = strlen(name) + 1;
	struct family *f = &fz->fam;
	bool done = false;

	if (nlen > GENL_NAMSIZ)
		die("family name too long: %s", name);
	req.n.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN + NLA_ALIGN(nlen);
	req.n.nlmsg_type = GENL_ID_CTRL;
	req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.n.nlmsg_seq = fz->next_seq++;
	req.g.cmd = CTRL_CMD_GETFAMILY;
	req.g.version = 1;
	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = (uint16_t)(NLA_HDRLEN + nlen);
	memcpy(req.attrs + NLA_HDRLEN, name, nlen);
	nl_send(fz->fd, &req, req.n.nlmsg_len);

	while (!done) {
		ssize_t n = recv(fz->fd, rbuf, sizeof(rbuf), 0);
		const struct nlmsghdr *h;
		size_t left;

		if (n < 0)
			die("resolving family %s: recv: %s", name, strerror(errno));
		left = (size_t)n;
		for (h = (const struct nlmsghdr *)rbuf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			if (h->nlmsg_seq != req.n.nlmsg_seq)
				continue;
			if (h->nlmsg_type == GENL_ID_CTRL &&
			    h->nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN)
				parse_family(f, h);
			if (h->nlmsg_type != NLMSG_ERROR)
				continue;
			if (e->error)
				die("family %s: %s%s", name, strerror(-e->error),
				    e->error == -ENOENT ? " (module not loaded?)" : "");
			done = true;
		}
	}
	if (!f->id)
		die("family %s: no id in the controller's reply", name);
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->is_pktfilt = !strcmp(name, PKTFILT_GENL_NAME);
}

static void print_family(const struct fuzz *fz)
{
	const struct family *f = &fz->fam;
	unsigned int cmd;

	printf("pffuzz: family %s id %u version %" PRIu32 " hdrsize %" PRIu32
	       " maxattr %" PRIu32 " ops:", f->name, f->id, f->version, f->hdrsize,
	       f->maxattr);
	for (cmd = 0; cmd < 256; cmd++) {
		uint32_t o = f->op_flags[cmd];

		if (o)
			printf(" %u(%s%s%s)", cmd, o & GENL_CMD_CAP_DO ? "do" : "",
			       o & GENL_CMD_CAP_DUMP ? ",dump" : "",
			       o & (GENL_ADMIN_PERM | GENL_UNS_ADMIN_PERM) ? ",admin" : "");
	}
	printf("\n");
}

/* --- privileges -------------------------------------------------------------- */

/* Becomes uid (and gid) uid, with no supplementary groups; before any
 * socket exists, so the kernel sees an unprivileged opener and sender. */
static void drop_privileges(long uid)
{
	if (setgroups(0, NULL) || setgid((gid_t)uid) || setuid((uid_t)uid))
		die("dropping to uid %ld: %s", uid, strerror(errno));
	if (getuid() != (uid_t)uid || geteuid() != (uid_t)uid || getegid() != (gid_t)uid)
		die("still uid %u after dropping to %ld", geteuid(), uid);
}

/* --- options ----------------------------------------------------------------- */

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: pffuzz [--family NAME] [--cmds LIST] [--count N] [--seed S]\n"
		"              [--uid U] [--batch N] [--lax] [-v]...\n"
		"Fuzzes generic netlink family NAME (default pktfilt); see the source.\n");
	exit(status);
}

static unsigned long long parse_num(const char *s, const char *what,
				    unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || v > max || *s == '-')
		die("bad %s: %s", what, s);
	return v;
}

static void parse_cmds(const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;

	if (!copy)
		die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		opt.cmds[opt.ncmds++] = (uint8_t)parse_num(tok, "--cmds entry", 255);
	free(copy);
	if (!opt.ncmds)
		die("--cmds: empty list");
}

static void parse_options(int argc, char **argv)
{
	bool seeded = false;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			usage(0);
		if (!strcmp(a, "-v")) {
			opt.verbose++;
			continue;
		}
		if (!strcmp(a, "-vv")) {
			opt.verbose += 2;
			continue;
		}
		if (!strcmp(a, "--lax")) {
			opt.lax = true;
			continue;
		}
		if (!v)
			usage(2);
		i++;
		if (!strcmp(a, "--family"))
			opt.family = v;
		else if (!strcmp(a, "--cmds"))
			parse_cmds(v);
		else if (!strcmp(a, "--count"))
			opt.count = (unsigned long)parse_num(v, "--count", 1UL << 40);
		else if (!strcmp(a, "--seed"))
			opt.seed = parse_num(v, "--seed", UINT64_MAX), seeded = true;
		else if (!strcmp(a, "--uid"))
			opt.uid = (long)parse_num(v, "--uid", 0x7fffffff);
		else if (!strcmp(a, "--batch"))
			opt.batch = (unsigned int)parse_num(v, "--batch", BATCH_MAX);
		else
			usage(2);
	}
	if (!opt.batch)
		die("--batch must be 1..%d", BATCH_MAX);
	if (strcmp(opt.family, PKTFILT_GENL_NAME) && !opt.ncmds)
		die("--family %s needs --cmds: only commands known to be harmless", opt.family);
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		opt.seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^
			   (uint64_t)getpid() << 32;
	}
}

/* --- main ---------------------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void print_summary(const struct fuzz *fz, double secs)
{
	const struct counts *n = &fz->n;
	unsigned int i;

	for (i = 0; i < fz->nproblems; i++)
		print_problem(&fz->fam, &fz->problems[i]);
	if (n->violations + n->missing > fz->nproblems)
		printf("pffuzz: ... and %lu more violations or missing answers\n",
		       n->violations + n->missing - fz->nproblems);
	if (opt.lax)
		printf("pffuzz: --lax: %lu refusals without extack from the family\n",
		       n->err_noextack_lax);
	printf("pffuzz: %lu messages in %.1f s\n", n->sent, secs);
	printf("pffuzz: sent=%lu answered=%lu ok=%lu err_extack=%lu err_core_noextack=%lu"
	       " violations=%lu missing=%lu enobufs=%lu seed=%" PRIu64
	       " unverified=%lu unparsed=%lu noreply=%lu eperm=%lu set_ok=%lu clear_ok=%lu\n",
	       n->sent, n->answered, n->ok, n->err_extack, n->err_core_noextack,
	       n->violations, n->missing, n->enobufs, opt.seed, n->unverified,
	       n->unparsed, n->noreply, n->eperm, n->set_ok, n->clear_ok);
}

int main(int argc, char **argv)
{
	static struct fuzz fz;
	unsigned long next_progress = 10000;
	double start;
	int rcvbuf = 0;
	socklen_t len = sizeof(rcvbuf);

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_options(argc, argv);
	rng_state = opt.seed;
	printf("pffuzz: seed=%" PRIu64 " count=%lu\n", opt.seed, opt.count);

	if (opt.uid >= 0)
		drop_privileges(opt.uid);
	fz.privileged = geteuid() == 0;
	fz.next_seq = 1;
	fz.fd = nl_open(&fz.portid);
	resolve_family(&fz, opt.family);
	print_family(&fz);
	getsockopt(fz.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len);
	printf("pffuzz: uid %u, portid %" PRIu32 ", receive buffer %d bytes\n",
	       geteuid(), fz.portid, rcvbuf);
	if (fz.fam.is_pktfilt)
		for (int c = PKTFILT_CMD_SET; c <= PKTFILT_CMD_STATS; c++)
			if (!(fz.fam.op_flags[c] & GENL_CMD_CAP_DO))
				printf("pffuzz: warning: pktfilt has no doit for cmd %d\n", c);

	start = now();
	while (fz.msgno < opt.count) {
		batch_generate(&fz, &batch, opt.count - fz.msgno);
		nl_send(fz.fd, batch.buf, batch.len);
		send_sentinel(&fz, batch.sentinel_seq);
		batch_collect(&fz, &batch);
		batch_judge(&fz, &batch);
		fz.timeouts = batch.timed_out ? fz.timeouts + 1 : 0;
		if (fz.timeouts >= MAX_TIMEOUTS) {
			printf("pffuzz: no answer to %d batches in a row, giving up\n",
			       MAX_TIMEOUTS);
			fz.n.missing++;
			break;
		}
		if (opt.verbose && fz.msgno >= next_progress) {
			printf("pffuzz: %lu messages, %.1f s, %lu violations\n", fz.msgno,
			       now() - start, fz.n.violations);
			next_progress += 10000;
		}
	}
	print_summary(&fz, now() - start);
	close(fz.fd);
	return fz.n.violations || fz.n.missing ? 1 : 0;
}
