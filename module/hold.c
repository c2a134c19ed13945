// SPDX-License-Identifier: GPL-2.0
/*
 * Lazy filters (PKTFILT_F_LAZY): while one waits, nothing of the scope is
 * patched, so waiting costs what the hooks cost. The first matching packet
 * is held by the hook of its stage, which owns it then (rx: the device
 * hook does not receive it, or the IP receive handler's wrapper where
 * there is none; tx: LOCAL_OUT steals it; l4: the handler's wrapper keeps
 * it), and the owner of the filter is told (HELD). It patches
 * the scope in one pass and says READY; the held packets are then replayed
 * in the order they came, from a work item, each through the hook that
 * held it, which now traces it with the gate open. Matching packets that
 * come while packets are held queue behind them, so a flow's order is
 * kept.
 *
 * Holding follows nf_queue's discipline: the device (rx, l4: the packet's;
 * tx: the output device, and skb->dev where it differs) and tx's socket
 * are referenced, a noref dst is made a counted one (under the hooks'
 * RCU), and a prefetched socket (early demux, bpf_sk_assign) gets a
 * reference. A packet whose references cannot be taken is not held and
 * goes on as it came, its noref dst kept (fail open). Held packets are
 * dropped when a device they refer to goes down or away (as nfqnl does;
 * a netns being dismantled takes its devices down first), and replayed
 * untraced when the filter is disarmed or replaced (clear, count
 * reached, its owner gone, rmmod, another set) or when a packet was
 * held for the filter's bound (PKTFILT_A_HOLD_MS) without READY: each
 * held packet's bound runs from its hold, and the timer is only ever
 * moved earlier. A packet is never lost to pktfilt nor sent twice.
 *
 * The replay runs as the stack would: BH off and under RCU, as
 * nf_reinject() calls okfn. The packet's stage marks it on its CPU
 * (pf_replay) so that its hook decides on it instead of holding it again,
 * and the packet's event says how long it was held.
 *
 * Indirect calls (IBT): none here; the stages' replay functions are
 * called directly.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/dst.h>
#include <net/sock.h>

#include "internal.h"

/* Packets held at once; a matching packet beyond goes on untraced. */
#define PF_HOLD_MAX	256

struct pf_held {
	struct list_head list;
	struct sk_buff *skb;
	struct pf_hold_ctx ctx;	/* ctx.dev and ctx.sk referenced */
	/* skb->dev where it is not ctx.dev (tx: SRv6, tunnels), referenced */
	struct net_device *skb_dev;
	u64 since;		/* ktime_get_ns() when held */
	u64 deadline;		/* since + the filter's bound */
	u32 filter_id;
	u8 stage;
	u8 root;		/* enum pf_root: rx's device hook or ip_rcv() */
};

static atomic_t pf_hold_lock = ATOMIC_INIT(0);
static LIST_HEAD(pf_held_list);
/* Listed, and the one being replayed: new packets queue behind them. */
static unsigned int pf_held_n;
/*
 * The deadline (ktime_get_ns()) pf_hold_expire runs at or before, or 0:
 * none armed. Under pf_hold_lock; only ever moved earlier while armed.
 */
static u64 pf_hold_expire_at;

/* The packet this CPU replays, when it was held, and whether traced. */
struct pf_replay {
	const struct sk_buff *skb;
	u64 since;
	bool traced;
};
static DEFINE_PER_CPU(struct pf_replay, pf_replay);

/* What schedule_work() uses; named so from 6.12 on (system_wq deprecated). */
#ifdef PF_SYSTEM_PERCPU_WQ
#define PF_HOLD_WQ	system_percpu_wq
#else
#define PF_HOLD_WQ	system_wq
#endif

static void pf_hold_work_fn(struct work_struct *work);
static DECLARE_WORK(pf_hold_work, pf_hold_work_fn);
static void pf_hold_expire_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(pf_hold_expire, pf_hold_expire_fn);
static void pf_hold_notify_fn(struct work_struct *work);
static DECLARE_WORK(pf_hold_notify, pf_hold_notify_fn);
static atomic_t pf_hold_notify_id = ATOMIC_INIT(0);

/* The list's lock (pf_atomic_lock_irqsave(), as follow.c's table's). */
static __always_inline unsigned long pf_hold_lock_irqsave(void)
{
	return pf_atomic_lock_irqsave(&pf_hold_lock);
}

static __always_inline void pf_hold_unlock_irqrestore(unsigned long flags)
{
	pf_atomic_unlock_irqrestore(&pf_hold_lock, flags);
}

/*
 * Takes the references held packet @h needs; false if it cannot be held,
 * and then the packet goes on as it came: whatever was taken before the
 * failure belongs to the skb (a counted dst, a prefetched socket's
 * reference with sock_edemux), which frees it as the stack frees the
 * packet.
 */
static bool notrace pf_hold_refs(struct pf_held *h, struct sk_buff *skb,
				 const struct pf_hold_ctx *c)
{
	struct dst_entry *dst = skb_dst(skb);
	struct sock *psk = skb->sk;

	if (!c->dev)
		return false;
	/*
	 * A dst without a reference, valid under RCU only (the input route
	 * cache's), gets one. If it cannot (another CPU dropped the route's
	 * last reference), the packet is not held and keeps it, valid for
	 * the rest of this RCU section: skb_dst_force() would leave the skb
	 * without a dst, which the receive path dereferences (udp, icmp,
	 * tcp_v4_conn_request(), ipv6_unicast_destination()).
	 */
	if (dst && skb_dst_is_noref(skb)) {
		if (unlikely(pf_test_fault_dst) &&
		    pf_test_fault("a held packet's dst not referenced",
				  &pf_test_fault_dst))
			return false;
		if (!dst_hold_safe(dst))
			return false;
		skb_dst_set(skb, dst);
	}
	/* A socket the skb points to without a reference of its own. */
	if (psk && skb_sk_is_prefetched(skb) && !sk_is_refcounted(psk)) {
		if (!refcount_inc_not_zero(&psk->sk_refcnt))
			return false;
		skb->destructor = sock_edemux;
	}
	if (c->sk) {
		if (unlikely(pf_test_fault_sk) &&
		    pf_test_fault("a held packet's socket not referenced",
				  &pf_test_fault_sk))
			return false;
		if (!refcount_inc_not_zero(&c->sk->sk_refcnt))
			return false;
	}
	dev_hold(c->dev);
	/*
	 * tx: the device the packet came from where it is not the output
	 * device (SRv6 input, a tunnel's encapsulation, IPVS, TEE): the
	 * replay goes on with it (SRv6: dst_input()), as nf_queue holds it.
	 */
	h->skb_dev = skb->dev != c->dev ? skb->dev : NULL;
	if (h->skb_dev)
		dev_hold(h->skb_dev);
	return true;
}

static void pf_hold_put(struct pf_held *h)
{
	dev_put(h->ctx.dev);
	/* (dev_put() takes NULL from 5.15 on only.) */
	if (h->skb_dev)
		dev_put(h->skb_dev);
	if (h->ctx.sk)
		sock_gen_put(h->ctx.sk);
	kfree(h);
}

/*
 * Asks the owner for the scope (HELD), once per wait. The bound is each
 * held packet's own (pf_hold_add()), whether or not this asked.
 */
static void notrace pf_hold_ask(struct pf_filter *f)
{
	if (atomic_cmpxchg(&f->lazy, PKTFILT_LAZY_WAITING,
			   PKTFILT_LAZY_HOLDING) != PKTFILT_LAZY_WAITING)
		return;
	atomic_set(&pf_hold_notify_id, f->id);
	schedule_work(&pf_hold_notify);
}

/*
 * Under pf_hold_lock: must pf_hold_expire be armed for @deadline (none
 * armed, or only a later one)? Then it is recorded; pf_hold_arm() after
 * the unlock arms it.
 */
static bool notrace pf_hold_arm_locked(u64 deadline)
{
	if (pf_hold_expire_at && pf_hold_expire_at <= deadline)
		return false;
	pf_hold_expire_at = deadline;
	return true;
}

/*
 * Arms pf_hold_expire for @deadline, which pf_hold_arm_locked() recorded.
 * The timer is armed outside the list's lock (its IRQ-off section is
 * lockdep's blind spot, and the workqueue's locks are taken in hard
 * IRQs), so others may arm it in between: whoever arms checks what is
 * recorded afterwards and arms again until the two agree. Recorded
 * earlier: that. Cleared (it fired) or later (the work item moved it to
 * a later head): ours again, at worst an early expiry, after which the
 * work item arms it for the list's head. The timer thus never stays
 * later than a deadline recorded.
 */
static void notrace pf_hold_arm(u64 deadline)
{
	unsigned long flags;
	u64 now, at;

	for (;;) {
		now = ktime_get_ns();
		mod_delayed_work(PF_HOLD_WQ, &pf_hold_expire,
				 deadline > now ?
				 nsecs_to_jiffies(deadline - now) + 1 : 0);
		flags = pf_hold_lock_irqsave();
		at = pf_hold_expire_at;
		if (!at || at > deadline)
			pf_hold_expire_at = deadline;
		pf_hold_unlock_irqrestore(flags);
		if (at == deadline)
			return;
		if (at && at < deadline)
			deadline = at;
	}
}

static bool notrace pf_hold_add(struct pf_filter *f, struct pf_pkt *pkt)
{
	struct sk_buff *skb = pkt->skb;
	unsigned long flags;
	struct pf_held *h;
	bool arm;

	if (READ_ONCE(pf_held_n) >= PF_HOLD_MAX)
		goto full;
	if (unlikely(pf_test_fault_alloc) &&
	    pf_test_fault("a held packet's entry not allocated",
			  &pf_test_fault_alloc))
		h = NULL;
	else
		h = kmalloc(sizeof(*h), GFP_ATOMIC);
	if (!h)
		goto full;
	if (!pf_hold_refs(h, skb, pkt->hold)) {
		kfree(h);
		goto full;
	}
	h->skb = skb;
	h->ctx = *pkt->hold;
	h->filter_id = f->id;
	h->stage = pkt->stage;
	h->root = pkt->root;
	flags = pf_hold_lock_irqsave();
	/* In the list's order: a filter's deadlines rise along it. */
	h->since = ktime_get_ns();
	h->deadline = h->since + (u64)f->hold_ms * NSEC_PER_MSEC;
	list_add_tail(&h->list, &pf_held_list);
	pf_held_n++;
	arm = pf_hold_arm_locked(h->deadline);
	pf_hold_unlock_irqrestore(flags);
	this_cpu_inc(pf_stats.held);
	/* Every held packet's bound runs, whatever the filter's state. */
	if (arm)
		pf_hold_arm(h->deadline);
	pf_hold_ask(f);
	/* READY came meanwhile: the replay may have ended before us. */
	if (atomic_read(&f->lazy) == PKTFILT_LAZY_ARMED)
		schedule_work(&pf_hold_work);
	return true;
full:
	this_cpu_inc(pf_stats.hold_full);
	return false;
}

/*
 * For a matching packet of a lazy filter (pf_begin(), BH off, RCU): go on
 * (PF_TRACE: the scope is patched and nothing is held before it, or it is
 * the packet being replayed, traced), hold it (PF_HOLD), or let it go
 * untraced (PF_PASS: replayed untraced, or it cannot be held). Once
 * @exhausted (--count used up), a packet is held only behind others.
 */
enum pf_verdict notrace pf_hold_decide(struct pf_filter *f, struct pf_pkt *pkt,
				       bool exhausted)
{
	struct pf_replay *r = this_cpu_ptr(&pf_replay);

	if (r->skb && r->skb == pkt->skb)
		return r->traced ? PF_TRACE : PF_PASS;
	/* Followed from a stage it was traced at: armed already. */
	if (pkt->id)
		return PF_TRACE;
	if (exhausted) {
		if (READ_ONCE(pf_held_n) && pkt->hold && pf_hold_add(f, pkt))
			return PF_HOLD;
		return PF_TRACE;
	}
	if (atomic_read(&f->lazy) == PKTFILT_LAZY_ARMED &&
	    !READ_ONCE(pf_held_n))
		return PF_TRACE;
	if (pkt->hold && pf_hold_add(f, pkt))
		return PF_HOLD;
	/* Not held (a hook that cannot, or the queue full): ask anyway. */
	pf_hold_ask(f);
	this_cpu_inc(pf_stats.not_ready);
	return PF_PASS;
}

/* Is this CPU replaying @skb (its second pass through a hook)? */
bool notrace pf_hold_replaying(const struct sk_buff *skb)
{
	return this_cpu_read(pf_replay.skb) == skb;
}

/* How long the packet this CPU replays was held, or 0. */
u64 notrace pf_hold_replay_ns(const struct sk_buff *skb)
{
	const struct pf_replay *r = this_cpu_ptr(&pf_replay);

	return r->skb == skb ? ktime_get_ns() - r->since : 0;
}

/* One held packet, on through the hook that held it. Process context. */
static void pf_hold_replay(struct pf_held *h, bool traced)
{
	struct pf_replay *r;

	local_bh_disable();
	rcu_read_lock();
	r = this_cpu_ptr(&pf_replay);
	r->skb = h->skb;
	r->since = h->since;
	r->traced = traced;
	if (!traced)
		this_cpu_inc(pf_stats.hold_expired);
	switch (h->stage) {
	case PKTFILT_STAGE_RX:
		if (h->root == PF_ROOT_NETIF_CORE)
			pf_rxcore_replay(h->skb);
		else
			pf_rx_replay(h->skb, h->root);
		break;
	case PKTFILT_STAGE_TX:
		pf_tx_replay(h->skb, &h->ctx);
		break;
	default:
		pf_hooks_replay(h->skb, h->ctx.slot);
		break;
	}
	r = this_cpu_ptr(&pf_replay);
	r->skb = NULL;
	rcu_read_unlock();
	local_bh_enable();
}

/*
 * Replays the held packets in order: traced once their filter is armed,
 * untraced once it is gone or replaced or a packet's bound has passed;
 * else waits for READY or the first packet's bound (a filter's deadlines
 * rise along the list).
 */
static void pf_hold_work_fn(struct work_struct *work)
{
	unsigned long flags;
	struct pf_filter *f;
	struct pf_held *h;
	bool traced, mine, delayed;
	u64 now;

	for (;;) {
		flags = pf_hold_lock_irqsave();
		h = list_first_entry_or_null(&pf_held_list, struct pf_held,
					     list);
		if (!h) {
			pf_hold_expire_at = 0;
			pf_hold_unlock_irqrestore(flags);
			return;
		}
		rcu_read_lock();
		f = rcu_dereference(pf_active);
		mine = f && f->id == h->filter_id;
		traced = mine && atomic_read(&f->lazy) == PKTFILT_LAZY_ARMED;
		if (mine && !traced) {
			now = ktime_get_ns();
			if (now < h->deadline) {
				u64 deadline = h->deadline;
				bool arm;

				rcu_read_unlock();
				/* Recorded and passed: fired, or about to. */
				if (pf_hold_expire_at <= now)
					pf_hold_expire_at = 0;
				arm = pf_hold_arm_locked(deadline);
				pf_hold_unlock_irqrestore(flags);
				if (arm)
					pf_hold_arm(deadline);
				return;
			}
			/* The bound passed: the next packet asks again. */
			atomic_cmpxchg(&f->lazy, PKTFILT_LAZY_HOLDING,
				       PKTFILT_LAZY_WAITING);
		}
		rcu_read_unlock();
		list_del(&h->list);
		pf_hold_unlock_irqrestore(flags);

		delayed = unlikely(pf_test_fault_replay_ms) &&
			  pf_test_fault_wait("a held packet off the list, before its replay",
					     &pf_test_fault_replay_ms);
		pf_hold_replay(h, traced);
		if (delayed)
			pr_info("test fault: the held packet replayed\n");

		flags = pf_hold_lock_irqsave();
		pf_held_n--;
		pf_hold_unlock_irqrestore(flags);
		pf_hold_put(h);
		cond_resched();
	}
}

/*
 * The bound's timer fired, maybe a tick before the deadline it was armed
 * for (jiffies): none is armed any more, unless it was armed again
 * meanwhile (pending again; pf_hold_arm() checks after arming). The work
 * item arms it for the list's head if that is not due yet.
 */
static void pf_hold_expire_fn(struct work_struct *work)
{
	unsigned long flags;

	flags = pf_hold_lock_irqsave();
	if (!delayed_work_pending(&pf_hold_expire))
		pf_hold_expire_at = 0;
	pf_hold_unlock_irqrestore(flags);
	schedule_work(&pf_hold_work);
}

static void pf_hold_notify_fn(struct work_struct *work)
{
	pf_genl_notify_held(atomic_read(&pf_hold_notify_id),
			    READ_ONCE(pf_held_n));
}

/* READY for @f (under pf_lock): replay what is held, traced. */
void pf_hold_ready(struct pf_filter *f)
{
	atomic_set(&f->lazy, PKTFILT_LAZY_ARMED);
	schedule_work(&pf_hold_work);
}

/* The filter was disarmed: what is held goes on, untraced. */
void pf_hold_release(void)
{
	schedule_work(&pf_hold_work);
}

u32 notrace pf_hold_count(void)
{
	return READ_ONCE(pf_held_n);
}

/* Would held packet @h go on into module @mod's text (tx's okfn)? */
static bool pf_hold_into(const struct pf_held *h, const struct module *mod)
{
	return h->stage == PKTFILT_STAGE_TX && h->ctx.okfn &&
	       within_module((unsigned long)h->ctx.okfn, mod);
}

/*
 * Drops the held packets of @dev, or those that would go on into @mod,
 * or all with both NULL. Process context.
 */
static void pf_hold_flush(const struct net_device *dev,
			  const struct module *mod)
{
	struct pf_held *h, *tmp;
	unsigned long flags;
	LIST_HEAD(gone);

	flags = pf_hold_lock_irqsave();
	list_for_each_entry_safe(h, tmp, &pf_held_list, list) {
		if (dev && h->ctx.dev != dev && h->skb_dev != dev)
			continue;
		if (mod && !pf_hold_into(h, mod))
			continue;
		list_move_tail(&h->list, &gone);
		pf_held_n--;
	}
	pf_hold_unlock_irqrestore(flags);
	/* Nothing held any more: waiting again, asking at the next packet. */
	if (!list_empty(&gone) && !READ_ONCE(pf_held_n)) {
		struct pf_filter *f;

		rcu_read_lock();
		f = rcu_dereference(pf_active);
		if (f)
			atomic_cmpxchg(&f->lazy, PKTFILT_LAZY_HOLDING,
				       PKTFILT_LAZY_WAITING);
		rcu_read_unlock();
	}
	list_for_each_entry_safe(h, tmp, &gone, list) {
		list_del(&h->list);
		kfree_skb(h->skb);
		this_cpu_inc(pf_stats.hold_flushed);
		pf_hold_put(h);
	}
}

static int pf_hold_netdev_event(struct notifier_block *nb,
				unsigned long event, void *ptr)
{
	if (event == NETDEV_DOWN || event == NETDEV_UNREGISTER)
		pf_hold_flush(netdev_notifier_info_to_dev(ptr), NULL);
	return NOTIFY_DONE;
}

static struct notifier_block pf_hold_netdev_nb = {
	.notifier_call = pf_hold_netdev_event,
};

/*
 * A module going away: a held tx packet whose okfn is its (IPVS, VRF and
 * tunnels pass their own) is dropped, as nfnetlink_queue drops what it
 * holds when a hook is unregistered. One being replayed meanwhile runs
 * under RCU, which the module's freeing waits for.
 */
static int pf_hold_module_event(struct notifier_block *nb,
				unsigned long state, void *data)
{
	if (state == MODULE_STATE_GOING && READ_ONCE(pf_held_n))
		pf_hold_flush(NULL, data);
	return NOTIFY_DONE;
}

static struct notifier_block pf_hold_module_nb = {
	.notifier_call = pf_hold_module_event,
};

int pf_hold_init(void)
{
	int ret = register_module_notifier(&pf_hold_module_nb);

	if (ret)
		return ret;
	ret = register_netdevice_notifier(&pf_hold_netdev_nb);
	if (ret)
		unregister_module_notifier(&pf_hold_module_nb);
	return ret;
}

/*
 * The filter is gone (its hooks still there, or gone: see
 * pf_disarm_locked()): what is held goes on now, untraced, and is done
 * when this returns. Process context.
 */
void pf_hold_release_sync(void)
{
	schedule_work(&pf_hold_work);
	flush_work(&pf_hold_work);
}

/* After the filter is gone and every hook removed: nothing is left held. */
void pf_hold_exit(void)
{
	cancel_delayed_work_sync(&pf_hold_expire);
	cancel_work_sync(&pf_hold_notify);
	/* No filter: every held packet is replayed, untraced. */
	pf_hold_release_sync();
	cancel_delayed_work_sync(&pf_hold_expire);
	pf_hold_flush(NULL, NULL);
	unregister_netdevice_notifier(&pf_hold_netdev_nb);
	unregister_module_notifier(&pf_hold_module_nb);
}
