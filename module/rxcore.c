// SPDX-License-Identifier: GPL-2.0
/*
 * The rx stage from the device on: the per-packet core of
 * netif_receive_skb().
 *
 * A device hands a packet to the stack one skb at a time through
 * __netif_receive_skb() (the backlog of veth, loopback and netif_rx(), and
 * netif_receive_skb()), or as a batch through
 * netif_receive_skb_list_internal() (NAPI drivers with GRO, such as
 * virtio-net). Both run, per packet, the core: generic XDP, VLAN
 * untagging, taps (AF_PACKET, tcpdump), tc ingress, netfilter ingress,
 * the rx_handler of a bridge, bond or macvlan, and the protocol dispatch
 * to ip_rcv() or ipv6_rcv() (a batch: per list, ip_list_rcv()).
 *
 * Neither calls the core through a pointer we could wrap, so while a
 * filter traces at rx an ftrace_ops of ours sits at the entry of both
 * functions, with FTRACE_OPS_FL_IPMODIFY (the way livepatch replaces a
 * function): for a packet that matches, it makes the call continue in our
 * function instead, which opens the gate and receives the packet with the
 * kernel's exported netif_receive_skb_core(), the root of the graph: the
 * core, then IP receive (PREROUTING, routing, LOCAL_IN and the L4 handler,
 * or FORWARD and the output to the next device), as one graph. Packets
 * that do not match run the kernel's function untouched. The gate opens
 * and closes around a call of ours, as the other stages' do: no return
 * probe, nothing that can be missed.
 *
 * Only a packet that can be traced now is taken: one that matches (or is
 * followed) while the filter is not stale, the gate can open and, for a
 * new packet, --count is not used up (pf_begin()'s tests, made without
 * claiming or counting). Any other packet runs the kernel's function
 * untouched; rx.c, at ip_rcv(), counts those that match (not ready,
 * exhausted).
 *
 * A batch with a packet to trace is taken in order: the packets before it
 * go on as a batch through netif_receive_skb_list(), the packet alone
 * through the kernel's netif_receive_skb(), and so on. That is the
 * kernel's one-packet path: it takes the rx software timestamp
 * (net_timestamp_check(); the core does not, with the default
 * netdev_tstamp_prequeue), defers the packet if the device timestamps it
 * for PTP, steers it with RPS, and calls __netif_receive_skb(), where our
 * callback sends it, with the verdict handed on (the filter's program
 * runs once), to pf_core_receive(): on this CPU, or on the RPS target
 * CPU from its backlog (looked at anew there). What differs for the
 * traced packet: it is received alone, not with its batch, so it is
 * stamped after the packets before it were received, and the packets
 * after it are stamped after it; the kernel's tracepoints see it in
 * netif_receive_skb() (netif_receive_skb_entry), the rest of its batch in
 * netif_receive_skb_list(). On both paths the pfmemalloc case is never
 * taken (swap over the network: such packets go untouched, and are traced
 * from ip_rcv() on, by rx.c).
 *
 * A packet rx.c then sees at ip_rcv() is inside this graph: the gate is
 * open, and rx.c lets it pass. A packet not seen here (VLAN-tagged in the
 * frame, or received through netif_receive_skb_core() by another module)
 * is still traced by rx.c, from ip_rcv() on.
 *
 * The ftrace callback runs with preemption off (its own), without
 * ftrace's recursion guard (it calls nothing it hooks): it only reads the
 * filter and the packet's headers, resets the network header (the core's
 * own first step), and changes the saved instruction pointer. Our
 * functions then run as the kernel's would have, called from its caller,
 * and take rcu_read_lock() and BH off themselves.
 * Removal: unregister_ftrace_function() waits for the callbacks, and the
 * caller's synchronize_net() for the calls already sent to our functions.
 *
 * Indirect calls (IBT): none made here; netif_receive_skb_core(),
 * netif_receive_skb() and netif_receive_skb_list() are direct calls.
 * ftrace calls our callback through the ops; its address is taken here,
 * so it has ENDBR64 (arm64: BTI C).
 * Our functions are entered by the return of ftrace's trampoline (a RET,
 * which neither IBT nor BTI checks; livepatch relies on the same), and have
 * ENDBR64 anyway (their addresses are taken).
 * The per-architecture part (the callback's argument, the instruction
 * pointer it sets, how a function's ftrace site is found) is arch.h's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/if_ether.h>
#include <linux/kprobes.h>
#include <linux/netdevice.h>
#include <linux/ptrace.h>

#include "arch.h"
#include "internal.h"

/* While this CPU passes a batch on to the kernel: no second look. */
static DEFINE_PER_CPU(bool, pf_core_passing);

/* What pf_core_maybe() found. */
enum pf_core_verdict { PF_CORE_NO, PF_CORE_FOLLOWED, PF_CORE_MATCHED };

/*
 * From the entry callback to the function it sends the call on to, or
 * from pf_core_one() through netif_receive_skb() to the callback at
 * __netif_receive_skb(), on this CPU with nothing in between: the
 * batch's first packet to take (or the packet pf_core_one() hands on),
 * and the packet that passed @f (so that the program runs once per
 * packet). Handed only in softirq context (or BH off), where the call
 * cannot move to another CPU.
 */
struct pf_core_hand {
	const struct sk_buff *first;
	const struct sk_buff *matched;
	const struct pf_filter *f;
};
static DEFINE_PER_CPU(struct pf_core_hand, pf_core_hand);

/*
 * The packet pf_core_receive() decided on, and its device, while the core
 * receives it: rx.c, at ip_rcv(), leaves it alone (pf_rxcore_decided()).
 */
static DEFINE_PER_CPU(const struct sk_buff *, pf_core_skb);
static DEFINE_PER_CPU(const struct net_device *, pf_core_dev);
static bool pf_core_filtered;	/* the ops' filters are set */
static bool pf_core_installed;

/* The family of @skb's protocol, or 0. */
static __always_inline u8 pf_core_family(const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return PF_FAMILY_IPV4;
	if (skb->protocol == htons(ETH_P_IPV6))
		return PF_FAMILY_IPV6;
	return 0;
}

/*
 * Could a packet be traced with @f now? pf_begin()'s tests, without
 * counting: not if tracefs changed under it or the gate could not open.
 * Asked for a packet that would be taken, so not on the fast path.
 */
static __always_inline bool pf_core_ready(const struct pf_filter *f)
{
	/* A lazy filter holds the packet first: no gate needed yet. */
	return !READ_ONCE(f->stale) && (pf_gate_ready() || pf_filter_waits(f));
}

/*
 * Could @skb be traced here now? Changes nothing but the network header,
 * set where the core sets it first (skb->data, the L3 header). The follow
 * table is only looked at; pf_core_receive() asks it for real. Only what
 * pf_begin() would trace is taken (its tests, without claiming or
 * counting): not a new packet once --count is used up, nor any while the
 * filter is stale or the gate cannot open. Such a packet stays on the
 * kernel's path, and rx.c, at ip_rcv(), counts it (exhausted, not ready).
 */
static enum pf_core_verdict notrace pf_core_maybe(struct pf_filter *f,
						  struct sk_buff *skb)
{
	enum pf_core_verdict v = PF_CORE_FOLLOWED;
	struct pf_key key;
	u8 family = pf_core_family(skb);
	u32 fp;

	if (!family || skb_pfmemalloc(skb) || !skb->dev)
		return PF_CORE_NO;
	skb_reset_network_header(skb);
	if (likely(!atomic_read(&pf_follow_n)) || !pf_follow_known(skb)) {
		if (pf_ip_quick_reject(f, skb, family))
			return PF_CORE_NO;
		/* Used up: taken only to queue behind held packets. */
		if (f->count && atomic64_read(&f->remaining) <= 0 &&
		    !((f->flags & PKTFILT_F_LAZY) && pf_hold_count()))
			return PF_CORE_NO;
		if (!pf_key_from_ip(skb, family, skb->dev->ifindex,
				    dev_net(skb->dev), &key, &fp))
			return PF_CORE_NO;
		if (!pf_filter_match(f, skb, &key))
			return PF_CORE_NO;
		v = PF_CORE_MATCHED;
	}
	return pf_core_ready(f) ? v : PF_CORE_NO;
}

/*
 * Hands @first and, if it passed @f, that verdict on (see pf_core_hand).
 * Outside softirq context nothing is handed, and nothing left either.
 */
static __always_inline void pf_core_hand_on(const struct sk_buff *first,
					    enum pf_core_verdict v,
					    const struct pf_filter *f)
{
	struct pf_core_hand *h = this_cpu_ptr(&pf_core_hand);

	if (!in_softirq()) {
		memset(h, 0, sizeof(*h));
		return;
	}
	h->first = first;
	h->matched = v == PF_CORE_MATCHED ? first : NULL;
	h->f = f;
}

/* Takes what was handed on, and clears it. */
static __always_inline struct pf_core_hand pf_core_hand_take(void)
{
	struct pf_core_hand *h = this_cpu_ptr(&pf_core_hand);
	struct pf_core_hand got = *h;

	memset(h, 0, sizeof(*h));
	return got;
}

/*
 * At __netif_receive_skb(@skb): what pf_core_one() handed on for @skb, if
 * anything, taken (it is for this call only); else nothing is taken.
 */
static __always_inline struct pf_core_hand
pf_core_hand_take_for(const struct sk_buff *skb)
{
	struct pf_core_hand *h = this_cpu_ptr(&pf_core_hand);
	struct pf_core_hand none = {};

	if (h->first != skb)
		return none;
	return pf_core_hand_take();
}

/* Did pf_core_receive() decide on @skb, on its device, around this call? */
bool notrace pf_rxcore_decided(const struct sk_buff *skb)
{
	return this_cpu_read(pf_core_skb) == skb &&
	       this_cpu_read(pf_core_dev) == skb->dev;
}

/*
 * The filter, if it traces at rx and the gate may open here. Preemption
 * off (the callback's, without ftrace's guard around it).
 */
static __always_inline struct pf_filter *pf_core_filter(void)
{
	struct pf_filter *f;

	if (this_cpu_read(pf_core_passing) || pf_gate_is_open() ||
	    irqs_disabled())
		return NULL;
	f = rcu_dereference_sched(pf_active);
	if (!f || !(f->stages & BIT(PKTFILT_STAGE_RX)))
		return NULL;
	return f;
}

/*
 * One packet, in place of the kernel's path (called instead of
 * __netif_receive_skb(), or by pf_core_list()): traced if the gate opens.
 */
static int notrace pf_core_receive(struct sk_buff *skb)
{
	const struct sk_buff *outer_skb = NULL;
	const struct net_device *outer_dev = NULL;
	struct pf_core_hand hand;
	struct pf_filter *f;
	struct pf_pkt pkt;
	struct pf_hold_ctx hold = { .dev = skb->dev };
	enum pf_verdict v = PF_PASS;
	bool decided = false;
	u8 family = pf_core_family(skb);
	int ret;

	local_bh_disable();
	rcu_read_lock();
	hand = pf_core_hand_take();
	f = pf_stage_filter(PKTFILT_STAGE_RX);
	if (f && family && !pf_gate_is_open()) {
		skb_reset_network_header(skb);
		if (pf_rx_key(f, skb, family, skb->dev->ifindex,
			      PF_ROOT_NETIF_CORE, &pkt, false)) {
			pkt.matched = !pkt.id && hand.matched == skb &&
				      hand.f == f;
			hold.family = family;
			pkt.hold = &hold;
			v = pf_begin(f, &pkt);
		}
		/* Held (hold.c): received later, when it is replayed. */
		if (v == PF_HOLD) {
			rcu_read_unlock();
			local_bh_enable();
			return NET_RX_SUCCESS;
		}
		decided = true;
		/* Nested receives (a bridge's) decide for themselves. */
		outer_skb = this_cpu_read(pf_core_skb);
		outer_dev = this_cpu_read(pf_core_dev);
		this_cpu_write(pf_core_skb, skb);
		this_cpu_write(pf_core_dev, skb->dev);
	}
	ret = netif_receive_skb_core(skb);
	if (decided) {
		this_cpu_write(pf_core_skb, outer_skb);
		this_cpu_write(pf_core_dev, outer_dev);
	}
	if (v == PF_TRACE)
		pf_rcv_end();
	rcu_read_unlock();
	local_bh_enable();
	return ret;
}

/* A packet pf_core_receive() held, replayed (hold.c: BH off, RCU). */
void notrace pf_rxcore_replay(struct sk_buff *skb)
{
	pf_core_receive(skb);
}

/* The rest of a batch, to the kernel's own batch receive. */
static void notrace pf_core_pass(struct list_head *head)
{
	if (list_empty(head))
		return;
	this_cpu_write(pf_core_passing, true);
	netif_receive_skb_list(head);
	this_cpu_write(pf_core_passing, false);
}

/*
 * A packet of a batch to trace, alone, on the kernel's one-packet path:
 * netif_receive_skb() stamps it (net_timestamp_check()), defers it for PTP
 * if the device asks, steers it with RPS, and calls __netif_receive_skb(),
 * where our callback takes it, with the verdict handed on, to
 * pf_core_receive(): on this CPU, or on the RPS target CPU from its
 * backlog (there it is looked at anew). If it did not come back here, what
 * was handed on goes.
 */
static void notrace pf_core_one(struct sk_buff *skb, enum pf_core_verdict v,
				const struct pf_filter *f)
{
	pf_core_hand_on(skb, v, f);
	netif_receive_skb(skb);
	pf_core_hand_take();
}

/* Called instead of netif_receive_skb_list_internal(@head). */
static void notrace pf_core_list(struct list_head *head)
{
	struct sk_buff *skb, *next;
	struct list_head before;
	struct pf_core_hand hand;
	enum pf_core_verdict v;
	struct pf_filter *f;

	local_bh_disable();
	rcu_read_lock();
	hand = pf_core_hand_take();
	f = rcu_dereference(pf_active);
	if (f && !(f->stages & BIT(PKTFILT_STAGE_RX)))
		f = NULL;
	if (hand.f != f)
		hand.first = NULL;
	INIT_LIST_HEAD(&before);
	list_for_each_entry_safe(skb, next, head, list) {
		if (!f)
			continue;
		if (hand.first) {
			/* The callback looked at those before it already. */
			if (skb != hand.first)
				continue;
			hand.first = NULL;
			v = hand.matched == skb ? PF_CORE_MATCHED :
						  PF_CORE_FOLLOWED;
		} else {
			v = pf_core_maybe(f, skb);
			if (v == PF_CORE_NO)
				continue;
		}
		list_cut_before(&before, head, &skb->list);
		pf_core_pass(&before);
		INIT_LIST_HEAD(&before);
		skb_list_del_init(skb);
		pf_core_one(skb, v, f);
	}
	pf_core_pass(head);
	rcu_read_unlock();
	local_bh_enable();
}

/* The ftrace sites of __netif_receive_skb() and the batch's function. */
static unsigned long pf_core_one_ip, pf_core_list_ip;

/* At the entry of either: should the call go on in ours instead? */
static void notrace pf_core_entry(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op, struct pf_fregs *fregs)
{
	struct pf_core_hand hand = {};
	enum pf_core_verdict v;
	struct sk_buff *skb;
	struct pf_filter *f;

	preempt_disable_notrace();
	if (pf_arch_at_ftrace_site(ip, pf_core_one_ip))
		hand = pf_core_hand_take_for((struct sk_buff *)pf_arg0(fregs));
	f = pf_core_filter();
	if (!f)
		goto out;
	if (pf_arch_at_ftrace_site(ip, pf_core_one_ip)) {
		skb = (struct sk_buff *)pf_arg0(fregs);
		/* From pf_core_one(): decided on already, in its batch. */
		if (hand.first == skb && hand.f == f)
			v = hand.matched == skb ? PF_CORE_MATCHED :
						  PF_CORE_FOLLOWED;
		else
			v = pf_core_maybe(f, skb);
		if (v != PF_CORE_NO) {
			pf_core_hand_on(skb, v, f);
			pf_set_ip(fregs, (unsigned long)pf_core_receive);
		}
		goto out;
	}
	list_for_each_entry(skb, (struct list_head *)pf_arg0(fregs), list) {
		v = pf_core_maybe(f, skb);
		if (v != PF_CORE_NO) {
			pf_core_hand_on(skb, v, f);
			pf_set_ip(fregs, (unsigned long)pf_core_list);
			break;
		}
	}
out:
	preempt_enable_notrace();
}

/*
 * One ops for both functions: each ftrace_ops registered or removed is a
 * pass over every ftrace record, and its removal waits for RCU tasks.
 */
static struct ftrace_ops pf_core_ops = {
	.func = pf_core_entry,
	.flags = FTRACE_OPS_FL_IPMODIFY | PF_FTRACE_FLAGS,
};

/*
 * The address of @name's ftrace call site, through a kprobe registered
 * disabled (nothing is patched) and removed again: the kernel's own symbol
 * lookup, no kallsyms_lookup_name() of ours, and no walk of ftrace's
 * records (ftrace_set_filter() by name looks up every record's symbol:
 * a fifth of a second under TCG). 0 if @name is not traceable.
 */
static unsigned long pf_core_site(const char *name)
{
	struct kprobe kp = {
		.symbol_name = name,
		.flags = KPROBE_FLAG_DISABLED,
	};
	unsigned long addr = 0;

	if (register_kprobe(&kp))
		return 0;
	addr = pf_arch_ftrace_site(&kp);
	unregister_kprobe(&kp);
	return addr;
}

/* The ops on exactly the two functions: once per load. */
static int pf_core_filters(struct netlink_ext_ack *extack)
{
	int ret;

	if (pf_core_filtered)
		return 0;
	pf_core_one_ip = pf_core_site("__netif_receive_skb");
	pf_core_list_ip = pf_core_site("netif_receive_skb_list_internal");
	if (!pf_core_one_ip || !pf_core_list_ip)
		ret = -ENOENT;
	else
		ret = ftrace_set_filter_ip(&pf_core_ops, pf_core_one_ip, 0, 1);
	if (!ret)
		ret = ftrace_set_filter_ip(&pf_core_ops, pf_core_list_ip, 0, 0);
	if (ret) {
		pr_warn("cannot hook __netif_receive_skb and netif_receive_skb_list_internal with ftrace (%d): not traceable on this kernel?\n",
			ret);
		NL_SET_ERR_MSG(extack,
			       "cannot hook the device receive (__netif_receive_skb, netif_receive_skb_list_internal) with ftrace: --at rx is not possible (see dmesg)");
		/* An empty filter would mean every function: never kept. */
		ftrace_set_filter(&pf_core_ops, NULL, 0, 1);
		return ret;
	}
	pf_core_filtered = true;
	return 0;
}

/* Can this kernel's device receive be hooked? Else rx is from ip_rcv(). */
bool pf_rxcore_possible(void)
{
	return PF_ARCH_RXCORE;
}

/* Under pf_lock. */
int pf_rxcore_install(struct netlink_ext_ack *extack)
{
	int ret;

	if (pf_core_installed)
		return 0;
	if (!PF_ARCH_RXCORE) {
		pr_info_once("no ftrace_regs instruction pointer to set on this kernel (arm64 before 6.2): rx is traced from ip_rcv() on\n");
		return 0;
	}
	ret = pf_core_filters(extack);
	if (ret)
		return ret;
	ret = register_ftrace_function(&pf_core_ops);
	if (!ret) {
		pf_core_installed = true;
		return 0;
	}
	pr_warn("cannot register ftrace on the device receive (%d): another user changes those functions (livepatch, a BPF trampoline, a kprobe)?\n",
		ret);
	NL_SET_ERR_MSG(extack,
		       "cannot hook the device receive with ftrace: another user replaces __netif_receive_skb or netif_receive_skb_list_internal (livepatch, BPF, a kprobe); see dmesg");
	return ret;
}

/*
 * Under pf_lock. True if it was installed: the caller then runs
 * synchronize_net() before our functions may go.
 */
bool pf_rxcore_remove(void)
{
	if (!pf_core_installed)
		return false;
	unregister_ftrace_function(&pf_core_ops);
	pf_core_installed = false;
	return true;
}

/* At unload, after pf_rxcore_remove() and synchronize_net(). */
void pf_rxcore_exit(void)
{
	if (!pf_core_filtered)
		return;
	/* Frees the filters' hashes (ftrace_free_filter() is 6.2+). */
	ftrace_set_filter(&pf_core_ops, NULL, 0, 1);
	pf_core_filtered = false;
}
