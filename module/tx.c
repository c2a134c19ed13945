// SPDX-License-Identifier: GPL-2.0
/*
 * The tx stage: a locally generated packet's IP output, taken at netfilter's
 * LOCAL_OUT.
 *
 * Every locally generated IPv4 and IPv6 packet (TCP, UDP, ICMP, raw) passes
 * the LOCAL_OUT hooks: __ip_local_out() and __ip6_local_out() call them,
 * and so does ip6_xmit() (TCP over IPv6). While a filter traces at tx, a
 * hook of ours sits first at LOCAL_OUT in every network namespace (a
 * pernet_operations registered at arming, so new namespaces get it too).
 * For a packet to trace it takes the packet (NF_STOLEN) and sends it again
 * with ip_local_out() or ip6_local_out() while the gate is open, and lets
 * that one pass when it comes by (pf_tx_again). ip_local_out() is the root
 * of the graph: the header fix-ups done a moment earlier (idempotent:
 * lengths and checksum), the LOCAL_OUT hooks (netfilter OUTPUT,
 * conntrack), routing and POSTROUTING, the neighbour output, the qdisc
 * and the driver's transmit (for veth, the hand-off to the peer).
 *
 * The caller's return value is lost: it sees 0 (sent) where the output
 * may have said NET_XMIT_CN or an error; only for the traced packets.
 * With VRF (l3mdev) the packet would pass the VRF's output twice: untested.
 *
 * Indirect calls (IBT): none made here; ip_local_out() and
 * ip6_local_out() are direct calls. The hook is called by netfilter
 * through nf_hook_ops.hook; its address is taken here, so it has ENDBR64.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>

#include "internal.h"

/* The skb this CPU is sending again, traced: the hook lets it pass. */
static DEFINE_PER_CPU(struct sk_buff *, pf_tx_again);
static bool pf_tx_installed;

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
	pkt.root = ctx->family == PF_FAMILY_IPV4 ? PF_ROOT_IP_OUT :
						   PF_ROOT_IP6_OUT;
	pkt.hold = ctx;
	return pf_begin(f, &pkt);
}

/* Sends @skb again, the hook letting it pass. BH off. */
static void notrace pf_tx_send(struct sk_buff *skb,
			       const struct pf_hold_ctx *ctx)
{
	this_cpu_write(pf_tx_again, skb);
	if (ctx->family == PF_FAMILY_IPV4)
		ip_local_out(ctx->net, ctx->sk, skb);
#if IS_ENABLED(CONFIG_IPV6)
	else
		ip6_local_out(ctx->net, ctx->sk, skb);
#endif
	this_cpu_write(pf_tx_again, NULL);
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
	};
	struct pf_filter *f;
	enum pf_verdict v;

	/*
	 * Our own send, or one from inside a graph (a reply sent from a
	 * traced packet's receive): part of that graph, and nothing of ours
	 * may run there (every function called would show in it).
	 */
	if (this_cpu_read(pf_tx_again) == skb || pf_gate_is_open())
		return NF_ACCEPT;
	f = pf_stage_filter(PKTFILT_STAGE_TX);
	if (!f || irqs_disabled())
		return NF_ACCEPT;

	/* Task context too (sendmsg): no preemption or softirq inside. */
	local_bh_disable();
	v = pf_tx_decide(f, skb, &ctx);
	if (v == PF_PASS) {
		local_bh_enable();
		return NF_ACCEPT;
	}
	/* Held (hold.c): sent when it is replayed; else sent now, traced. */
	if (v == PF_TRACE) {
		pf_tx_send(skb, &ctx);
		pf_rcv_end();
	}
	local_bh_enable();
	return NF_STOLEN;
}

/*
 * A packet the hook held, replayed (hold.c: BH off, RCU): traced if it
 * is to be, and sent on as the hook sends a packet it traces.
 */
void notrace pf_tx_replay(struct sk_buff *skb, const struct pf_hold_ctx *ctx)
{
	struct pf_filter *f = pf_stage_filter(PKTFILT_STAGE_TX);
	enum pf_verdict v = PF_PASS;

	if (f)
		v = pf_tx_decide(f, skb, ctx);
	/* Held anew (not expected: the replay's mark decides): hold.c's. */
	if (v == PF_HOLD)
		return;
	pf_tx_send(skb, ctx);
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
