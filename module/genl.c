// SPDX-License-Identifier: GPL-2.0
/*
 * The "pktfilt" generic netlink family: set, get, clear, stats, and a
 * multicast notification per traced packet.
 *
 * Every attribute is checked by a strict policy (new family: resv_start_op
 * is 0, so unknown attributes, trailing bytes and reserved header bits are
 * refused by the core); what a policy cannot express is checked here, and
 * every refusal carries an extack message.
 *
 * Who may do what (docs/limits.md, "Who may see what"):
 *  - SET, CLEAR, GET (whose reply names the traced hosts) and STATS need
 *    CAP_NET_ADMIN in the initial user namespace: GENL_ADMIN_PERM, checked
 *    by the core, which refuses with EPERM before the family is reached.
 *    STATS too: its matched and traced counters tell whoever can send
 *    packets which ones match, so probing recovers the predicates GET
 *    hides.
 *  - The "events" group (every traced packet's tuple, ifindex, netns and
 *    mark) can be joined with CAP_NET_ADMIN only, as drop_monitor's.
 *  - The ops run without the genetlink mutex (parallel_ops): pf_lock
 *    serializes them, and arming's slow calls (synchronize_net(), kprobe
 *    registration) stall no other family.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/filter.h>
#include <linux/in.h>
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include <pktfilt.h>
#include "internal.h"

static const struct nla_policy pf_set_policy[PKTFILT_A_MAX + 1] = {
	[PKTFILT_A_PROTO]	= { .type = NLA_U8 },
	[PKTFILT_A_SADDR4]	= NLA_POLICY_EXACT_LEN(4),
	[PKTFILT_A_SADDR6]	= NLA_POLICY_EXACT_LEN(16),
	[PKTFILT_A_SADDR_PLEN]	= NLA_POLICY_MAX(NLA_U8, 128),
	[PKTFILT_A_DADDR4]	= NLA_POLICY_EXACT_LEN(4),
	[PKTFILT_A_DADDR6]	= NLA_POLICY_EXACT_LEN(16),
	[PKTFILT_A_DADDR_PLEN]	= NLA_POLICY_MAX(NLA_U8, 128),
	[PKTFILT_A_SPORT_MIN]	= { .type = NLA_U16 },
	[PKTFILT_A_SPORT_MAX]	= { .type = NLA_U16 },
	[PKTFILT_A_DPORT_MIN]	= { .type = NLA_U16 },
	[PKTFILT_A_DPORT_MAX]	= { .type = NLA_U16 },
	[PKTFILT_A_IFINDEX]	= NLA_POLICY_MIN(NLA_U32, 1),
	[PKTFILT_A_NETNS]	= NLA_POLICY_MIN(NLA_U32, 1),
	[PKTFILT_A_MARK]	= { .type = NLA_U32 },
	[PKTFILT_A_MARK_MASK]	= { .type = NLA_U32 },
	[PKTFILT_A_COUNT]	= { .type = NLA_U32 },
	[PKTFILT_A_FLAGS]	= NLA_POLICY_MASK(NLA_U32, PKTFILT_F_ALL),
	[PKTFILT_A_STAGES]	= NLA_POLICY_MASK(NLA_U32, PKTFILT_STAGES_ALL),
	[PKTFILT_A_BPF]		= { .type = NLA_BINARY,
				    .len = BPF_MAXINSNS * sizeof(struct sock_filter) },
	/* .len counts the characters, not the NUL: as pf_bpf_parse(). */
	[PKTFILT_A_EXPR]	= { .type = NLA_NUL_STRING, .len = PF_EXPR_MAX },
	/* 1 to PF_HOLD_MS_MAX, checked in pf_cmd_set() (a policy range is s16) */
	[PKTFILT_A_HOLD_MS]	= { .type = NLA_U32 },
	[PKTFILT_A_SNAPLEN]	= NLA_POLICY_MAX(NLA_U32, PKTFILT_SNAPLEN_MAX),
};

static const struct nla_policy pf_ready_policy[PKTFILT_A_MAX + 1] = {
	[PKTFILT_A_FILTER_ID]	= NLA_POLICY_MIN(NLA_U32, 1),
};

static struct genl_family pf_family;

enum pf_mcgrp { PF_MCGRP_EVENTS };

static const struct genl_multicast_group pf_mcgrps[] = {
	[PF_MCGRP_EVENTS] = {
		.name = PKTFILT_MCGRP_EVENTS,
#ifdef PF_GENL_MCAST_CAP_NET_ADMIN
		.flags = GENL_MCAST_CAP_NET_ADMIN,
#else
		/* 5.10: the only permission a group can ask for. */
		.cap_sys_admin = 1,
#endif
	},
};

static int pf_parse_addr(struct genl_info *info, int a4, int a6, int aplen,
			 struct pf_addr_pred *p)
{
	struct nlattr **tb = info->attrs;

	if (tb[a4] && tb[a6]) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[a6],
				    "an address is either IPv4 or IPv6, not both");
		return -EINVAL;
	}
	if (tb[a4]) {
		p->family = PF_FAMILY_IPV4;
		p->plen = 32;
		nla_memcpy(p->addr, tb[a4], 4);
	} else if (tb[a6]) {
		p->family = PF_FAMILY_IPV6;
		p->plen = 128;
		nla_memcpy(p->addr, tb[a6], 16);
	} else if (tb[aplen]) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[aplen],
				    "prefix length without an address");
		return -EINVAL;
	}
	if (tb[aplen]) {
		u8 plen = nla_get_u8(tb[aplen]);

		if (plen > p->plen && p->family == PF_FAMILY_IPV4) {
			NL_SET_ERR_MSG_ATTR(info->extack, tb[aplen],
					    "prefix length must be 0-32 for IPv4");
			return -EINVAL;
		}
		p->plen = plen;
	}
	return 0;
}

static int pf_parse_ports(struct genl_info *info, int amin, int amax,
			  struct pf_port_pred *p)
{
	struct nlattr **tb = info->attrs;

	if (!tb[amin]) {
		if (tb[amax]) {
			NL_SET_ERR_MSG_ATTR(info->extack, tb[amax],
					    "port range end without a start");
			return -EINVAL;
		}
		return 0;
	}
	p->set = 1;
	p->min = nla_get_u16(tb[amin]);
	p->max = tb[amax] ? nla_get_u16(tb[amax]) : p->min;
	if (p->min > p->max) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[amax],
				    "port range end is below its start");
		return -EINVAL;
	}
	return 0;
}

static int pf_parse_spec(struct genl_info *info, struct pf_spec *s)
{
	struct nlattr **tb = info->attrs;
	int ret;

	if (tb[PKTFILT_A_PROTO]) {
		s->proto = nla_get_u8(tb[PKTFILT_A_PROTO]);
		if (s->proto != IPPROTO_TCP && s->proto != IPPROTO_UDP &&
		    s->proto != IPPROTO_ICMP && s->proto != IPPROTO_ICMPV6) {
			NL_SET_ERR_MSG_ATTR(info->extack, tb[PKTFILT_A_PROTO],
					    "protocol must be TCP, UDP, ICMP or ICMPv6");
			return -EINVAL;
		}
	}
	ret = pf_parse_addr(info, PKTFILT_A_SADDR4, PKTFILT_A_SADDR6,
			    PKTFILT_A_SADDR_PLEN, &s->saddr);
	if (ret)
		return ret;
	ret = pf_parse_addr(info, PKTFILT_A_DADDR4, PKTFILT_A_DADDR6,
			    PKTFILT_A_DADDR_PLEN, &s->daddr);
	if (ret)
		return ret;
	ret = pf_parse_ports(info, PKTFILT_A_SPORT_MIN, PKTFILT_A_SPORT_MAX,
			     &s->sport);
	if (ret)
		return ret;
	ret = pf_parse_ports(info, PKTFILT_A_DPORT_MIN, PKTFILT_A_DPORT_MAX,
			     &s->dport);
	if (ret)
		return ret;
	if (tb[PKTFILT_A_IFINDEX])
		s->ifindex = nla_get_u32(tb[PKTFILT_A_IFINDEX]);
	if (tb[PKTFILT_A_NETNS])
		s->netns = nla_get_u32(tb[PKTFILT_A_NETNS]);
	if (tb[PKTFILT_A_MARK]) {
		s->has_mark = 1;
		s->mark = nla_get_u32(tb[PKTFILT_A_MARK]);
		s->mark_mask = tb[PKTFILT_A_MARK_MASK] ?
			       nla_get_u32(tb[PKTFILT_A_MARK_MASK]) : ~0U;
	} else if (tb[PKTFILT_A_MARK_MASK]) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[PKTFILT_A_MARK_MASK],
				    "mark mask without a mark");
		return -EINVAL;
	}
	if (!pf_spec_valid(s)) {
		NL_SET_ERR_MSG(info->extack,
			       "predicates can never match a packet (mixed address families, or ICMP with IPv6 / ICMPv6 with IPv4, or ports with ICMP)");
		return -EINVAL;
	}
	return 0;
}

static int pf_cmd_set(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **tb = info->attrs;
	struct pf_filter *f;
	int ret;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f) {
		NL_SET_ERR_MSG(info->extack, "out of memory");
		return -ENOMEM;
	}
	ret = pf_parse_spec(info, &f->spec);
	if (!ret)
		ret = pf_bpf_parse(f, tb[PKTFILT_A_BPF], tb[PKTFILT_A_EXPR],
				   info->extack);
	if (ret) {
		pf_filter_free(f);
		return ret;
	}
	f->count = tb[PKTFILT_A_COUNT] ? nla_get_u32(tb[PKTFILT_A_COUNT]) : 1;
	f->flags = tb[PKTFILT_A_FLAGS] ? nla_get_u32(tb[PKTFILT_A_FLAGS]) : 0;
	/* Version 1 knew only the protocol handlers. */
	f->stages = BIT(PKTFILT_STAGE_L4);
	if (tb[PKTFILT_A_STAGES]) {
		f->stages = nla_get_u32(tb[PKTFILT_A_STAGES]);
		if (!f->stages) {
			NL_SET_ERR_MSG_ATTR(info->extack, tb[PKTFILT_A_STAGES],
					    "no stage to trace at");
			pf_filter_free(f);
			return -EINVAL;
		}
	}
	if (tb[PKTFILT_A_HOLD_MS] && !(f->flags & PKTFILT_F_LAZY)) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[PKTFILT_A_HOLD_MS],
				    "a hold bound is for a lazy filter only (PKTFILT_F_LAZY)");
		pf_filter_free(f);
		return -EINVAL;
	}
	f->hold_ms = tb[PKTFILT_A_HOLD_MS] ?
		     nla_get_u32(tb[PKTFILT_A_HOLD_MS]) : PF_HOLD_MS_DEFAULT;
	if (!f->hold_ms || f->hold_ms > PF_HOLD_MS_MAX) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[PKTFILT_A_HOLD_MS],
				    "the hold bound is 1 to 60000 ms");
		pf_filter_free(f);
		return -ERANGE;
	}
	f->snaplen = tb[PKTFILT_A_SNAPLEN] ?
		     nla_get_u32(tb[PKTFILT_A_SNAPLEN]) :
		     PKTFILT_SNAPLEN_DEFAULT;
	f->owner_portid = info->snd_portid;
	f->owner_net = genl_info_net(info);
	/* genetlink runs doit in the sender's context. */
	f->arm_tgid = task_tgid_nr(current);
	return pf_filter_set(f, info->extack);	/* consumes f */
}

static int pf_cmd_ready(struct sk_buff *skb, struct genl_info *info)
{
	if (!info->attrs[PKTFILT_A_FILTER_ID]) {
		NL_SET_ERR_MSG(info->extack,
			       "READY needs the lazy filter's id (PKTFILT_A_FILTER_ID)");
		return -EINVAL;
	}
	return pf_filter_ready(nla_get_u32(info->attrs[PKTFILT_A_FILTER_ID]),
			       info->extack);
}

static int pf_cmd_clear(struct sk_buff *skb, struct genl_info *info)
{
	pf_filter_clear("cleared by pktfilt clear");
	return 0;
}

static int pf_put_addr(struct sk_buff *msg, const struct pf_addr_pred *p,
		       int a4, int a6, int aplen)
{
	if (p->family == PF_FAMILY_IPV4) {
		if (nla_put(msg, a4, 4, p->addr))
			return -EMSGSIZE;
	} else if (p->family == PF_FAMILY_IPV6) {
		if (nla_put(msg, a6, 16, p->addr))
			return -EMSGSIZE;
	} else {
		return 0;
	}
	return nla_put_u8(msg, aplen, p->plen);
}

static int pf_put_ports(struct sk_buff *msg, const struct pf_port_pred *p,
			int amin, int amax)
{
	if (!p->set)
		return 0;
	if (nla_put_u16(msg, amin, p->min) || nla_put_u16(msg, amax, p->max))
		return -EMSGSIZE;
	return 0;
}

static int pf_put_filter(struct sk_buff *msg, const struct pf_filter *f)
{
	const struct pf_spec *s = &f->spec;

	if ((s->proto && nla_put_u8(msg, PKTFILT_A_PROTO, s->proto)) ||
	    pf_put_addr(msg, &s->saddr, PKTFILT_A_SADDR4, PKTFILT_A_SADDR6,
			PKTFILT_A_SADDR_PLEN) ||
	    pf_put_addr(msg, &s->daddr, PKTFILT_A_DADDR4, PKTFILT_A_DADDR6,
			PKTFILT_A_DADDR_PLEN) ||
	    pf_put_ports(msg, &s->sport, PKTFILT_A_SPORT_MIN,
			 PKTFILT_A_SPORT_MAX) ||
	    pf_put_ports(msg, &s->dport, PKTFILT_A_DPORT_MIN,
			 PKTFILT_A_DPORT_MAX) ||
	    (s->ifindex && nla_put_u32(msg, PKTFILT_A_IFINDEX, s->ifindex)) ||
	    (s->netns && nla_put_u32(msg, PKTFILT_A_NETNS, s->netns)) ||
	    (s->has_mark && (nla_put_u32(msg, PKTFILT_A_MARK, s->mark) ||
			     nla_put_u32(msg, PKTFILT_A_MARK_MASK,
					 s->mark_mask))) ||
	    nla_put_u32(msg, PKTFILT_A_COUNT, f->count) ||
	    nla_put_u32(msg, PKTFILT_A_FLAGS, f->flags) ||
	    nla_put_u32(msg, PKTFILT_A_STAGES, f->stages) ||
	    nla_put_u32(msg, PKTFILT_A_SNAPLEN, f->snaplen) ||
	    (f->expr && nla_put_string(msg, PKTFILT_A_EXPR, f->expr)) ||
	    nla_put_u32(msg, PKTFILT_A_FILTER_ID, f->id) ||
	    (f->count && nla_put_u32(msg, PKTFILT_A_REMAINING,
				     (u32)max_t(s64, atomic64_read(&f->remaining), 0))))
		return -EMSGSIZE;
	return 0;
}

static int pf_put_stats(struct sk_buff *msg)
{
	struct pf_stats st;
	struct nlattr *nest;

	pf_filter_stats(&st);
	nest = nla_nest_start(msg, PKTFILT_A_STATS);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(msg, PKTFILT_STAT_SEEN, st.seen, PKTFILT_STAT_PAD) ||
	    nla_put_u64_64bit(msg, PKTFILT_STAT_MATCHED, st.matched,
			      PKTFILT_STAT_PAD) ||
	    nla_put_u64_64bit(msg, PKTFILT_STAT_TRACED, st.traced,
			      PKTFILT_STAT_PAD) ||
	    nla_put_u64_64bit(msg, PKTFILT_STAT_NOT_READY, st.not_ready,
			      PKTFILT_STAT_PAD) ||
	    nla_put_u64_64bit(msg, PKTFILT_STAT_EXHAUSTED, st.exhausted,
			      PKTFILT_STAT_PAD) ||
	    nla_put_u64_64bit(msg, PKTFILT_STAT_GATE_MISSED, st.gate_missed,
			      PKTFILT_STAT_PAD) ||
	    nla_put_u64_64bit(msg, PKTFILT_STAT_FOLLOWED, st.followed,
			      PKTFILT_STAT_PAD) ||
	    nla_put_u64_64bit(msg, PKTFILT_STAT_DROPPED, st.dropped,
			      PKTFILT_STAT_PAD) ||
	    nla_put_u64_64bit(msg, PKTFILT_STAT_HELD, st.held,
			      PKTFILT_STAT_PAD) ||
	    nla_put_u64_64bit(msg, PKTFILT_STAT_HOLD_EXPIRED, st.hold_expired,
			      PKTFILT_STAT_PAD) ||
	    nla_put_u64_64bit(msg, PKTFILT_STAT_HOLD_FLUSHED, st.hold_flushed,
			      PKTFILT_STAT_PAD) ||
	    nla_put_u64_64bit(msg, PKTFILT_STAT_HOLD_FULL, st.hold_full,
			      PKTFILT_STAT_PAD)) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

/* GET and STATS: the state, counters and, for GET, the armed filter. */
static int pf_cmd_get(struct sk_buff *skb, struct genl_info *info)
{
	bool with_filter = info->genlhdr->cmd == PKTFILT_CMD_GET;
	const struct pf_filter *f;
	const char *reason;
	struct sk_buff *msg;
	void *hdr;
	const char *problem;
	int ret = -EMSGSIZE;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg) {
		NL_SET_ERR_MSG(info->extack, "out of memory");
		return -ENOMEM;
	}
	hdr = genlmsg_put_reply(msg, info, &pf_family, 0, info->genlhdr->cmd);
	if (!hdr)
		goto fail;

	mutex_lock(&pf_lock);
	f = pf_filter_get_locked();
	/*
	 * A version 1 tool knows neither stages nor expressions: it would
	 * show such a filter as if it traced every matching packet at l4.
	 */
	if (f && with_filter && info->genlhdr->version < 2 &&
	    (f->stages != BIT(PKTFILT_STAGE_L4) || f->prog)) {
		bool expr = f->prog;

		mutex_unlock(&pf_lock);
		nlmsg_free(msg);
		if (expr)
			NL_SET_ERR_MSG(info->extack,
				       "the armed filter has a filter expression, which this pktfilt (netlink version 1) cannot show: use one of version 2 or later (pktfilt --version)");
		else
			NL_SET_ERR_MSG(info->extack,
				       "the armed filter traces at stages other than l4 (--at), which this pktfilt (netlink version 1) cannot show: use one of version 2 or later (pktfilt --version)");
		return -EOPNOTSUPP;
	}
	reason = pf_filter_reason_locked();
	problem = pf_filter_problem_locked();
	if (nla_put_u8(msg, PKTFILT_A_STATE,
		       f ? PKTFILT_STATE_ARMED : PKTFILT_STATE_IDLE) ||
	    (*problem && nla_put_string(msg, PKTFILT_A_PROBLEM, problem)) ||
	    (f && with_filter && pf_put_filter(msg, f)) ||
	    (f && (f->flags & PKTFILT_F_LAZY) &&
	     (nla_put_u8(msg, PKTFILT_A_LAZY, (u8)atomic_read(&f->lazy)) ||
	      nla_put_u32(msg, PKTFILT_A_HOLD_MS, f->hold_ms))) ||
	    nla_put_u32(msg, PKTFILT_A_HELD, pf_hold_count()) ||
	    (!pf_rxcore_possible() && nla_put_flag(msg, PKTFILT_A_RX_FROM_IP)) ||
	    (!f && *reason && nla_put_string(msg, PKTFILT_A_REASON, reason))) {
		mutex_unlock(&pf_lock);
		goto fail;
	}
	mutex_unlock(&pf_lock);
	if (pf_put_stats(msg))
		goto fail;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
fail:
	nlmsg_free(msg);
	NL_SET_ERR_MSG(info->extack, "reply does not fit in a message");
	return ret;
}

static const struct genl_ops pf_ops[] = {
	{
		.cmd	= PKTFILT_CMD_SET,
		.doit	= pf_cmd_set,
		.policy	= pf_set_policy,
		.maxattr = PKTFILT_A_MAX,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= PKTFILT_CMD_GET,
		.doit	= pf_cmd_get,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= PKTFILT_CMD_CLEAR,
		.doit	= pf_cmd_clear,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= PKTFILT_CMD_STATS,
		.doit	= pf_cmd_get,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= PKTFILT_CMD_READY,
		.doit	= pf_cmd_ready,
		.policy	= pf_ready_policy,
		.maxattr = PKTFILT_A_MAX,
		.flags	= GENL_ADMIN_PERM,
	},
};

static struct genl_family pf_family __ro_after_init = {
	.name		= PKTFILT_GENL_NAME,
	.version	= PKTFILT_GENL_VERSION,
	.netnsok	= true,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= pf_ops,
	.n_ops		= ARRAY_SIZE(pf_ops),
	.mcgrps		= pf_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(pf_mcgrps),
};

/* The size of a PACKET notification: about 150 bytes, not a page. */
static size_t pf_packet_msg_size(int alen)
{
	return nla_total_size_64bit(sizeof(u64)) +	/* SEQ */
	       nla_total_size(sizeof(u32)) +		/* CPU */
	       nla_total_size(sizeof(u8)) +		/* PROTO */
	       2 * nla_total_size(alen) +		/* SADDR, DADDR */
	       2 * nla_total_size(sizeof(u16)) +	/* SPORT, DPORT */
	       3 * nla_total_size(sizeof(u32)) +	/* IFINDEX, NETNS, MARK */
	       nla_total_size(sizeof(u8)) +		/* STAGE */
	       nla_total_size_64bit(sizeof(u64)) +	/* PACKET_ID */
	       nla_total_size_64bit(sizeof(u64));	/* HELD_NS */
}

/* Multicasts one traced packet. Softirq context: atomic, best effort. */
void notrace pf_genl_notify_packet(const struct pf_key *key, u64 seq, u8 stage,
				   u64 id, u64 held_ns)
{
	struct sk_buff *msg;
	void *hdr;
	int alen = key->family == PF_FAMILY_IPV4 ? 4 : 16;
	int sa = key->family == PF_FAMILY_IPV4 ? PKTFILT_A_SADDR4 : PKTFILT_A_SADDR6;
	int da = key->family == PF_FAMILY_IPV4 ? PKTFILT_A_DADDR4 : PKTFILT_A_DADDR6;

	if (!genl_has_listeners(&pf_family, &init_net, PF_MCGRP_EVENTS))
		return;
	msg = genlmsg_new(pf_packet_msg_size(alen), GFP_ATOMIC);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &pf_family, 0, PKTFILT_CMD_PACKET);
	if (!hdr ||
	    nla_put_u64_64bit(msg, PKTFILT_A_SEQ, seq, PKTFILT_A_PAD) ||
	    nla_put_u32(msg, PKTFILT_A_CPU, smp_processor_id()) ||
	    nla_put_u8(msg, PKTFILT_A_PROTO, key->proto) ||
	    nla_put(msg, sa, alen, key->saddr) ||
	    nla_put(msg, da, alen, key->daddr) ||
	    nla_put_u16(msg, PKTFILT_A_SPORT, key->sport) ||
	    nla_put_u16(msg, PKTFILT_A_DPORT, key->dport) ||
	    nla_put_u32(msg, PKTFILT_A_IFINDEX, key->ifindex) ||
	    nla_put_u32(msg, PKTFILT_A_NETNS, key->netns) ||
	    nla_put_u32(msg, PKTFILT_A_MARK, key->mark) ||
	    nla_put_u8(msg, PKTFILT_A_STAGE, stage) ||
	    nla_put_u64_64bit(msg, PKTFILT_A_PACKET_ID, id, PKTFILT_A_PAD) ||
	    (held_ns && nla_put_u64_64bit(msg, PKTFILT_A_HELD_NS, held_ns,
					  PKTFILT_A_PAD))) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&pf_family, msg, 0, PF_MCGRP_EVENTS, GFP_ATOMIC);
}

/* HELD: a lazy filter holds a packet and waits for READY. Process context. */
void pf_genl_notify_held(u32 filter_id, u32 held)
{
	struct sk_buff *msg;
	void *hdr;

	if (!genl_has_listeners(&pf_family, &init_net, PF_MCGRP_EVENTS))
		return;
	msg = genlmsg_new(2 * nla_total_size(sizeof(u32)), GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &pf_family, 0, PKTFILT_CMD_HELD);
	if (!hdr || nla_put_u32(msg, PKTFILT_A_FILTER_ID, filter_id) ||
	    nla_put_u32(msg, PKTFILT_A_HELD, held)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&pf_family, msg, 0, PF_MCGRP_EVENTS, GFP_KERNEL);
}

static int pf_netlink_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event == NETLINK_URELEASE && n->protocol == NETLINK_GENERIC)
		pf_filter_owner_gone(n->net, n->portid);
	return NOTIFY_DONE;
}

static struct notifier_block pf_netlink_nb = {
	.notifier_call = pf_netlink_event,
};

int pf_genl_init(void)
{
	int ret;

	ret = netlink_register_notifier(&pf_netlink_nb);
	if (ret)
		return ret;
	ret = genl_register_family(&pf_family);
	if (ret)
		netlink_unregister_notifier(&pf_netlink_nb);
	return ret;
}

void pf_genl_exit(void)
{
	genl_unregister_family(&pf_family);
	netlink_unregister_notifier(&pf_netlink_nb);
}
