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
 *
 * The key alone would change untraced traffic: while it is on,
 * nft_do_chain() calls nft_trace_init() at every base chain for every
 * packet, and since its trace id is a hash of the skb's (6.1 has it,
 * 5.10 not) that computes the skb's flow hash if it has none (skb_get_hash_net(): a
 * flow dissector pass) and stores it as an l4 hash. The hash then decides
 * what the packet gets later: fib_multipath_hash() with
 * fib_multipath_hash_policy=1 takes an l4 hash as it is (ignoring its own
 * keys and fib_multipath_hash_seed), so forwarded flows would move between
 * ECMP next hops as pktfilt arms and disarms. So a second kprobe, at
 * nft_trace_init()'s entry (pf_nft_init_pre()), decides instead of it,
 * while the key is on only because of pktfilt:
 *  - for the traced packet it fills struct nft_traceinfo as the kernel
 *    would, without the hash (the trace id is only in the messages, which
 *    pktfilt's packets do not send), and skips the function;
 *  - for any other packet it skips the function and leaves info->trace
 *    false, as nft_do_chain() set it: the chain runs as with the key off.
 * While someone else holds the key too (a `meta nftrace set` rule
 * anywhere), nf_tables would hash every packet without pktfilt as well:
 * nft_trace_init() runs, for every packet, as it would. The count of the
 * key's users is read at each call; pktfilt's own increment is counted
 * out (pf_nft_key_mine, set before the increment and cleared after the
 * decrement, so a racing reader errs towards skipping, never towards
 * hashing a packet that the kernel alone would not hash).
 *
 * Which skb is the traced packet: the one marked, per CPU, while its gate
 * is open (pf_nft_is_traced()): the same pointer, or a clone sharing its
 * data (ip_rcv()'s skb_share_check() while a packet socket taps the
 * device), which is then followed; a new head under the same pointer
 * (skb_cow() of a clone) likewise. Any other skb with nf_trace inside the
 * graph (the user's own `meta nftrace set 1` on a reply the packet caused)
 * is not pktfilt's: no event, and its messages are sent. A packet that had
 * nf_trace already (the user's own rule, in an earlier chain) is traced as
 * the user asked, and its messages are sent: only those of packets
 * pktfilt marked are withheld.
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
 * rule is a struct nft_rule, 6.1's a struct nft_rule_dp. nft_trace_init()
 * took (info, pkt, verdict, chain) before 6.4, (info, pkt, chain) after.
 * The hash came with the trace id (struct nft_traceinfo's skbid, Kbuild's
 * PF_NFT_TRACE_SKBID): 5.10's nft_trace_init() has neither, and gets no
 * kprobe.
 *
 * Before 5.16 (no PF_FGRAPH_OPS) function_graph would record a call the
 * kprobe skips inside the graph as one of pf_nft_return(): there, inside
 * an open gate, nft_trace_notify() runs.
 *
 * Indirect calls (IBT): none made here. The kprobe handlers are called by
 * the kernel through a pointer; their addresses are taken here, so the
 * compiler gives them ENDBR64. The handlers send the function to
 * pf_nft_return(), which returns: a return, not a call, so it needs no
 * landing pad.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/jhash.h>
#include <linux/jump_label.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/netfilter.h>
#include <linux/random.h>

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
/* 1 while pktfilt's increment is in the key's count (pf_nft_others()). */
static int pf_nft_key_mine;
#ifdef PF_NFT_TRACE_SKBID
static u32 pf_nft_id_seed __read_mostly;	/* pf_nft_init_info() */
#endif

/* The packet traced on this CPU, while its gate is open. */
struct pf_nft_pkt {
	const struct sk_buff *skb;	/* its skb, or the clone seen last */
	const unsigned char *head;	/* the data that skb had */
	u64 id;				/* its packet id, or 0: none */
	bool ours;			/* its nf_trace is pktfilt's */
};
static DEFINE_PER_CPU(struct pf_nft_pkt, pf_nft_pkt);

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

/* Where the kprobes send the function: straight back to its caller. */
static noinline void notrace pf_nft_return(void)
{
	barrier();
}

/*
 * Sends the function the kprobe at @regs stopped at back to its caller,
 * without running it: returns the kprobe handler's value. Before 5.16,
 * inside a graph, function_graph would record the skipped call as one of
 * pf_nft_return(): there the function runs.
 */
static int notrace pf_nft_skip(struct pt_regs *regs)
{
#ifndef PF_FGRAPH_OPS
	if (pf_gate_is_open())
		return 0;
#endif
	pf_arch_skip_function(regs, pf_nft_return);
	return 1;
}

/*
 * Whether @skb is the packet traced on this CPU: the skb marked, or a
 * clone of it (the same data: skb_share_check() made one), which is then
 * the one followed; the marked skb with new data (pskb_expand_head())
 * likewise. Softirq, or BH disabled.
 */
static bool notrace pf_nft_is_traced(const struct sk_buff *skb)
{
	struct pf_nft_pkt *p = this_cpu_ptr(&pf_nft_pkt);

	if (!p->id || !pf_gate_is_open())
		return false;
	if (skb == p->skb) {
		p->head = skb->head;
		return true;
	}
	if (skb->head == p->head) {
		p->skb = skb;
		return true;
	}
	return false;
}

/*
 * At nft_trace_notify()'s entry, for a packet with nf_trace. Softirq or
 * process context with BH off (nf_hook_slow()), inside a traced packet's
 * graph or not.
 */
static int notrace pf_nft_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct pf_nft_info n;
	int code;

	pf_nft_args(regs, &n);
	if (!pf_nft_is_traced(n.skb)) {
		/*
		 * Another packet: one pktfilt marked, on its way after its
		 * graph (the bit cleared, no message), or the user's own
		 * nftrace (its message sent).
		 */
		if (!atomic_read(&pf_follow_n) || !pf_follow_known(n.skb))
			return 0;
		((struct sk_buff *)n.skb)->nf_trace = 0;
		return pf_nft_skip(regs);
	}
	code = n.type == NFT_TRACETYPE_POLICY ? n.policy :
	       (int)n.verdict->code;
	if (code >= 0)
		code &= NF_VERDICT_MASK;
	trace_pktfilt_nft(this_cpu_read(pf_nft_pkt.id), n.chain->table->family,
			  n.chain->table->name, n.chain->name,
			  n.handle, n.type, code,
			  (code == NFT_JUMP || code == NFT_GOTO) &&
			  n.verdict->chain ? n.verdict->chain->name : "",
			  n.netns);
	/* The user's own nftrace: traced, and their message sent. */
	if (!this_cpu_read(pf_nft_pkt.ours))
		return 0;
	return pf_nft_skip(regs);
}

static struct kprobe pf_nft_kprobe = {
	.symbol_name = "nft_trace_notify",
	.pre_handler = pf_nft_pre,
};

#ifdef PF_NFT_TRACE_SKBID
/*
 * Whether nf_tables' key has a user besides pktfilt (a `meta nftrace set`
 * rule): then it would be on without pktfilt too. pf_nft_key_mine is 1
 * from before pktfilt's increment to after its decrement: a reader that
 * races with them sees one user too few, never one too many. While the
 * count goes from 0 to 1 it reads -1 (jump_label's patching): no other
 * user. The count is read as static_key_count() would, inline: that
 * function is the kernel's, out of line (CONFIG_JUMP_LABEL), and would be
 * recorded in the traced packet's graph.
 */
static bool notrace pf_nft_others(void)
{
	return arch_atomic_read(&pf_nft_key->key.enabled) -
	       READ_ONCE(pf_nft_key_mine) > 0;
}

/*
 * nft_trace_init()'s work, but the trace id's hash of the skb, for the
 * traced packet: the id is a hash of the skb's address and input device
 * under a seed of pktfilt's, the same at each of its base chains (a
 * message of it, if the user's own nftrace lets one go, reads as one
 * packet's). Inline only: a kernel function called here would be
 * recorded in the traced packet's graph.
 */
static void notrace pf_nft_init_info(struct nft_traceinfo *info,
				     const struct nft_pktinfo *pkt,
				     struct pt_regs *regs)
{
	const struct sk_buff *skb = pkt->skb;
	const struct nft_chain *chain;

#ifdef PF_NFT_TRACE_INIT_VERDICT
	chain = (void *)regs_get_kernel_argument(regs, 3);
	info->pkt = pkt;
	info->verdict = (void *)regs_get_kernel_argument(regs, 2);
#else
	chain = (void *)regs_get_kernel_argument(regs, 2);
#endif
	info->basechain = nft_base_chain(chain);
	info->trace = true;
	info->nf_trace = skb->nf_trace;
	info->packet_dumped = false;
	info->skbid = jhash_2words(hash32_ptr(skb), skb->skb_iif,
				   pf_nft_id_seed);
}

/*
 * At nft_trace_init()'s entry: each packet at each base chain while the
 * key is on. Softirq or process context with BH off, inside a traced
 * packet's graph or not.
 */
static int notrace pf_nft_init_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct nft_traceinfo *info = (void *)regs_get_kernel_argument(regs, 0);
	const struct nft_pktinfo *pkt = (void *)regs_get_kernel_argument(regs, 1);
	struct sk_buff *skb = pkt->skb;

	/* The kernel would run it without pktfilt as well. */
	if (pf_nft_others())
		return 0;
	if (pf_nft_is_traced(skb)) {
		pf_nft_init_info(info, pkt, regs);
	} else if (skb->nf_trace && atomic_read(&pf_follow_n) &&
		   pf_follow_known(skb)) {
		/* Marked by pktfilt, on its way after its graph. */
		skb->nf_trace = 0;
	}
	/* Else info->trace stays false: as with the key off. */
	return pf_nft_skip(regs);
}

static struct kprobe pf_nft_init_kprobe = {
	.symbol_name = "nft_trace_init",
	.pre_handler = pf_nft_init_pre,
};

static int pf_nft_init_register(void)
{
	pf_nft_id_seed = get_random_u32();
	pf_nft_init_kprobe.addr = NULL;
	pf_nft_init_kprobe.flags = 0;
	return register_kprobe(&pf_nft_init_kprobe);
}

static void pf_nft_init_unregister(void)
{
	unregister_kprobe(&pf_nft_init_kprobe);
}
#else
/* nft_trace_init() hashes nothing (5.10). */
static int pf_nft_init_register(void)
{
	return 0;
}

static void pf_nft_init_unregister(void) {}
#endif

/*
 * Arming: the kprobes, if nf_tables is loaded. Nothing fails the arming:
 * without nf_tables, or its functions, the graphs have no verdicts, and
 * the key stays off. The key is turned on by pf_nft_trace_on(). Process
 * context, under pf_lock.
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
	ret = pf_nft_init_register();
	if (ret) {
		pr_warn_once("no nftables verdicts: cannot probe nft_trace_init (%d)\n",
			     ret);
		goto err_put;
	}
	pf_nft_kprobe.addr = NULL;
	pf_nft_kprobe.flags = 0;
	ret = register_kprobe(&pf_nft_kprobe);
	if (ret) {
		pr_warn_once("no nftables verdicts: cannot probe nft_trace_notify (%d)\n",
			     ret);
		goto err_init;
	}
	pf_nft_probe_on = true;
	return;

err_init:
	pf_nft_init_unregister();
err_put:
	symbol_put(nft_trace_enabled);
	pf_nft_key = NULL;
}

/*
 * nftables tracing on, once a packet may be traced (an eager filter at
 * arming, a lazy one at READY): while the key is on, every packet through
 * a base chain pays a call of nft_trace_init() and its kprobe, which a
 * lazy wait must not. Under pf_lock.
 */
void pf_nft_trace_on(void)
{
	lockdep_assert_held(&pf_lock);
	if (!pf_nft_probe_on || pf_nft_key_mine)
		return;
	/* Before the increment (pf_nft_others()). */
	WRITE_ONCE(pf_nft_key_mine, 1);
	static_branch_inc(pf_nft_key);
}

/* Disarming: the key back, the kprobes gone. Under pf_lock. */
void pf_nft_disarm(void)
{
	lockdep_assert_held(&pf_lock);
	if (!pf_nft_key)
		return;
	if (pf_nft_key_mine) {
		static_branch_dec(pf_nft_key);
		/* After the decrement (pf_nft_others()). */
		WRITE_ONCE(pf_nft_key_mine, 0);
	}
	/* Returns once no handler runs (synchronize_rcu() inside). */
	unregister_kprobe(&pf_nft_kprobe);
	pf_nft_init_unregister();
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
	struct pf_nft_pkt *p = this_cpu_ptr(&pf_nft_pkt);
	bool marked = false;

	if (!READ_ONCE(pf_nft_probe_on))
		return false;
	p->ours = !skb->nf_trace || followed;
	if (!skb->nf_trace) {
		skb->nf_trace = 1;
		marked = true;
	}
	p->skb = skb;
	p->head = skb->head;
	p->id = id;
	return marked;
}

/* The gate closed: the marked packet's graph ended on this CPU. */
void notrace pf_nft_end(void)
{
	this_cpu_write(pf_nft_pkt.id, 0);
}

/* The gate did not open: the skb is still the hook's, as it was. */
void notrace pf_nft_unmark(struct sk_buff *skb, bool marked)
{
	if (marked)
		skb->nf_trace = 0;
	this_cpu_write(pf_nft_pkt.id, 0);
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
