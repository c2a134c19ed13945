// SPDX-License-Identifier: GPL-2.0
/*
 * "pktfilt show": decode a GET reply and print it, one "key: value" per
 * line so that it reads well and greps well. The filter is printed as the
 * "pktfilt set" command line that would arm it again.
 */
#include <errno.h>
#include <string.h>

#include <netlink/attr.h>

#include "show.h"
#include "nl.h"

static const struct nla_policy pf_stat_policy[PKTFILT_STAT_MAX + 1] = {
	[PKTFILT_STAT_SEEN]		= { .type = NLA_U64 },
	[PKTFILT_STAT_MATCHED]		= { .type = NLA_U64 },
	[PKTFILT_STAT_TRACED]		= { .type = NLA_U64 },
	[PKTFILT_STAT_NOT_READY]	= { .type = NLA_U64 },
	[PKTFILT_STAT_EXHAUSTED]	= { .type = NLA_U64 },
	[PKTFILT_STAT_GATE_MISSED]	= { .type = NLA_U64 },
	[PKTFILT_STAT_FOLLOWED]		= { .type = NLA_U64 },
	[PKTFILT_STAT_DROPPED]		= { .type = NLA_U64 },
	[PKTFILT_STAT_HELD]		= { .type = NLA_U64 },
	[PKTFILT_STAT_HOLD_EXPIRED]	= { .type = NLA_U64 },
	[PKTFILT_STAT_HOLD_FLUSHED]	= { .type = NLA_U64 },
	[PKTFILT_STAT_HOLD_FULL]	= { .type = NLA_U64 },
};

static const char *const pf_stat_names[PKTFILT_STAT_MAX + 1] = {
	[PKTFILT_STAT_SEEN]		= "seen",
	[PKTFILT_STAT_MATCHED]		= "matched",
	[PKTFILT_STAT_TRACED]		= "traced",
	[PKTFILT_STAT_NOT_READY]	= "not ready",
	[PKTFILT_STAT_EXHAUSTED]	= "exhausted",
	[PKTFILT_STAT_GATE_MISSED]	= "gate missed",
	[PKTFILT_STAT_FOLLOWED]		= "followed",
	[PKTFILT_STAT_DROPPED]		= "dropped",
	[PKTFILT_STAT_HELD]		= "held",
	[PKTFILT_STAT_HOLD_EXPIRED]	= "hold expired",
	[PKTFILT_STAT_HOLD_FLUSHED]	= "hold flushed",
	[PKTFILT_STAT_HOLD_FULL]	= "hold full",
};

static int pf_show_decode_stats(struct nlattr *nest, struct pf_status *st)
{
	struct nlattr *tb[PKTFILT_STAT_MAX + 1];
	int i;

	if (nla_parse_nested(tb, PKTFILT_STAT_MAX, nest,
			     pf_stat_policy) < 0)
		return -EBADMSG;
	for (i = 0; i <= PKTFILT_STAT_MAX; i++) {
		if (!tb[i] || !pf_stat_names[i])
			continue;
		st->stat[i] = nla_get_u64(tb[i]);
		st->has_stat |= 1U << i;
	}
	return 0;
}

int pf_show_decode(struct nlattr **tb, void *arg)
{
	struct pf_status *st = arg;
	int ret;

	memset(st, 0, sizeof(*st));
	ret = pf_nl_get_filter(tb, &st->filter);
	if (ret < 0)
		return ret;
	st->has_filter = ret;
	if (tb[PKTFILT_A_STATE]) {
		st->has_state = 1;
		st->state = nla_get_u8(tb[PKTFILT_A_STATE]);
	}
	if (tb[PKTFILT_A_REMAINING]) {
		st->has_remaining = 1;
		st->remaining = nla_get_u32(tb[PKTFILT_A_REMAINING]);
	}
	if (tb[PKTFILT_A_FILTER_ID]) {
		st->has_id = 1;
		st->id = nla_get_u32(tb[PKTFILT_A_FILTER_ID]);
	}
	if (tb[PKTFILT_A_LAZY]) {
		st->has_lazy = 1;
		st->lazy = nla_get_u8(tb[PKTFILT_A_LAZY]);
	}
	if (tb[PKTFILT_A_HOLD_MS])
		st->hold_ms = nla_get_u32(tb[PKTFILT_A_HOLD_MS]);
	if (tb[PKTFILT_A_HELD])
		st->held = nla_get_u32(tb[PKTFILT_A_HELD]);
	if (tb[PKTFILT_A_REASON])
		nla_strlcpy(st->reason, tb[PKTFILT_A_REASON],
			    sizeof(st->reason));
	if (tb[PKTFILT_A_PROBLEM])
		nla_strlcpy(st->problem, tb[PKTFILT_A_PROBLEM],
			    sizeof(st->problem));
	st->rx_from_ip = !!tb[PKTFILT_A_RX_FROM_IP];
	if (tb[PKTFILT_A_STATS])
		return pf_show_decode_stats(tb[PKTFILT_A_STATS], st);
	return 0;
}

static void pf_show_state(FILE *out, const struct pf_status *st)
{
	if (!st->has_state)
		return;
	if (st->state == PKTFILT_STATE_ARMED)
		fprintf(out, "state:       armed\n");
	else if (st->state == PKTFILT_STATE_IDLE)
		fprintf(out, "state:       idle\n");
	else
		fprintf(out, "state:       %u (unknown to this pktfilt)\n",
			st->state);
}

/*
 * Armed: the filter, even with no predicate (it then matches everything).
 * Idle: the last filter, if the module still reports one.
 */
static void pf_show_filter(FILE *out, const struct pf_status *st,
			   const struct pf_resolver *res)
{
	int armed = st->has_state && st->state == PKTFILT_STATE_ARMED;
	char buf[1024];

	if (st->filter_hidden) {
		fprintf(out, "filter:      (not shown: reading it needs CAP_NET_ADMIN)\n");
		return;
	}
	if (!armed && !st->has_filter) {
		fprintf(out, "filter:      none\n");
		return;
	}
	pf_format_filter(&st->filter, res, buf, sizeof(buf));
	fprintf(out, "%s pktfilt set %s\n",
		armed ? "filter:     " : "last filter:", buf);
	pf_format_stages(st->filter.stages, buf, sizeof(buf));
	fprintf(out, "at:          %s\n", buf);
	if (armed && st->has_remaining)
		fprintf(out, "remaining:   %u\n", st->remaining);
	else if (armed && !st->filter.count)
		fprintf(out, "remaining:   unlimited\n");
	if (!armed || !st->has_lazy)
		return;
	/* A lazy filter (pktfilt trace): where it is. */
	if (st->lazy == PKTFILT_LAZY_WAITING)
		fprintf(out, "lazy:        waiting (nothing patched; a matching packet is held up to %u ms)\n",
			st->hold_ms);
	else if (st->lazy == PKTFILT_LAZY_HOLDING)
		fprintf(out, "lazy:        holding (%u packet%s, the scope being patched)\n",
			st->held, st->held == 1 ? "" : "s");
	else if (st->lazy == PKTFILT_LAZY_ARMED)
		fprintf(out, "lazy:        armed (the scope patched)\n");
	else
		fprintf(out, "lazy:        %u (unknown to this pktfilt)\n",
			st->lazy);
}

void pf_show_print(FILE *out, const struct pf_status *st,
		   const struct pf_resolver *res)
{
	int i;

	pf_show_state(out, st);
	if (st->has_id)
		fprintf(out, "filter id:   %u\n", st->id);
	pf_show_filter(out, st, res);
	if (st->reason[0])
		fprintf(out, "last disarm: %s\n", st->reason);
	if (st->problem[0])
		fprintf(out, "problem:     %s\n", st->problem);
	if (st->rx_from_ip)
		fprintf(out, "rx:          from ip_rcv() and ipv6_rcv() on: this kernel's device receive cannot be hooked (arm64 before 6.2)\n");
	for (i = 0; i <= PKTFILT_STAT_MAX; i++) {
		if (!(st->has_stat & (1U << i)))
			continue;
		char label[16];

		snprintf(label, sizeof(label), "%s:", pf_stat_names[i]);
		fprintf(out, "%-12s %llu\n", label,
			(unsigned long long)st->stat[i]);
	}
}
