// SPDX-License-Identifier: GPL-2.0
/*
 * Wrapping the protocol receive handlers.
 *
 * inet_protos[] and inet6_protos[] hold pointers to const structs (some in
 * net_hotdata on newer kernels), so the struct itself is never written: a
 * copy with our .handler goes into the slot with cmpxchg(), and the original
 * pointer goes back the same way. The IP layer calls the slot under
 * rcu_read_lock(), so after synchronize_net() no CPU is inside a wrapper.
 *
 * Each wrapper calls the original handler through the kernel's own struct,
 * i.e. through a pointer the IP layer calls anyway (IBT-safe), and returns
 * its value unchanged: negative means resubmit, and for IPv6 positive means
 * "next header".
 */
#include <linux/in.h>
#include <linux/sched/clock.h>
#include <net/protocol.h>

#include "internal.h"

struct pf_hook {
	u8 proto;
	u8 family;
	bool installed;
	int (*wrapper)(struct sk_buff *skb);
	const struct net_protocol *orig4;
	struct net_protocol copy4;
#if IS_ENABLED(CONFIG_IPV6)
	const struct inet6_protocol *orig6;
	struct inet6_protocol copy6;
#endif
};

static int pf_tcp4_rcv(struct sk_buff *skb);
static int pf_udp4_rcv(struct sk_buff *skb);
static int pf_icmp4_rcv(struct sk_buff *skb);
static int pf_tcp6_rcv(struct sk_buff *skb);
static int pf_udp6_rcv(struct sk_buff *skb);
static int pf_icmp6_rcv(struct sk_buff *skb);

static struct pf_hook pf_hooks[PF_SLOT_NUM] = {
	[PF_SLOT_TCP4]	= { IPPROTO_TCP, PF_FAMILY_IPV4, .wrapper = pf_tcp4_rcv },
	[PF_SLOT_UDP4]	= { IPPROTO_UDP, PF_FAMILY_IPV4, .wrapper = pf_udp4_rcv },
	[PF_SLOT_ICMP4]	= { IPPROTO_ICMP, PF_FAMILY_IPV4, .wrapper = pf_icmp4_rcv },
	[PF_SLOT_TCP6]	= { IPPROTO_TCP, PF_FAMILY_IPV6, .wrapper = pf_tcp6_rcv },
	[PF_SLOT_UDP6]	= { IPPROTO_UDP, PF_FAMILY_IPV6, .wrapper = pf_udp6_rcv },
	[PF_SLOT_ICMP6]	= { IPPROTO_ICMPV6, PF_FAMILY_IPV6, .wrapper = pf_icmp6_rcv },
};

u8 notrace pf_slot_proto(enum pf_slot slot)
{
	return pf_hooks[slot].proto;
}

u8 notrace pf_slot_family(enum pf_slot slot)
{
	return pf_hooks[slot].family;
}

/*
 * The common body of the wrappers. notrace: the graph must start at the
 * original handler, not at pktfilt.
 */
static __always_inline int pf_hook_call(struct sk_buff *skb, enum pf_slot slot)
{
	const struct pf_hook *h = &pf_hooks[slot];

#if IS_ENABLED(CONFIG_IPV6)
	if (h->family == PF_FAMILY_IPV6)
		return h->orig6->handler(skb);
#endif
	return h->orig4->handler(skb);
}

/*
 * The same, timed (timing.c). The clock is not read while the gate is
 * open: for a traced packet the time runs to after the gate is closed.
 */
static int notrace pf_hook_rcv_timed(struct sk_buff *skb, enum pf_slot slot)
{
	u64 matched = this_cpu_read(pf_stats.matched);
	u64 t0 = local_clock();
	struct pf_filter *f = pf_rcv_filter(skb, slot);
	enum pf_timing_kind kind = PF_TIMING_TRACED;
	bool traced;
	int ret;

	if (!f) {
		pf_timing_add(PF_TIMING_QUICK, local_clock() - t0);
		return pf_hook_call(skb, slot);
	}
	traced = pf_rcv_begin(f, skb, slot);
	if (!traced) {
		if (this_cpu_read(pf_stats.matched) == matched) {
			pf_timing_add(PF_TIMING_NOMATCH, local_clock() - t0);
			ret = pf_hook_call(skb, slot);
			pf_timing_add(PF_TIMING_NOMATCH_TOTAL, local_clock() - t0);
			return ret;
		}
		kind = PF_TIMING_UNTRACED;
	}
	ret = pf_hook_call(skb, slot);
	if (traced)
		pf_rcv_end();
	pf_timing_add(kind, local_clock() - t0);
	return ret;
}

static __always_inline int pf_hook_rcv(struct sk_buff *skb, enum pf_slot slot)
{
	struct pf_filter *f;
	bool traced;
	int ret;

	if (static_branch_unlikely(&pf_timing_key))
		return pf_hook_rcv_timed(skb, slot);
	f = pf_rcv_filter(skb, slot);
	if (!f)
		return pf_hook_call(skb, slot);
	traced = pf_rcv_begin(f, skb, slot);
	ret = pf_hook_call(skb, slot);
	if (traced)
		pf_rcv_end();
	return ret;
}

static notrace int pf_tcp4_rcv(struct sk_buff *skb)
{
	return pf_hook_rcv(skb, PF_SLOT_TCP4);
}

static notrace int pf_udp4_rcv(struct sk_buff *skb)
{
	return pf_hook_rcv(skb, PF_SLOT_UDP4);
}

static notrace int pf_icmp4_rcv(struct sk_buff *skb)
{
	return pf_hook_rcv(skb, PF_SLOT_ICMP4);
}

static notrace int pf_tcp6_rcv(struct sk_buff *skb)
{
	return pf_hook_rcv(skb, PF_SLOT_TCP6);
}

static notrace int pf_udp6_rcv(struct sk_buff *skb)
{
	return pf_hook_rcv(skb, PF_SLOT_UDP6);
}

static notrace int pf_icmp6_rcv(struct sk_buff *skb)
{
	return pf_hook_rcv(skb, PF_SLOT_ICMP6);
}

/* Returns 1 if installed, 0 if the slot is empty (IPv6 disabled), or -errno. */
static int pf_hook_install(struct pf_hook *h)
{
	if (h->family == PF_FAMILY_IPV4) {
		const struct net_protocol *orig, *old;

		orig = rcu_dereference_protected(inet_protos[h->proto],
						 lockdep_is_held(&pf_lock));
		if (!orig)
			return 0;
		h->orig4 = orig;
		h->copy4 = *orig;
		h->copy4.handler = h->wrapper;
		old = cmpxchg((const struct net_protocol __force **)
			      &inet_protos[h->proto], orig, &h->copy4);
		if (old != orig)
			return -EBUSY;
	} else {
#if IS_ENABLED(CONFIG_IPV6)
		const struct inet6_protocol *orig, *old;

		orig = rcu_dereference_protected(inet6_protos[h->proto],
						 lockdep_is_held(&pf_lock));
		if (!orig)
			return 0;
		h->orig6 = orig;
		h->copy6 = *orig;
		h->copy6.handler = h->wrapper;
		old = cmpxchg((const struct inet6_protocol __force **)
			      &inet6_protos[h->proto], orig, &h->copy6);
		if (old != orig)
			return -EBUSY;
#else
		return 0;
#endif
	}
	h->installed = true;
	return 1;
}

/* Puts the original back; the caller then runs synchronize_net(). */
static void pf_hook_restore(struct pf_hook *h)
{
	const void *old;

	if (h->family == PF_FAMILY_IPV4) {
		old = cmpxchg((const struct net_protocol __force **)
			      &inet_protos[h->proto], &h->copy4, h->orig4);
		if (old != &h->copy4)
			goto stolen;
	} else {
#if IS_ENABLED(CONFIG_IPV6)
		old = cmpxchg((const struct inet6_protocol __force **)
			      &inet6_protos[h->proto], &h->copy6, h->orig6);
		if (old != &h->copy6)
			goto stolen;
#endif
	}
	h->installed = false;
	return;
stolen:
	/* Someone replaced our wrapper: leave the slot to them. */
	pr_err("pktfilt: protocol %u slot changed behind our back, not restored\n",
	       h->proto);
	h->installed = false;
}

int pf_hooks_install(unsigned int slots, struct netlink_ext_ack *extack)
{
	unsigned int i, added = 0;
	int ret;

	for (i = 0; i < PF_SLOT_NUM; i++) {
		if (!(slots & BIT(i)) || pf_hooks[i].installed)
			continue;
		ret = pf_hook_install(&pf_hooks[i]);
		if (ret < 0) {
			NL_SET_ERR_MSG(extack,
				       "a protocol handler slot is in use by another module");
			pf_hooks_remove(added);
			return ret;
		}
		if (ret)
			added |= BIT(i);
	}
	if (!(pf_hooks_installed() & slots)) {
		NL_SET_ERR_MSG(extack,
			       "no protocol handler to hook for this filter (IPv6 disabled?)");
		return -EAFNOSUPPORT;
	}
	return 0;
}

void pf_hooks_remove(unsigned int slots)
{
	unsigned int i, removed = 0;

	for (i = 0; i < PF_SLOT_NUM; i++) {
		if (!(slots & BIT(i)) || !pf_hooks[i].installed)
			continue;
		pf_hook_restore(&pf_hooks[i]);
		removed |= BIT(i);
	}
	if (removed)
		synchronize_net();
}

unsigned int pf_hooks_installed(void)
{
	unsigned int i, mask = 0;

	for (i = 0; i < PF_SLOT_NUM; i++)
		if (pf_hooks[i].installed)
			mask |= BIT(i);
	return mask;
}
