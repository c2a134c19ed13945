// SPDX-License-Identifier: GPL-2.0
/*
 * The tx stage: a locally generated packet's IP output, taken at netfilter's
 * LOCAL_OUT.
 *
 * Every locally generated IPv4 and IPv6 packet (TCP, UDP, ICMP, raw)
 * passes the LOCAL_OUT hooks: __ip_local_out() and __ip6_local_out() call
 * them, and so does ip6_xmit() (TCP over IPv6); SRv6 encapsulation calls
 * them on the receive and forward path too, with seg6_input_finish()
 * (dst_input()) to go on with. While a filter traces at tx, a hook of
 * ours sits first at LOCAL_OUT in every network namespace (a
 * pernet_operations registered at arming, so new namespaces get it too).
 * For a packet to trace it takes the packet (NF_STOLEN) and, with the
 * gate open, goes on where the kernel would have: the LOCAL_OUT hooks
 * after ours, then the okfn the hook was given, as nf_reinject() does for
 * a queued packet. So nothing runs twice (a hook before ours, VRF's
 * l3mdev output, IPv4's OutRequests) and a packet the hook meets on
 * another path goes on along that path.
 *
 * The graph's root is nf_hook_slow(): it is given a copy of the hook
 * array with, after the last hook, one of ours that calls the okfn, so
 * that the hooks and the output are one call tree (our functions are
 * notrace: the okfn's callees show under nf_hook_slow()). Its indices
 * are the real array's, so a later hook's NF_QUEUE is reinjected right.
 *
 * The caller's return value is lost: it sees 0 (stolen) where the output
 * may have said NET_XMIT_CN or an error; only for the traced packets. A
 * caller that goes on otherwise than with its okfn when the hooks accept
 * (xfrm_output_resume()'s nested states, xfrm's packet offload) gets the
 * okfn, as a packet queued by NFQUEUE and reinjected does.
 *
 * Indirect calls (IBT): the okfn, a kernel function whose address the
 * kernel stores in nf_hook_state (so it keeps its ENDBR64), called as
 * nf_reinject() calls it. Our two hooks are called by netfilter through
 * nf_hook_entry.hook; their addresses are taken here, so they have
 * ENDBR64.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>

#include "internal.h"

/*
 * Up to this many LOCAL_OUT hooks are continued as one call tree; with
 * more (none seen), the okfn is called after nf_hook_slow(), a second
 * tree in the graph.
 */
#define PF_TX_CHAIN_MAX	64

/*
 * This CPU's copy of the hook array, with our okfn hook at its end. Busy
 * is claimed with a cmpxchg: on a PREEMPT_RT kernel whose bottom halves
 * take no per-CPU lock (6.18 on, PREEMPT_RT_NEEDS_BH_LOCK off), two tasks
 * on one CPU could otherwise share it.
 */
struct pf_tx_chain {
	int busy;
	unsigned long buf[DIV_ROUND_UP(sizeof(struct nf_hook_entries) +
				       (PF_TX_CHAIN_MAX + 1) *
				       sizeof(struct nf_hook_entry),
				       sizeof(unsigned long))];
};
static DEFINE_PER_CPU(struct pf_tx_chain, pf_tx_chain);
static bool pf_tx_installed;

static unsigned int pf_tx_hook(void *priv, struct sk_buff *skb,
			       const struct nf_hook_state *state);

/*
 * Should @skb, at LOCAL_OUT, be traced (PF_TRACE: the gate is open),
 * held (PF_HOLD: hold.c has it) or let go (PF_PASS)? BH off.
 */
static enum pf_verdict notrace pf_tx_decide(struct pf_filter *f,
					    struct sk_buff *skb,
					    const struct pf_hold_ctx *ctx)
{
	struct pf_pkt pkt;

	pkt.id = 0;
	pkt.matched = false;
	if (unlikely(atomic_read(&pf_follow_n)))
		pkt.id = pf_follow_find(skb, ctx->family, f->id,
					PKTFILT_STAGE_TX, ctx->net->ns.inum);
	if (!pkt.id && pf_ip_quick_reject(f, skb, ctx->family))
		return PF_PASS;
	if (!pf_key_from_ip(skb, ctx->family, ctx->dev ? ctx->dev->ifindex : 0,
			    ctx->net, &pkt.key, &pkt.fp))
		return PF_PASS;
	pkt.skb = skb;
	pkt.stage = PKTFILT_STAGE_TX;
	pkt.root = PF_ROOT_NF_OUT;
	pkt.hold = ctx;
	return pf_begin(f, &pkt);
}

/* The end of the copied chain: the okfn, as nf_reinject() calls it. */
static unsigned int notrace pf_tx_okfn_hook(void *priv, struct sk_buff *skb,
					    const struct nf_hook_state *state)
{
	state->okfn(state->net, state->sk, skb);
	return NF_STOLEN;
}

/*
 * Goes on with @skb after our LOCAL_OUT hook: the hooks after it, then
 * the okfn. BH off, RCU. Our hook not found (removed while the packet
 * was held): the whole chain, as the kernel would run it now.
 */
static void notrace pf_tx_continue(struct sk_buff *skb,
				   struct nf_hook_state *st)
{
	const struct nf_hook_entries *e = NULL;
	struct pf_tx_chain *c;
	struct nf_hook_entries *copy;
	unsigned int i, n = 0, from = 0;

	if (st->pf == NFPROTO_IPV4)
		e = rcu_dereference(st->net->nf.hooks_ipv4[NF_INET_LOCAL_OUT]);
#if IS_ENABLED(CONFIG_IPV6)
	else
		e = rcu_dereference(st->net->nf.hooks_ipv6[NF_INET_LOCAL_OUT]);
#endif
	if (e)
		n = e->num_hook_entries;
	for (i = 0; i < n; i++) {
		if (e->hooks[i].hook == pf_tx_hook) {
			from = i + 1;
			break;
		}
	}
	/* Nested (an okfn's packet replayed untraced here): the array's. */
	if (n > PF_TX_CHAIN_MAX || this_cpu_cmpxchg(pf_tx_chain.busy, 0, 1)) {
		if (!e || nf_hook_slow(skb, st, e, from) == 1)
			st->okfn(st->net, st->sk, skb);
		return;
	}
	c = this_cpu_ptr(&pf_tx_chain);
	copy = (struct nf_hook_entries *)c->buf;
	/* An unregistered hook becomes accept_all under us (WRITE_ONCE). */
	for (i = 0; i < n; i++) {
		copy->hooks[i].hook = READ_ONCE(e->hooks[i].hook);
		copy->hooks[i].priv = READ_ONCE(e->hooks[i].priv);
	}
	copy->hooks[n].hook = pf_tx_okfn_hook;
	copy->hooks[n].priv = NULL;
	copy->num_hook_entries = n + 1;
	nf_hook_slow(skb, st, copy, from);
	this_cpu_write(pf_tx_chain.busy, 0);
}

static unsigned int notrace pf_tx_hook(void *priv, struct sk_buff *skb,
				       const struct nf_hook_state *state)
{
	struct pf_hold_ctx ctx = {
		.dev = state->out,
		.net = state->net,
		.sk = state->sk,
		.family = state->pf == NFPROTO_IPV4 ? PF_FAMILY_IPV4 :
						      PF_FAMILY_IPV6,
		.okfn = state->okfn,
	};
	struct nf_hook_state st;
	struct pf_filter *f;
	enum pf_verdict v;

	/*
	 * From inside a graph (a reply sent from a traced packet's receive,
	 * or the traced packet's own encapsulation): part of that graph,
	 * and nothing of ours may run there (every function called would
	 * show in it).
	 */
	if (pf_gate_is_open())
		return NF_ACCEPT;
	f = pf_stage_filter(PKTFILT_STAGE_TX);
	if (!f || irqs_disabled())
		return NF_ACCEPT;
	/*
	 * Most packets end here, before bottom halves go off: on PREEMPT_RT
	 * local_bh_disable() takes a per-CPU lock (6.1-rt: 800 instructions
	 * a packet while a trace waited at tx, 450 on the others).
	 */
	if (likely(!atomic_read(&pf_follow_n)) &&
	    pf_ip_quick_reject(f, skb, ctx.family))
		return NF_ACCEPT;

	/* Task context too (sendmsg): no preemption or softirq inside. */
	local_bh_disable();
	v = pf_tx_decide(f, skb, &ctx);
	if (v == PF_PASS) {
		local_bh_enable();
		return NF_ACCEPT;
	}
	/* Held (hold.c): goes on when it is replayed; else now, traced. */
	if (v == PF_TRACE) {
		st = *state;
		pf_tx_continue(skb, &st);
		pf_rcv_end();
	}
	local_bh_enable();
	return NF_STOLEN;
}

/*
 * A packet the hook held, replayed (hold.c: BH off, RCU): traced if it
 * is to be, and goes on as the hook lets a packet it traces go on.
 */
void notrace pf_tx_replay(struct sk_buff *skb, const struct pf_hold_ctx *ctx)
{
	struct pf_filter *f = pf_stage_filter(PKTFILT_STAGE_TX);
	enum pf_verdict v = PF_PASS;
	struct nf_hook_state st;

	if (f)
		v = pf_tx_decide(f, skb, ctx);
	/* Held anew (not expected: the replay's mark decides): hold.c's. */
	if (v == PF_HOLD)
		return;
	nf_hook_state_init(&st, NF_INET_LOCAL_OUT,
			   ctx->family == PF_FAMILY_IPV4 ? NFPROTO_IPV4 :
							   NFPROTO_IPV6,
			   NULL, ctx->dev, ctx->sk, ctx->net, ctx->okfn);
	pf_tx_continue(skb, &st);
	if (v == PF_TRACE)
		pf_rcv_end();
}

static const struct nf_hook_ops pf_tx_ops[] = {
	{
		.hook		= pf_tx_hook,
		.pf		= NFPROTO_IPV4,
		.hooknum	= NF_INET_LOCAL_OUT,
		.priority	= NF_IP_PRI_FIRST,
	},
#if IS_ENABLED(CONFIG_IPV6)
	{
		.hook		= pf_tx_hook,
		.pf		= NFPROTO_IPV6,
		.hooknum	= NF_INET_LOCAL_OUT,
		.priority	= NF_IP6_PRI_FIRST,
	},
#endif
};

static int pf_tx_net_init(struct net *net)
{
	return nf_register_net_hooks(net, pf_tx_ops, ARRAY_SIZE(pf_tx_ops));
}

static void pf_tx_net_exit(struct net *net)
{
	nf_unregister_net_hooks(net, pf_tx_ops, ARRAY_SIZE(pf_tx_ops));
}

static struct pernet_operations pf_tx_net_ops = {
	.init = pf_tx_net_init,
	.exit = pf_tx_net_exit,
};

/* Under pf_lock. */
int pf_tx_install(struct netlink_ext_ack *extack)
{
	int ret;

	if (pf_tx_installed)
		return 0;
	ret = register_pernet_subsys(&pf_tx_net_ops);
	if (ret) {
		NL_SET_ERR_MSG(extack,
			       "cannot register the netfilter LOCAL_OUT hooks of --at tx");
		return ret;
	}
	pf_tx_installed = true;
	return 0;
}

/* Under pf_lock. Netfilter waits for the hooks' callers to finish. */
void pf_tx_remove(void)
{
	if (!pf_tx_installed)
		return;
	unregister_pernet_subsys(&pf_tx_net_ops);
	synchronize_net();
	pf_tx_installed = false;
}
