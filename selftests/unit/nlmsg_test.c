// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the netlink encoding, tool/nl.c and tool/show.c, without a
 * kernel: the attributes a SET request carries for each predicate, and how
 * a GET reply is decoded (with the UAPI's defaults) and printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <netlink/genl/genl.h>

#include "kselftest_harness.h"
#include "pktfilt.h"
#include "parse.h"
#include "nl.h"
#include "show.h"

/* Resolver for a world with only "eth0" (2), in our namespace (1000). */
static int w_netns_ino(const char *path, __u32 *ino)
{
	(void)path;
	*ino = 1000;
	return 0;
}

static int w_netns_path(__u32 ino, char *buf, size_t len)
{
	if (ino != 1000)
		return -ENOENT;
	snprintf(buf, len, "/proc/self/ns/net");
	return 0;
}

static int w_ifindex(const char *name, const char *path, __u32 *idx)
{
	(void)path;
	if (strcmp(name, "eth0"))
		return -ENODEV;
	*idx = 2;
	return 0;
}

static int w_ifname(__u32 idx, const char *path, char *buf, size_t len)
{
	(void)path;
	if (idx != 2)
		return -ENODEV;
	snprintf(buf, len, "eth0");
	return 0;
}

static const struct pf_resolver world = {
	w_netns_ino, w_netns_path, w_ifindex, w_ifname,
};

/* Build a SET request from arguments and parse its attributes back. */
struct req {
	struct nl_msg *msg;
	struct nlattr *tb[PKTFILT_A_MAX + 1];
	int nattrs;
};

static int set_request(struct req *r, const char **args)
{
	struct pf_filter f;
	struct nlattr *a;
	char err[256];
	int argc = 0, rem;

	while (args[argc])
		argc++;
	if (pf_parse_filter(argc, (char *const *)args, &f, &world, err,
			    sizeof(err)))
		return -1;
	r->msg = nlmsg_alloc();
	if (!r->msg || !genlmsg_put(r->msg, 0, 0, 0x20, 0, 0,
				    PKTFILT_CMD_SET, PKTFILT_GENL_VERSION))
		return -1;
	if (pf_nl_put_filter(r->msg, &f))
		return -1;
	if (pf_nl_parse(r->msg, r->tb))
		return -1;
	r->nattrs = 0;
	nla_for_each_attr(a, genlmsg_attrdata(nlmsg_data(nlmsg_hdr(r->msg)), 0),
			  genlmsg_attrlen(nlmsg_data(nlmsg_hdr(r->msg)), 0), rem)
		r->nattrs++;
	return 0;
}

#define SET(r, ...) set_request(r, (const char *[]){ __VA_ARGS__, NULL })

TEST(set_minimal_sends_count_only)
{
	struct req r;

	ASSERT_EQ(0, set_request(&r, (const char *[]){ NULL }));
	EXPECT_EQ(PKTFILT_CMD_SET, genlmsg_hdr(nlmsg_hdr(r.msg))->cmd);
	EXPECT_EQ(PKTFILT_GENL_VERSION,
		  genlmsg_hdr(nlmsg_hdr(r.msg))->version);
	EXPECT_EQ(1, r.nattrs);
	ASSERT_NE(NULL, r.tb[PKTFILT_A_COUNT]);
	EXPECT_EQ(4, nla_len(r.tb[PKTFILT_A_COUNT]));
	EXPECT_EQ(1, nla_get_u32(r.tb[PKTFILT_A_COUNT]));
	EXPECT_EQ(NULL, r.tb[PKTFILT_A_FLAGS]);
	nlmsg_free(r.msg);
}

TEST(set_snaplen)
{
	struct req r;

	ASSERT_EQ(0, SET(&r, "--snaplen", "100"));
	ASSERT_NE(NULL, r.tb[PKTFILT_A_SNAPLEN]);
	EXPECT_EQ(100, nla_get_u32(r.tb[PKTFILT_A_SNAPLEN]));
	nlmsg_free(r.msg);
}

TEST(set_ipv4_addresses)
{
	struct req r;

	ASSERT_EQ(0, SET(&r, "--saddr", "192.0.2.1", "--daddr", "10.0.0.0/8"));
	ASSERT_NE(NULL, r.tb[PKTFILT_A_SADDR4]);
	EXPECT_EQ(4, nla_len(r.tb[PKTFILT_A_SADDR4]));
	/* be32: the bytes in wire order. */
	EXPECT_EQ(htonl(0xc0000201), nla_get_u32(r.tb[PKTFILT_A_SADDR4]));
	EXPECT_EQ(1, nla_len(r.tb[PKTFILT_A_SADDR_PLEN]));
	EXPECT_EQ(32, nla_get_u8(r.tb[PKTFILT_A_SADDR_PLEN]));
	EXPECT_EQ(htonl(0x0a000000), nla_get_u32(r.tb[PKTFILT_A_DADDR4]));
	EXPECT_EQ(8, nla_get_u8(r.tb[PKTFILT_A_DADDR_PLEN]));
	EXPECT_EQ(NULL, r.tb[PKTFILT_A_SADDR6]);
	EXPECT_EQ(NULL, r.tb[PKTFILT_A_DADDR6]);
	EXPECT_EQ(5, r.nattrs);
	nlmsg_free(r.msg);
}

TEST(set_ipv6_addresses)
{
	struct req r;
	__u8 want[16];

	ASSERT_EQ(0, SET(&r, "--saddr", "2001:db8::1/64"));
	ASSERT_NE(NULL, r.tb[PKTFILT_A_SADDR6]);
	EXPECT_EQ(16, nla_len(r.tb[PKTFILT_A_SADDR6]));
	inet_pton(AF_INET6, "2001:db8::1", want);
	EXPECT_EQ(0, memcmp(want, nla_data(r.tb[PKTFILT_A_SADDR6]), 16));
	EXPECT_EQ(64, nla_get_u8(r.tb[PKTFILT_A_SADDR_PLEN]));
	EXPECT_EQ(NULL, r.tb[PKTFILT_A_SADDR4]);
	EXPECT_EQ(NULL, r.tb[PKTFILT_A_DADDR_PLEN]);
	nlmsg_free(r.msg);
}

TEST(set_ports_min_max)
{
	struct req r;

	ASSERT_EQ(0, SET(&r, "--proto", "udp", "--sport", "1000-2000",
			 "--dport", "53"));
	EXPECT_EQ(1, nla_len(r.tb[PKTFILT_A_PROTO]));
	EXPECT_EQ(17, nla_get_u8(r.tb[PKTFILT_A_PROTO]));
	EXPECT_EQ(2, nla_len(r.tb[PKTFILT_A_SPORT_MIN]));
	EXPECT_EQ(1000, nla_get_u16(r.tb[PKTFILT_A_SPORT_MIN]));
	EXPECT_EQ(2000, nla_get_u16(r.tb[PKTFILT_A_SPORT_MAX]));
	EXPECT_EQ(53, nla_get_u16(r.tb[PKTFILT_A_DPORT_MIN]));
	EXPECT_EQ(53, nla_get_u16(r.tb[PKTFILT_A_DPORT_MAX]));
	EXPECT_EQ(6, r.nattrs);
	nlmsg_free(r.msg);
}

TEST(set_dev_netns_mark_count)
{
	struct req r;

	ASSERT_EQ(0, SET(&r, "--dev", "eth0", "--netns", "1000",
			 "--mark", "0x10", "--count", "0"));
	EXPECT_EQ(2, nla_get_u32(r.tb[PKTFILT_A_IFINDEX]));
	EXPECT_EQ(1000, nla_get_u32(r.tb[PKTFILT_A_NETNS]));
	EXPECT_EQ(0x10, nla_get_u32(r.tb[PKTFILT_A_MARK]));
	EXPECT_EQ(0xffffffffu, nla_get_u32(r.tb[PKTFILT_A_MARK_MASK]));
	EXPECT_EQ(0, nla_get_u32(r.tb[PKTFILT_A_COUNT]));
	EXPECT_EQ(5, r.nattrs);
	nlmsg_free(r.msg);
}

TEST(set_dev_alone_is_in_our_netns)
{
	struct req r;

	ASSERT_EQ(0, SET(&r, "--dev", "eth0"));
	EXPECT_EQ(2, nla_get_u32(r.tb[PKTFILT_A_IFINDEX]));
	ASSERT_NE(NULL, r.tb[PKTFILT_A_NETNS]);
	EXPECT_EQ(1000, nla_get_u32(r.tb[PKTFILT_A_NETNS]));
	nlmsg_free(r.msg);

	ASSERT_EQ(0, SET(&r, "--ifindex", "2"));
	EXPECT_EQ(2, nla_get_u32(r.tb[PKTFILT_A_IFINDEX]));
	EXPECT_EQ(NULL, r.tb[PKTFILT_A_NETNS]);
	nlmsg_free(r.msg);
}

/* A GET reply as the module would send it. */
static struct nl_msg *reply(void)
{
	struct nl_msg *m = nlmsg_alloc();

	genlmsg_put(m, 0, 0, 0x20, 0, 0, PKTFILT_CMD_GET,
		    PKTFILT_GENL_VERSION);
	return m;
}

static void stats(struct nl_msg *m, __u64 base)
{
	struct nlattr *n = nla_nest_start(m, PKTFILT_A_STATS);
	int i;

	for (i = PKTFILT_STAT_SEEN; i <= PKTFILT_STAT_EXHAUSTED; i++)
		nla_put_u64(m, i, base + (__u64)i);
	nla_nest_end(m, n);
}

/* Decode like "pktfilt show" does and print into a string. */
static int show(struct nl_msg *m, struct pf_status *st, char *out,
		size_t len)
{
	struct nlattr *tb[PKTFILT_A_MAX + 1];
	FILE *f;
	int err;

	err = pf_nl_parse(m, tb);
	if (err)
		return err;
	err = pf_show_decode(tb, st);
	if (err)
		return err;
	f = fmemopen(out, len, "w");
	if (!f)
		return -1;
	pf_show_print(f, st, &world);
	fclose(f);
	return 0;
}

TEST(show_armed)
{
	struct nl_msg *m = reply();
	struct pf_status st;
	char out[1024];
	__u32 a4 = htonl(0xc0000200);

	nla_put_u8(m, PKTFILT_A_PROTO, 6);
	nla_put(m, PKTFILT_A_SADDR4, 4, &a4);
	nla_put_u8(m, PKTFILT_A_SADDR_PLEN, 24);
	nla_put_u16(m, PKTFILT_A_DPORT_MIN, 443);
	nla_put_u32(m, PKTFILT_A_IFINDEX, 2);
	nla_put_u32(m, PKTFILT_A_NETNS, 1000);
	nla_put_u32(m, PKTFILT_A_COUNT, 3);
	nla_put_u8(m, PKTFILT_A_STATE, PKTFILT_STATE_ARMED);
	nla_put_u32(m, PKTFILT_A_REMAINING, 2);
	nla_put_u32(m, PKTFILT_A_FILTER_ID, 7);
	nla_put_string(m, PKTFILT_A_REASON, "count used up");
	stats(m, 100);

	ASSERT_EQ(0, show(m, &st, out, sizeof(out)));
	/* Defaults: DPORT_MAX absent means DPORT_MIN. */
	EXPECT_EQ(443, st.filter.spec.dport.max);
	EXPECT_STREQ(
		"state:       armed\n"
		"filter id:   7\n"
		"filter:      pktfilt set --proto tcp --saddr 192.0.2.0/24 --dport 443 --netns 1000 --dev eth0 --count 3 --at l4\n"
		"at:          l4\n"
		"remaining:   2\n"
		"last disarm: count used up\n"
		"seen:        102\n"
		"matched:     103\n"
		"traced:      104\n"
		"not ready:   105\n"
		"exhausted:   106\n", out);
	nlmsg_free(m);
}

TEST(show_idle_and_defaults)
{
	struct nl_msg *m = reply();
	struct pf_status st;
	char out[1024];
	__u8 a6[16];

	nla_put_u8(m, PKTFILT_A_STATE, PKTFILT_STATE_IDLE);
	ASSERT_EQ(0, show(m, &st, out, sizeof(out)));
	EXPECT_STREQ("state:       idle\nfilter:      none\n", out);
	nlmsg_free(m);

	/* The last filter, if the module echoes one while idle. */
	m = reply();
	inet_pton(AF_INET6, "2001:db8::1", a6);
	nla_put(m, PKTFILT_A_DADDR6, 16, a6);		/* no PLEN: 128 */
	nla_put_u32(m, PKTFILT_A_MARK, 5);		/* no mask: all */
	nla_put_u8(m, PKTFILT_A_STATE, PKTFILT_STATE_IDLE);
	ASSERT_EQ(0, show(m, &st, out, sizeof(out)));
	EXPECT_EQ(128, st.filter.spec.daddr.plen);
	EXPECT_EQ(0xffffffffu, st.filter.spec.mark_mask);
	EXPECT_EQ(1, st.filter.count);			/* no COUNT: 1 */
	EXPECT_STREQ("state:       idle\n"
		     "last filter: pktfilt set --daddr 2001:db8::1 --mark 0x5 --count 1 --at l4\n"
		     "at:          l4\n",
		     out);
	nlmsg_free(m);
}

TEST(show_unlimited_and_unknown)
{
	struct nl_msg *m = reply();
	struct pf_status st;
	char out[1024];

	nla_put_u32(m, PKTFILT_A_COUNT, 0);
	nla_put_u32(m, PKTFILT_A_IFINDEX, 9);		/* not in our world */
	nla_put_u8(m, PKTFILT_A_STATE, PKTFILT_STATE_ARMED);
	ASSERT_EQ(0, show(m, &st, out, sizeof(out)));
	EXPECT_STREQ("state:       armed\n"
		     "filter:      pktfilt set --ifindex 9 --count 0 --at l4\n"
		     "at:          l4\n"
		     "remaining:   unlimited\n", out);
	nlmsg_free(m);

	m = reply();
	nla_put_u8(m, PKTFILT_A_STATE, 9);
	ASSERT_EQ(0, show(m, &st, out, sizeof(out)));
	EXPECT_STREQ("state:       9 (unknown to this pktfilt)\n"
		     "filter:      none\n", out);
	nlmsg_free(m);
}

/* Version 2: the stages GET echoes, the new counters. */
TEST(show_stages_and_new_stats)
{
	struct nl_msg *m = reply();
	struct nlattr *n;
	struct pf_status st;
	char out[1024];

	nla_put_u32(m, PKTFILT_A_COUNT, 2);
	nla_put_u32(m, PKTFILT_A_STAGES, (1U << PKTFILT_STAGE_RX) |
					 (1U << PKTFILT_STAGE_TX));
	nla_put_u8(m, PKTFILT_A_STATE, PKTFILT_STATE_ARMED);
	n = nla_nest_start(m, PKTFILT_A_STATS);
	nla_put_u64(m, PKTFILT_STAT_TRACED, 4);
	nla_put_u64(m, PKTFILT_STAT_FOLLOWED, 3);
	nla_put_u64(m, PKTFILT_STAT_DROPPED, 1);
	nla_nest_end(m, n);
	ASSERT_EQ(0, show(m, &st, out, sizeof(out)));
	EXPECT_EQ(6, st.filter.stages);
	EXPECT_STREQ("state:       armed\n"
		     "filter:      pktfilt set --count 2 --at rx,tx\n"
		     "at:          rx,tx\n"
		     "traced:      4\n"
		     "followed:    3\n"
		     "dropped:     1\n", out);
	nlmsg_free(m);

	/* Without STAGES (a version 1 module): l4. */
	m = reply();
	nla_put_u32(m, PKTFILT_A_COUNT, 1);
	nla_put_u8(m, PKTFILT_A_STATE, PKTFILT_STATE_ARMED);
	ASSERT_EQ(0, show(m, &st, out, sizeof(out)));
	EXPECT_EQ(1U << PKTFILT_STAGE_L4, st.filter.stages);
	nlmsg_free(m);

	/* STAGES of the wrong size is refused. */
	m = reply();
	nla_put_u8(m, PKTFILT_A_STAGES, 2);
	EXPECT_EQ(-EBADMSG, show(m, &st, out, sizeof(out)));
	nlmsg_free(m);
}

/* SET: STAGES as --at says, or as pf_stages_compat() made it. */
TEST(set_stages)
{
	struct nlattr *tb[PKTFILT_A_MAX + 1];
	struct pf_filter f, back;
	char err[256], msg[512];
	struct req r;
	const char *args[] = { "--at", "tx,l4", NULL };
	struct nl_msg *m;

	ASSERT_EQ(0, SET(&r, "--at", "tx,l4"));
	EXPECT_EQ(2, r.nattrs);
	ASSERT_NE(NULL, r.tb[PKTFILT_A_STAGES]);
	EXPECT_EQ(4, nla_len(r.tb[PKTFILT_A_STAGES]));
	EXPECT_EQ((1U << PKTFILT_STAGE_L4) | (1U << PKTFILT_STAGE_TX),
		  nla_get_u32(r.tb[PKTFILT_A_STAGES]));
	/* What GET would echo reads back the same. */
	ASSERT_EQ(1, pf_nl_get_filter(r.tb, &back));
	EXPECT_EQ(5, back.stages);
	nlmsg_free(r.msg);

	/* No --at (trace), a version 2 module: rx, sent. */
	ASSERT_EQ(PF_PARSE_OK, pf_parse_filter(0, (char *const *)args + 2, &f,
					       &world, err, sizeof(err)));
	EXPECT_EQ(0, f.stages);
	EXPECT_EQ(PF_COMPAT_OK, pf_stages_compat(&f, 2, PF_TRACE_DEFAULT_STAGES,
						 msg, sizeof(msg)));
	EXPECT_EQ(1U << PKTFILT_STAGE_RX, f.stages);
	m = nlmsg_alloc();
	ASSERT_NE(NULL, genlmsg_put(m, 0, 0, 0x20, 0, 0, PKTFILT_CMD_SET,
				    PKTFILT_GENL_VERSION));
	ASSERT_EQ(0, pf_nl_put_filter(m, &f));
	ASSERT_EQ(0, pf_nl_parse(m, tb));
	ASSERT_NE(NULL, tb[PKTFILT_A_STAGES]);
	EXPECT_EQ(1U << PKTFILT_STAGE_RX, nla_get_u32(tb[PKTFILT_A_STAGES]));
	nlmsg_free(m);

	/* A version 1 module: nothing sent, it traces at l4. */
	ASSERT_EQ(PF_PARSE_OK, pf_parse_filter(2, (char *const *)args, &f,
					       &world, err, sizeof(err)));
	EXPECT_EQ(PF_COMPAT_FAIL, pf_stages_compat(&f, 1, PF_TRACE_DEFAULT_STAGES,
						 msg, sizeof(msg)));
	f.stages = 0;
	EXPECT_EQ(PF_COMPAT_NOTE, pf_stages_compat(&f, 1, PF_TRACE_DEFAULT_STAGES,
						 msg, sizeof(msg)));
	m = nlmsg_alloc();
	ASSERT_NE(NULL, genlmsg_put(m, 0, 0, 0x20, 0, 0, PKTFILT_CMD_SET,
				    PKTFILT_GENL_VERSION));
	ASSERT_EQ(0, pf_nl_put_filter(m, &f));
	ASSERT_EQ(0, pf_nl_parse(m, tb));
	EXPECT_EQ(NULL, tb[PKTFILT_A_STAGES]);
	nlmsg_free(m);
}

/* The PACKET notification's new attributes pass the policy. */
TEST(event_stage_and_id)
{
	struct nlattr *tb[PKTFILT_A_MAX + 1];
	struct nl_msg *m = nlmsg_alloc();

	ASSERT_NE(NULL, genlmsg_put(m, 0, 0, 0x20, 0, 0, PKTFILT_CMD_PACKET,
				    PKTFILT_GENL_VERSION));
	nla_put_u64(m, PKTFILT_A_SEQ, 9);
	nla_put_u8(m, PKTFILT_A_STAGE, PKTFILT_STAGE_TX);
	nla_put_u64(m, PKTFILT_A_PACKET_ID, 7);
	ASSERT_EQ(0, pf_nl_parse_event(m, tb));
	EXPECT_EQ(PKTFILT_STAGE_TX, nla_get_u8(tb[PKTFILT_A_STAGE]));
	EXPECT_EQ(7, nla_get_u64(tb[PKTFILT_A_PACKET_ID]));
	nlmsg_free(m);

	/* A PACKET_ID of 4 bytes is malformed. */
	m = nlmsg_alloc();
	genlmsg_put(m, 0, 0, 0x20, 0, 0, PKTFILT_CMD_PACKET,
		    PKTFILT_GENL_VERSION);
	nla_put_u32(m, PKTFILT_A_PACKET_ID, 7);
	EXPECT_EQ(-EBADMSG, pf_nl_parse_event(m, tb));
	nlmsg_free(m);
}

TEST(show_rejects_malformed_attributes)
{
	struct nl_msg *m = reply();
	struct pf_status st;
	char out[256];
	__u8 junk[16] = { 0 };

	nla_put(m, PKTFILT_A_SADDR6, 8, junk);		/* not 16 bytes */
	EXPECT_EQ(-EBADMSG, show(m, &st, out, sizeof(out)));
	nlmsg_free(m);

	m = reply();
	nla_put(m, PKTFILT_A_SADDR4, 2, junk);		/* not 4 */
	EXPECT_EQ(-EBADMSG, show(m, &st, out, sizeof(out)));
	nlmsg_free(m);

	m = reply();
	nla_put(m, PKTFILT_A_SADDR4, 16, junk);		/* not 4 either */
	EXPECT_EQ(-EBADMSG, show(m, &st, out, sizeof(out)));
	nlmsg_free(m);

	m = reply();
	nla_put(m, PKTFILT_A_REASON, 3, "abc");		/* no NUL */
	EXPECT_EQ(-EBADMSG, show(m, &st, out, sizeof(out)));
	nlmsg_free(m);
}

/* Attributes this pktfilt does not know (a newer module) are ignored. */
TEST(show_ignores_unknown_attributes)
{
	struct nl_msg *m = reply();
	struct pf_status st;
	char out[256];

	nla_put_u8(m, PKTFILT_A_STATE, PKTFILT_STATE_IDLE);
	nla_put_u32(m, PKTFILT_A_MAX + 1, 42);
	ASSERT_EQ(0, show(m, &st, out, sizeof(out)));
	EXPECT_STREQ("state:       idle\nfilter:      none\n", out);
	nlmsg_free(m);
}

TEST_HARNESS_MAIN
