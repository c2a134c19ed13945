// SPDX-License-Identifier: GPL-2.0
/*
 * nftables verdicts inside the graph: the kernel's own nftables tracing,
 * for exactly the traced packet, without a rule of the user's.
 *
 * nf_tables traces a packet whose skb->nf_trace bit is set while its
 * nft_trace_enabled static key is on (what `meta nftrace set 1` does:
 * nft_meta.c bumps the key for each such rule): at each rule that decides
 * something, each return and each base chain's policy, nft_do_chain()
 * calls nft_trace_notify(), which sends an NFT_MSG_TRACE to the
 * NFNLGRP_NFTRACE listeners (`nft monitor trace`). So, while a filter is
 * armed:
 *  - the key is on (one more user of it: static_branch_inc(), from
 *    symbol_get(), so pktfilt.ko keeps no dependency on nf_tables.ko: if
 *    nf_tables is not loaded when the filter is armed, there are no
 *    verdicts, and nothing else changes), from the arming of an eager
 *    filter or the READY of a lazy one: not while a lazy filter waits;
 *  - a traced packet's skb gets nf_trace when its gate opens, if it did
 *    not have it (pf_nft_mark());
 *  - a kprobe at nft_trace_notify()'s entry emits pktfilt_nft with what
 *    the message would have said (table, chain, rule handle, verdict,
 *    jump target, policy) and returns at once without running the
 *    function: no NFNLGRP_NFTRACE message leaves for pktfilt's packets.
 *    The event is recorded in the packet's own context, so it lands in
 *    the function_graph output at its place in the graph (nft_trace_notify
 *    shows there as a leaf, which the reader leaves out with nft_trace_init
 *    and __nft_trace_packet: they run because of pktfilt).
 * Untraced packets never have the bit from pktfilt: for them nf_tables
 * only calls nft_trace_init() per base chain while the key is on (armed
 * and past a lazy wait only), and nothing is sent or recorded. A packet that had nf_trace
 * already (the user's own `meta nftrace set 1`) is traced as the user
 * asked, and its messages are sent: only those of packets pktfilt marked
 * are withheld.
 *
 * The bit stays on the skb after the gate closes (the skb may be freed or
 * queued by then, pktfilt cannot touch it): a marked packet that goes on
 * (forwarded, queued to another namespace's backlog) and passes nf_tables
 * again outside a graph is recognized by the follow table
 * (pf_follow_known()): no event (no graph), no message, and the bit is
 * cleared. After disarm the key is off and nothing is traced.
 *
 * nft_trace_notify()'s prototype changed in 6.4 (Kbuild tells which from
 * the headers): (info) before, with the
 * chain, rule and verdict in struct nft_traceinfo; (pkt, verdict, rule,
 * info) after, the chain found at the end of the rule blob
 * (nft_rule_dp_last, as the kernel's nft_trace_get_chain() does). 5.10's
 * rule is a struct nft_rule, 6.1's a struct nft_rule_dp.
 *
 * Indirect calls (IBT): none made here. The kprobe handler is called by
 * the kernel through a pointer; its address is taken here, so the compiler
 * gives it ENDBR64. The handler sends the function to pf_nft_return(),
 * which returns: a return, not a call, so it needs no landing pad.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jump_label.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/netfilter.h>

#if IS_ENABLED(CONFIG_NF_TABLES)
#include <net/netfilter/nf_tables.h>
#include <net/netfilter/nf_tables_core.h>
#endif

#include "arch.h"
#include "internal.h"
#include "trace.h"

#if IS_ENABLED(CONFIG_NF_TABLES)

static struct static_key_false *pf_nft_key;	/* nf_tables' key, held */
static bool pf_nft_probe_on;
static DEFINE_PER_CPU(u64, pf_nft_id);		/* the packet traced, or 0 */
static DEFINE_PER_CPU(bool, pf_nft_ours);	/* its nf_trace is pktfilt's */

/* What the kernel's message would say, taken from its arguments. */
struct pf_nft_info {
	const struct nft_chain *chain;
	const struct nft_verdict *verdict;
	const struct sk_buff *skb;
	unsigned int netns;
	u64 handle;		/* 0: no rule (policy, end of chain) */
	u8 type;		/* enum nft_trace_types */
	u8 policy;
};

#ifdef PF_NFT_TRACE_NOTIFY_PKT
static const struct nft_chain *notrace
pf_nft_rule_chain(const struct nft_rule_dp *rule,
		  const struct nft_traceinfo *info)
{
	const struct nft_rule_dp_last *last;

	if (!rule)
		return &info->basechain->chain;
	while (!rule->is_last)
		rule = nft_rule_next(rule);
	last = (const struct nft_rule_dp_last *)rule;
	return last->chain ?: &info->basechain->chain;
}

static void notrace pf_nft_args(struct pt_regs *regs, struct pf_nft_info *n)
{
	const struct nft_pktinfo *pkt = (void *)regs_get_kernel_argument(regs, 0);
	const struct nft_rule_dp *rule = (void *)regs_get_kernel_argument(regs, 2);
	const struct nft_traceinfo *info = (void *)regs_get_kernel_argument(regs, 3);

	n->verdict = (void *)regs_get_kernel_argument(regs, 1);
	n->skb = pkt->skb;
	n->netns = nft_net(pkt)->ns.inum;
	n->type = info->type;
	n->policy = info->basechain->policy;
	n->chain = pf_nft_rule_chain(rule, info);
	n->handle = 0;
	if (rule && !rule->is_last &&
	    !(info->type == NFT_TRACETYPE_RETURN &&
	      n->verdict->code == NFT_CONTINUE))
		n->handle = rule->handle;
}
#else
static void notrace pf_nft_args(struct pt_regs *regs, struct pf_nft_info *n)
{
	const struct nft_traceinfo *info = (void *)regs_get_kernel_argument(regs, 0);

	n->verdict = info->verdict;
	n->skb = info->pkt->skb;
	n->netns = nft_net(info->pkt)->ns.inum;
	n->type = info->type;
	n->policy = info->basechain->policy;
	n->chain = info->chain ?: &info->basechain->chain;
	n->handle = 0;
	if (info->rule &&
#ifdef PF_NFT_RULE_DP
	    !info->rule->is_last &&
#endif
	    !(info->type == NFT_TRACETYPE_RETURN &&
	      info->verdict->code == NFT_CONTINUE))
		n->handle = info->rule->handle;
}
#endif

/* Where the kprobe sends nft_trace_notify(): straight back to its caller. */
static noinline void notrace pf_nft_return(void)
{
	barrier();
}

/*
 * At nft_trace_notify()'s entry, for a packet with nf_trace. Softirq or
 * process context with BH off (nf_hook_slow()), inside a traced packet's
 * graph or not.
 */
static int notrace pf_nft_pre(struct kprobe *kp, struct pt_regs *regs)
{
	u64 id = this_cpu_read(pf_nft_id);
	struct pf_nft_info n;
	int code;

	pf_nft_args(regs, &n);
	if (!id || !pf_gate_is_open()) {
		/* A packet pktfilt marked, on its way after its graph. */
		if (!pf_follow_known(n.skb))
			return 0;
		((struct sk_buff *)n.skb)->nf_trace = 0;
	} else {
		/* The user's own nftrace: traced, and their message sent. */
		bool ours = this_cpu_read(pf_nft_ours);

		code = n.type == NFT_TRACETYPE_POLICY ? n.policy :
		       (int)n.verdict->code;
		if (code >= 0)
			code &= NF_VERDICT_MASK;
		trace_pktfilt_nft(id, n.chain->table->family,
				  n.chain->table->name, n.chain->name,
				  n.handle, n.type, code,
				  (code == NFT_JUMP || code == NFT_GOTO) &&
				  n.verdict->chain ? n.verdict->chain->name : "",
				  n.netns);
		if (!ours)
			return 0;
#ifndef PF_FGRAPH_OPS
		/*
		 * Inside the graph, where function_graph would record the call
		 * as one of pf_nft_return() (5.10): the function runs, and a
		 * listener of nft monitor trace gets this packet's messages.
		 */
		return 0;
#endif
	}
	pf_arch_skip_function(regs, pf_nft_return);
	return 1;
}

static struct kprobe pf_nft_kprobe = {
	.symbol_name = "nft_trace_notify",
	.pre_handler = pf_nft_pre,
};

static bool pf_nft_key_on;	/* our increment of nf_tables' key */

/*
 * Arming: the kprobe, if nf_tables is loaded. Nothing fails the arming:
 * without nf_tables, or its function, the graphs have no verdicts. The
 * key is turned on by pf_nft_trace_on(). Process context, under pf_lock.
 */
void pf_nft_arm(void)
{
	int ret;

	lockdep_assert_held(&pf_lock);
	if (pf_nft_key)
		return;
	pf_nft_key = symbol_get(nft_trace_enabled);
	if (!pf_nft_key)
		return;
	pf_nft_kprobe.addr = NULL;
	pf_nft_kprobe.flags = 0;
	ret = register_kprobe(&pf_nft_kprobe);
	if (ret) {
		pr_warn_once("no nftables verdicts: cannot probe nft_trace_notify (%d)\n",
			     ret);
		symbol_put(nft_trace_enabled);
		pf_nft_key = NULL;
		return;
	}
	pf_nft_probe_on = true;
}

/*
 * nftables tracing on, once a packet may be traced (an eager filter at
 * arming, a lazy one at READY): while the key is on, every packet through
 * a base chain pays nft_trace_init(), which a lazy wait must not. Under
 * pf_lock.
 */
void pf_nft_trace_on(void)
{
	lockdep_assert_held(&pf_lock);
	if (!pf_nft_key || pf_nft_key_on)
		return;
	static_branch_inc(pf_nft_key);
	pf_nft_key_on = true;
}

/* Disarming: the key back, the kprobe gone. Under pf_lock. */
void pf_nft_disarm(void)
{
	lockdep_assert_held(&pf_lock);
	if (!pf_nft_key)
		return;
	if (pf_nft_key_on)
		static_branch_dec(pf_nft_key);
	pf_nft_key_on = false;
	/* Returns once no handler runs (synchronize_rcu() inside). */
	unregister_kprobe(&pf_nft_kprobe);
	pf_nft_probe_on = false;
	symbol_put(nft_trace_enabled);
	pf_nft_key = NULL;
}

/*
 * The traced packet @skb of id @id, right before its gate opens: nftables
 * traces it. Its nf_trace bit, if it has one already, is the user's, or
 * pktfilt's from an earlier stage if it was @followed. Returns whether it
 * was marked now, for pf_nft_unmark() if the gate does not open after all.
 */
bool notrace pf_nft_mark(struct sk_buff *skb, u64 id, bool followed)
{
	bool marked = false;

	if (!READ_ONCE(pf_nft_probe_on))
		return false;
	this_cpu_write(pf_nft_ours, !skb->nf_trace || followed);
	if (!skb->nf_trace) {
		skb->nf_trace = 1;
		marked = true;
	}
	this_cpu_write(pf_nft_id, id);
	return marked;
}

/* The gate closed: the marked packet's graph ended on this CPU. */
void notrace pf_nft_end(void)
{
	this_cpu_write(pf_nft_id, 0);
}

/* The gate did not open: the skb is still the hook's, as it was. */
void notrace pf_nft_unmark(struct sk_buff *skb, bool marked)
{
	if (marked)
		skb->nf_trace = 0;
	this_cpu_write(pf_nft_id, 0);
}

#else /* !CONFIG_NF_TABLES */

void pf_nft_arm(void) {}
void pf_nft_trace_on(void) {}
void pf_nft_disarm(void) {}
bool notrace pf_nft_mark(struct sk_buff *skb, u64 id, bool followed)
{
	return false;
}

void notrace pf_nft_end(void) {}
void notrace pf_nft_unmark(struct sk_buff *skb, bool marked) {}

#endif
