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
 * "next header" (a packet held instead: pf_held_ret()).
 *
 * Another module may swap the same slots (another tracer, a test). At
 * install the slot must hold the kernel's own protocol (a core-kernel
 * struct whose handler is the kernel's function of that name): wrapping
 * another module's copy would lead back to us when it is our own old copy,
 * or be freed under us when that module goes. At removal, a slot that no
 * longer holds our copy was taken over by someone who may call our wrapper
 * through it: the wrapper stays (it passes packets through once nothing is
 * armed), the module pins itself so that rmmod cannot free it, and dmesg
 * and `pktfilt show` say so. When that module puts our copy back, the next
 * disarm or `show` restores the kernel's protocol and unpins.
 *
 * Indirect calls (IBT): h->orig4->handler() and h->orig6->handler(), the
 * kernel's own tcp_v4_rcv(), udp_rcv(), icmp_rcv(), tcp_v6_rcv(),
 * udpv6_rcv() and icmpv6_rcv() (pf_hook_install() checks the names): the
 * IP layer calls the same pointers, so they are address-taken starts with
 * ENDBR64. The wrappers pf_*_rcv() are called by the IP layer through our
 * copies; their addresses are taken, so they have ENDBR64 too.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/in.h>
#include <linux/kallsyms.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/sched/clock.h>
#include <net/ip6_fib.h>
#include <net/ipv6.h>
#include <net/protocol.h>
#include <net/xfrm.h>

#include "internal.h"

struct pf_hook {
	u8 proto;
	u8 family;
	const char *kernel_handler;	/* the function the slot must call */
	bool installed;			/* the slot holds our copy */
	bool taken;			/* our copy was replaced by another's */
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
	[PF_SLOT_TCP4]	= { IPPROTO_TCP, PF_FAMILY_IPV4, "tcp_v4_rcv",
			    .wrapper = pf_tcp4_rcv },
	[PF_SLOT_UDP4]	= { IPPROTO_UDP, PF_FAMILY_IPV4, "udp_rcv",
			    .wrapper = pf_udp4_rcv },
	[PF_SLOT_ICMP4]	= { IPPROTO_ICMP, PF_FAMILY_IPV4, "icmp_rcv",
			    .wrapper = pf_icmp4_rcv },
	[PF_SLOT_TCP6]	= { IPPROTO_TCP, PF_FAMILY_IPV6, "tcp_v6_rcv",
			    .wrapper = pf_tcp6_rcv },
	[PF_SLOT_UDP6]	= { IPPROTO_UDP, PF_FAMILY_IPV6, "udpv6_rcv",
			    .wrapper = pf_udp6_rcv },
	[PF_SLOT_ICMP6]	= { IPPROTO_ICMPV6, PF_FAMILY_IPV6, "icmpv6_rcv",
			    .wrapper = pf_icmp6_rcv },
};

/* Slots whose copy another module took over; the module is pinned meanwhile. */
static unsigned int pf_taken;

static const char *pf_slot_name(const struct pf_hook *h)
{
	return h->kernel_handler;
}

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
 * What a wrapper answers for the packet it held (hold.c), which is ours
 * now. IPv4's IP layer counts InDelivers for any answer but a negative
 * one (a resubmit): 0. IPv6's counts nothing for a negative one, so that
 * the replay counts what the IP layer would have counted for the packet
 * (InDelivers or InDiscards, pf_hooks_replay()): -1.
 */
static __always_inline int pf_held_ret(enum pf_slot slot)
{
	return pf_hooks[slot].family == PF_FAMILY_IPV6 ? -1 : 0;
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
	enum pf_verdict v;
	int ret;

	if (!f) {
		pf_timing_add(PF_TIMING_QUICK, local_clock() - t0);
		return pf_hook_call(skb, slot);
	}
	v = pf_rcv_begin(f, skb, slot);
	if (v == PF_HOLD) {
		pf_timing_add(PF_TIMING_UNTRACED, local_clock() - t0);
		return pf_held_ret(slot);
	}
	if (v != PF_TRACE) {
		if (this_cpu_read(pf_stats.matched) == matched) {
			pf_timing_add(PF_TIMING_NOMATCH, local_clock() - t0);
			ret = pf_hook_call(skb, slot);
			pf_timing_add(PF_TIMING_NOMATCH_TOTAL, local_clock() - t0);
			return ret;
		}
		kind = PF_TIMING_UNTRACED;
	}
	ret = pf_hook_call(skb, slot);
	if (v == PF_TRACE)
		pf_rcv_end();
	pf_timing_add(kind, local_clock() - t0);
	return ret;
}

static __always_inline int pf_hook_rcv(struct sk_buff *skb, enum pf_slot slot)
{
	struct pf_filter *f;
	enum pf_verdict v;
	int ret;

	if (static_branch_unlikely(&pf_timing_key))
		return pf_hook_rcv_timed(skb, slot);
	f = pf_rcv_filter(skb, slot);
	if (!f)
		return pf_hook_call(skb, slot);
	v = pf_rcv_begin(f, skb, slot);
	/* Held (hold.c): ours now. */
	if (v == PF_HOLD)
		return pf_held_ret(slot);
	ret = pf_hook_call(skb, slot);
	if (v == PF_TRACE)
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

/*
 * A held packet, replayed (hold.c: BH off, RCU): through the wrapper's
 * body, then what ip_protocol_deliver_rcu() and ip6_protocol_deliver_rcu()
 * do with the handler's answer (neither is exported). Every wrapped
 * handler is a final protocol (INET6_PROTO_FINAL) without a policy check
 * of the IP layer's (no_policy, INET6_PROTO_NOPOLICY). A negative answer
 * (IPv4) or a positive one (IPv6) names the protocol of a payload to
 * deliver next (UDP encapsulation: fou, GUE); its handler is called as the
 * IP layer would call it:
 *  - IPv4: a protocol without no_policy passes the policy check (else
 *    dropped) and loses its conntrack reference (nf_reset_ct()); one with
 *    no_policy keeps it. The IP layer counted InDelivers when the packet
 *    was held (any answer but a negative one counts).
 *  - IPv6, once a final protocol was seen: a protocol that is not final
 *    (an extension header: destination options, routing, fragment, ESP,
 *    AH, no next header) is discarded, Ip6InDiscards, its handler never
 *    called; one without INET6_PROTO_NOPOLICY passes the policy check
 *    (else discarded) and then nf_reset_ct(), as 6.3 (and 6.1.22) on do:
 *    5.10 resets only at the first final protocol, before the held
 *    handler, but the one wrapped handler that resubmits, UDP's, resets
 *    the packet's conntrack itself before its encapsulation hook, so the
 *    two agree. The IP layer counted nothing when the packet was held
 *    (pf_held_ret()): InDelivers is counted here, for an answer of 0.
 * Unlike the IP layer, no raw socket sees the inner packet
 * (raw_local_deliver() and raw6_local_deliver() are not exported), and a
 * protocol without a handler is dropped without InUnknownProtos and the
 * ICMP error, which the IP layer sends only if no raw socket took it.
 * Indirect calls (IBT): the handlers of inet_protos[]/inet6_protos[],
 * which the IP layer calls through the same pointers.
 */
static void notrace pf_replay4(struct sk_buff *skb, int ret)
{
	int n;

	for (n = 0; n < 8 && ret < 0; n++) {
		const struct net_protocol *p;

		p = rcu_dereference(inet_protos[-ret & 0xff]);
		if (!p)
			break;
		if (!p->no_policy) {
			if (!xfrm4_policy_check(NULL, XFRM_POLICY_IN, skb))
				break;
			nf_reset_ct(skb);
		}
		ret = p->handler(skb);
	}
	if (ret < 0)
		kfree_skb(skb);
}

#if IS_ENABLED(CONFIG_IPV6)
static void notrace pf_replay6(struct sk_buff *skb, int ret,
			       struct net *net, struct inet6_dev *idev)
{
	int n;

	for (n = 0; n < 8 && ret > 0; n++) {
		const struct inet6_protocol *p;

		p = rcu_dereference(inet6_protos[ret & 0xff]);
		if (!p) {
			kfree_skb(skb);
			return;
		}
		if (!(p->flags & INET6_PROTO_FINAL))
			goto discard;
		if (!(p->flags & INET6_PROTO_NOPOLICY)) {
			if (!xfrm6_policy_check(NULL, XFRM_POLICY_IN, skb))
				goto discard;
			nf_reset_ct(skb);
		}
		ret = p->handler(skb);
	}
	if (!ret)
		__IP6_INC_STATS(net, idev, IPSTATS_MIB_INDELIVERS);
	if (ret <= 0)
		return;
discard:
	__IP6_INC_STATS(net, idev, IPSTATS_MIB_INDISCARDS);
	kfree_skb(skb);
}
#endif

void notrace pf_hooks_replay(struct sk_buff *skb, enum pf_slot slot)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (pf_slot_family(slot) == PF_FAMILY_IPV6) {
		/* As the IP layer has them, before the handler frees the skb. */
		struct net *net = dev_net(skb->dev);
		struct inet6_dev *idev = skb_dst(skb) ?
					 ip6_dst_idev(skb_dst(skb)) : NULL;

		pf_replay6(skb, pf_hook_rcv(skb, slot), net, idev);
		return;
	}
#endif
	pf_replay4(skb, pf_hook_rcv(skb, slot));
}

/* Is @addr a symbol of the core kernel (not of a module)? Named @name if set. */
bool pf_is_core_symbol(const void *addr, const char *name)
{
	char buf[KSYM_SYMBOL_LEN];
	size_t len;

	sprint_symbol(buf, (unsigned long)addr);
	/* "sym+0x0/0x10 [mod]" for a module's, "0xffff..." for none. */
	if (strchr(buf, '[') || !strncmp(buf, "0x", 2))
		return false;
	if (!name)
		return true;
	len = strlen(name);
	return !strncmp(buf, name, len) && !strncmp(buf + len, "+0x0/", 5);
}

/*
 * Is @addr inside the core kernel's image, past its text? The image is one
 * mapping, laid out text, rodata, data, bss (x86-64 and arm64): between
 * one of its functions (dev_add_pack()) and one of its .bss variables
 * (high_memory) lie none of a module's, vmalloc's or the heap's addresses,
 * and every static object of .rodata and .data. Reads nothing.
 */
static bool pf_in_core_image(const void *addr)
{
	unsigned long a = (unsigned long)addr;

	return a > (unsigned long)dev_add_pack &&
	       a < (unsigned long)&high_memory;
}

/*
 * Is @addr a static object of the core kernel, named @name (NULL: any
 * name)? kallsyms names data only with KALLSYMS_ALL: without it (Debian's
 * arm64 6.1) the image test alone decides, and callers check what the
 * object's own pointers are.
 */
bool pf_is_core_object(const void *addr, const char *name)
{
	if (!pf_in_core_image(addr))
		return false;
	return !IS_ENABLED(CONFIG_KALLSYMS_ALL) || pf_is_core_symbol(addr, name);
}

/*
 * Does the slot hold the kernel's own protocol: a struct of the core kernel
 * (static, or in net_hotdata) whose handler is the kernel's function?
 */
static bool pf_is_kernel_protocol(const struct pf_hook *h, const void *proto,
				  const void *handler)
{
	return pf_is_core_object(proto, NULL) &&
	       pf_is_core_symbol(handler, h->kernel_handler);
}

/* The slot's address, as the kernel declares it. */
static const void __rcu **pf_slot_ptr(const struct pf_hook *h)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (h->family == PF_FAMILY_IPV6)
		return (const void __rcu **)&inet6_protos[h->proto];
#endif
	return (const void __rcu **)&inet_protos[h->proto];
}

static const void *pf_copy(struct pf_hook *h)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (h->family == PF_FAMILY_IPV6)
		return &h->copy6;
#endif
	return &h->copy4;
}

static const void *pf_orig(const struct pf_hook *h)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (h->family == PF_FAMILY_IPV6)
		return h->orig6;
#endif
	return h->orig4;
}

/*
 * Returns 1 if installed, 0 if the slot is empty (IPv6 disabled), or
 * -errno. inet_add_protocol() and inet_del_protocol() change the slots
 * without pf_lock: the slot is read under RCU, like the IP layer does,
 * and swapped with cmpxchg().
 */
static int pf_hook_install(struct pf_hook *h, struct netlink_ext_ack *extack)
{
	const void __rcu **slot = pf_slot_ptr(h);
	const void *cur, *handler, *old;

	if (h->family == PF_FAMILY_IPV6 && !IS_ENABLED(CONFIG_IPV6))
		return 0;
	rcu_read_lock();
	cur = rcu_dereference(*slot);
	if (!cur) {
		rcu_read_unlock();
		return 0;
	}
	if (h->taken) {
		rcu_read_unlock();
		NL_SET_ERR_MSG(extack,
			       "a protocol slot pktfilt wrapped was taken over by another module: pktfilt is pinned until that module puts it back (see pktfilt show)");
		return -EBUSY;
	}
#if IS_ENABLED(CONFIG_IPV6)
	if (h->family == PF_FAMILY_IPV6)
		handler = ((const struct inet6_protocol *)cur)->handler;
	else
#endif
		handler = ((const struct net_protocol *)cur)->handler;
	if (!pf_is_kernel_protocol(h, cur, handler)) {
		rcu_read_unlock();
		pr_warn("the %s slot holds %ps (%pS), not the kernel's %s: another module changed it; not wrapped\n",
			pf_slot_name(h), cur, handler, h->kernel_handler);
		NL_SET_ERR_MSG(extack,
			       "a protocol handler slot the filter needs holds another module's handler, not the kernel's: not wrapped (see dmesg)");
		return -EBUSY;
	}
#if IS_ENABLED(CONFIG_IPV6)
	if (h->family == PF_FAMILY_IPV6) {
		h->orig6 = cur;
		h->copy6 = *h->orig6;
		h->copy6.handler = h->wrapper;
	} else
#endif
	{
		h->orig4 = cur;
		h->copy4 = *h->orig4;
		h->copy4.handler = h->wrapper;
	}
	rcu_read_unlock();
	old = cmpxchg((const void __force **)slot, cur, pf_copy(h));
	if (old != cur) {
		NL_SET_ERR_MSG(extack,
			       "a protocol handler slot changed while pktfilt wrapped it");
		return -EBUSY;
	}
	h->installed = true;
	return 1;
}

/* Puts the original back; the caller then runs synchronize_net(). */
static void pf_hook_restore(struct pf_hook *h)
{
	const void __rcu **slot = pf_slot_ptr(h);
	const void *old;

	old = cmpxchg((const void __force **)slot, pf_copy(h), pf_orig(h));
	h->installed = false;
	if (old == pf_copy(h))
		return;
	/*
	 * Someone replaced our copy, and may call our wrapper through theirs:
	 * never free it. Pinned until they put our copy back.
	 */
	h->taken = true;
	if (!pf_taken)
		__module_get(THIS_MODULE);
	pf_taken |= BIT(h - pf_hooks);
	pr_err("the %s slot was taken over by another module (it holds %ps): that module may still call pktfilt's wrapper, so pktfilt stays loaded (pinned) until the slot holds pktfilt's copy again\n",
	       pf_slot_name(h), old);
}

/*
 * Slots another module took over and has since handed back (they hold our
 * copy again): restore the kernel's protocol. Under pf_lock. Returns the
 * slots restored; the caller then runs synchronize_net().
 */
static unsigned int pf_hooks_take_back(void)
{
	unsigned int i, back = 0;

	for (i = 0; i < PF_SLOT_NUM; i++) {
		struct pf_hook *h = &pf_hooks[i];
		const void __rcu **slot = pf_slot_ptr(h);

		if (!h->taken ||
		    cmpxchg((const void __force **)slot, pf_copy(h),
			    pf_orig(h)) != pf_copy(h))
			continue;
		h->taken = false;
		back |= BIT(i);
		pr_info("the %s slot holds pktfilt's copy again: the kernel's protocol is back\n",
			pf_slot_name(h));
	}
	return back;
}

/* After pf_hooks_take_back() and synchronize_net(): unpin if none is left. */
static void pf_hooks_unpin(unsigned int back)
{
	if (!back)
		return;
	pf_taken &= ~back;
	if (!pf_taken)
		module_put(THIS_MODULE);
}

/*
 * What `pktfilt show` says of the slots, or "". Under pf_lock; takes back
 * the slots that were handed back first.
 */
const char *pf_hooks_problem(void)
{
	unsigned int back = pf_hooks_take_back();

	if (back) {
		synchronize_net();
		pf_hooks_unpin(back);
	}
	if (!pf_taken)
		return "";
	return "pinned: another module took over a protocol slot pktfilt had wrapped and may still call pktfilt's code through it (dmesg names the slot); pktfilt cannot be unloaded until that module puts the slot back";
}

/*
 * Module exit with a slot still taken over: the code must not go while it
 * may be called. Cannot be refused any more, so wait for that module to
 * hand the slot back, saying so (only reachable if the slot was taken over
 * while armed, and rmmod came before any disarm noticed it).
 */
void pf_hooks_exit(void)
{
	unsigned int back, waited = 0;

	while (pf_taken) {
		back = pf_hooks_take_back();
		if (back) {
			synchronize_net();
			pf_taken &= ~back;
			continue;
		}
		if (!(waited++ % 100))
			pr_emerg("unloading, but a protocol slot pktfilt wrapped is held by another module that may call pktfilt's code: waiting for it to put the slot back\n");
		msleep(100);
	}
}

int pf_hooks_install(unsigned int slots, struct netlink_ext_ack *extack)
{
	unsigned int i, added = 0;
	int ret;

	for (i = 0; i < PF_SLOT_NUM; i++) {
		if (!(slots & BIT(i)) || pf_hooks[i].installed)
			continue;
		ret = pf_hook_install(&pf_hooks[i], extack);
		if (ret < 0) {
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
	unsigned int i, removed = 0, back;

	for (i = 0; i < PF_SLOT_NUM; i++) {
		if (!(slots & BIT(i)) || !pf_hooks[i].installed)
			continue;
		pf_hook_restore(&pf_hooks[i]);
		removed |= BIT(i);
	}
	back = pf_hooks_take_back();
	if (removed || back)
		synchronize_net();
	pf_hooks_unpin(back);
}

unsigned int pf_hooks_installed(void)
{
	unsigned int i, mask = 0;

	for (i = 0; i < PF_SLOT_NUM; i++)
		if (pf_hooks[i].installed)
			mask |= BIT(i);
	return mask;
}
