// SPDX-License-Identifier: GPL-2.0
/*
 * The armed filter: the per-packet decision, arming and disarming, counters.
 *
 * One filter at most is armed. The hooks read it under RCU; every change
 * happens under pf_lock, which also orders hook installation and the
 * filter pointer: hooks are installed before a filter is published, and
 * removed (with synchronize_net()) before it is freed. The gate's kprobe
 * lives as long as the module (gate.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/irq_work.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include <pktfilt.h>
#include "internal.h"
#include "trace.h"

/*
 * PREEMPT_RT runs softirqs in preemptible tasks. Until 6.18 a per-CPU
 * lock taken by local_bh_disable() serializes them on each CPU, and the
 * per-CPU state pktfilt keeps across one packet's hook relies on it: the
 * gate's open state (gate.c), the packet being replayed (hold.c), the
 * hand-off of rx's core hook (rxcore.c) and the nft id (nft.c). From 6.18
 * on that lock is kept only with PREEMPT_RT_NEEDS_BH_LOCK (off by
 * default): without it two softirq tasks on one CPU can interleave there,
 * and only tx's per-CPU chain is claimed safely (tx.c). Until that state
 * is made safe, arming is refused on such a kernel. Whether the option
 * exists, Kbuild says (PF_RT_BH_LOCK_OPTION: 6.18 on, or named in the
 * kernel's .config, as in an -rt tree before 6.18).
 */
#if IS_ENABLED(CONFIG_PREEMPT_RT) && defined(PF_RT_BH_LOCK_OPTION) && \
	!IS_ENABLED(CONFIG_PREEMPT_RT_NEEDS_BH_LOCK)
#define PF_RT_NO_BH_LOCK	true
#else
#define PF_RT_NO_BH_LOCK	false
#endif
#define PF_RT_NO_BH_LOCK_MSG \
	"this PREEMPT_RT kernel runs softirqs without the per-CPU BH lock (CONFIG_PREEMPT_RT_NEEDS_BH_LOCK is off): pktfilt's per-CPU state is not safe there yet, nothing can be armed (docs/limits.md)"

/* Serializes arming, disarming, hook and gate changes. */
DEFINE_MUTEX(pf_lock);
DEFINE_PER_CPU(struct pf_stats, pf_stats);

struct pf_filter __rcu *pf_active;
static atomic64_t pf_seq = ATOMIC64_INIT(0);
static u32 pf_last_id;
static const char *pf_reason = "";
/* Set by pf_filter_exit(): no arming any more (requests may still come). */
static bool pf_unloading;

/* The filter whose count ran out; disarmed from process context. */
static atomic_t pf_exhausted_id = ATOMIC_INIT(0);
static void pf_exhausted_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(pf_exhausted_work, pf_exhausted_work_fn);
/*
 * After the count ran out, how long the filter stays armed for the later
 * stages of the packets it traced (a ping's receive after its send), in
 * steps of PF_EXHAUSTED_STEP: until they were freed, or this much later.
 */
#define PF_EXHAUSTED_STEP	msecs_to_jiffies(20)
#define PF_EXHAUSTED_WAIT	msecs_to_jiffies(2000)
static unsigned long pf_exhausted_since;

/* The filter tracefs changed under; disarmed from process context. */
static void pf_stale_work_fn(struct work_struct *work);
static DECLARE_WORK(pf_stale_work, pf_stale_work_fn);
static void pf_stale_irq_work_fn(struct irq_work *work);
static DEFINE_IRQ_WORK(pf_stale_irq_work, pf_stale_irq_work_fn);

/*
 * Decides for one packet at one stage's hook, before the stage's code runs.
 * Returns true if the gate is open and pf_rcv_end() must close it after.
 * @pkt->key is filled in; @pkt->id is the packet's id if it was followed
 * from an earlier stage (then the predicates are not asked again, and no
 * count is claimed: --count counts packets).
 *
 * Only a packet that is traced is claimed from the count and announced:
 * the gate's kprobe is tried first (pf_gate_prepare(): it can be missed,
 * see there), then the count is claimed, the packet announced, and the
 * gate opened. So "traced" equals the graphs recorded and --count N is
 * exact; the one way left for the open to fail is kprobes being disabled
 * in between, which also disarms the filter (watch.c).
 *
 * Inside another stage's graph on this CPU the packet is part of that
 * graph: the callers return before any work of theirs (every function
 * they called would show in the graph), and so does this.
 */
/*
 * The packet's length from its network header on: the hooks' skb->data is
 * there (rx, tx) or past it (l4: a negative offset).
 */
static u32 notrace pf_pkt_len(const struct sk_buff *skb)
{
	int len = (int)skb->len - skb_network_offset(skb);

	return len > 0 ? (u32)len : 0;
}

enum pf_verdict notrace pf_begin(struct pf_filter *f, struct pf_pkt *pkt)
{
	bool claimed = false, exhausted, followed = pkt->id, marked;
	u64 seq, held;
	u32 len;

	if (pf_gate_is_open())
		return PF_PASS;
	if (!pkt->id) {
		/* The program runs once per packet and stage: maybe already. */
		if (!pkt->matched && !pf_filter_match(f, pkt->skb, &pkt->key))
			return PF_PASS;
		/* Counted when it was held, not again at its replay. */
		if (!pf_hold_replaying(pkt->skb))
			this_cpu_inc(pf_stats.matched);
	}

	if (READ_ONCE(f->stale)) {
		this_cpu_inc(pf_stats.not_ready);
		return PF_PASS;
	}
	exhausted = !pkt->id && f->count && atomic64_read(&f->remaining) <= 0;
	/*
	 * Lazy: held until the scope is patched (hold.c), then replayed;
	 * behind held packets even once the count is used up (their flow's
	 * order).
	 */
	if (f->flags & PKTFILT_F_LAZY) {
		enum pf_verdict v = pf_hold_decide(f, pkt, exhausted);

		if (v != PF_TRACE)
			return v;
	}
	if (exhausted) {
		this_cpu_inc(pf_stats.exhausted);
		return PF_PASS;
	}
	if (!pf_gate_ready()) {
		this_cpu_inc(pf_stats.not_ready);
		return PF_PASS;
	}
	if (!pf_gate_prepare()) {
		this_cpu_inc(pf_stats.gate_missed);
		return PF_PASS;
	}
	if (!pkt->id) {
		s64 left = 1;

		/* Exactly count claims succeed, whatever the CPUs race. */
		if (f->count) {
			left = atomic64_dec_if_positive(&f->remaining);
			if (left < 0) {
				this_cpu_inc(pf_stats.exhausted);
				return PF_PASS;
			}
		}
		/* Known before the last claim's disarm can look for it. */
		pkt->id = pf_follow_add(pkt->skb, pkt->fp, pkt->key.family,
					f->id, pkt->stage, pkt->key.netns);
		claimed = true;
		if (!left) {
			atomic_set(&pf_exhausted_id, f->id);
			if (unlikely(pf_test_delay_claim_ms))
				pf_test_delay("last count claimed",
					      pf_test_delay_claim_ms, true);
			schedule_delayed_work(&pf_exhausted_work, 0);
		}
	} else {
		this_cpu_inc(pf_stats.followed);
	}

	/* Event first: nothing of pktfilt's own must land inside the graph. */
	seq = atomic64_inc_return(&pf_seq);
	held = pf_hold_replay_ns(pkt->skb);
	len = pf_pkt_len(pkt->skb);
	trace_pktfilt_packet(&pkt->key, seq, smp_processor_id(), pkt->stage,
			     pkt->id, pkt->root, held, pkt->skb, len,
			     min(len, f->snaplen));
	pf_genl_notify_packet(&pkt->key, seq, pkt->stage, pkt->id, held);

	marked = pf_nft_mark(pkt->skb, pkt->id, followed);
	if (!pf_gate_open()) {
		pf_nft_unmark(pkt->skb, marked);
		/*
		 * Kprobes were just disabled (see above). Counted, never
		 * hidden; its later stages must not claim it again.
		 */
		this_cpu_inc(pf_stats.gate_missed);
		if (claimed)
			pf_follow_forget(pkt->id);
		return PF_PASS;
	}
	this_cpu_inc(pf_stats.traced);
	return PF_TRACE;
}

/*
 * The predicates, then the filter expression's program: the cheap checks
 * first. Softirq, or BH disabled (the program's run needs it).
 */
bool notrace pf_filter_match(const struct pf_filter *f, struct sk_buff *skb,
			     const struct pf_key *key)
{
	return pf_match(&f->spec, key) &&
	       (!f->prog || pf_bpf_match(f->prog, skb));
}

void pf_filter_free(struct pf_filter *f)
{
	if (!f)
		return;
	pf_bpf_free(f);
	kfree(f);
}

static void pf_filter_free_rcu(struct rcu_head *rcu)
{
	pf_filter_free(container_of(rcu, struct pf_filter, rcu));
}

/*
 * The L4 stage: a packet that pf_rcv_filter() let through, at the protocol
 * handler of @slot.
 */
enum pf_verdict notrace pf_rcv_begin(struct pf_filter *f,
				     struct sk_buff *skb, enum pf_slot slot)
{
	u8 family = pf_slot_family(slot);
	struct pf_hold_ctx hold = {
		.dev = skb->dev,
		.family = family,
		.slot = (u8)slot,
	};
	struct pf_pkt pkt = {
		.skb = skb,
		.stage = PKTFILT_STAGE_L4,
		.root = (u8)slot,	/* enum pf_root starts with the slots */
		.hold = &hold,
	};

	/* Inside a graph (rx's): part of it, and nothing of ours in it. */
	if (pf_gate_is_open())
		return PF_PASS;
	if (atomic_read(&pf_follow_n))
		pkt.id = pf_follow_find(skb, family, f->id, PKTFILT_STAGE_L4,
					skb->dev ? dev_net(skb->dev)->ns.inum : 0);
	if (!pkt.id && pf_key_quick_reject(&f->quick, skb, slot))
		return PF_PASS;
	if (!pf_key_from_skb(skb, slot, &pkt.key))
		return PF_PASS;
	pkt.fp = pf_key_fingerprint(skb, family);
	return pf_begin(f, &pkt);
}

/*
 * The armed filter if it traces at @stage, or NULL. Under RCU (the hooks
 * run under the network stack's).
 */
struct pf_filter *notrace pf_stage_filter(enum pktfilt_stage stage)
{
	struct pf_filter *f = rcu_dereference(pf_active);

	if (!f || !(f->stages & BIT(stage)))
		return NULL;
	this_cpu_inc(pf_stats.seen);
	return f;
}

void notrace pf_rcv_end(void)
{
	pf_gate_close();
	pf_nft_end();
}

static unsigned int pf_spec_slots(const struct pf_spec *s)
{
	unsigned int slots = PF_SLOTS_ALL;
	u8 family = s->saddr.family ? s->saddr.family : s->daddr.family;

	if (family == PF_FAMILY_IPV4)
		slots &= BIT(PF_SLOT_TCP4) | BIT(PF_SLOT_UDP4) | BIT(PF_SLOT_ICMP4);
	else if (family == PF_FAMILY_IPV6)
		slots &= BIT(PF_SLOT_TCP6) | BIT(PF_SLOT_UDP6) | BIT(PF_SLOT_ICMP6);

	/* Only TCP and UDP have ports. */
	if (s->sport.set || s->dport.set)
		slots &= BIT(PF_SLOT_TCP4) | BIT(PF_SLOT_UDP4) |
			 BIT(PF_SLOT_TCP6) | BIT(PF_SLOT_UDP6);

	switch (s->proto) {
	case IPPROTO_TCP:
		slots &= BIT(PF_SLOT_TCP4) | BIT(PF_SLOT_TCP6);
		break;
	case IPPROTO_UDP:
		slots &= BIT(PF_SLOT_UDP4) | BIT(PF_SLOT_UDP6);
		break;
	case IPPROTO_ICMP:
		slots &= BIT(PF_SLOT_ICMP4);
		break;
	case IPPROTO_ICMPV6:
		slots &= BIT(PF_SLOT_ICMP6);
		break;
	}
	return slots;
}

/* Unpublishes and frees the armed filter, removes hooks and the gate. */
static void pf_disarm_locked(const char *reason)
{
	struct pf_filter *old;

	lockdep_assert_held(&pf_lock);
	old = rcu_replace_pointer(pf_active, NULL, lockdep_is_held(&pf_lock));
	/* synchronize_net() inside: no hook is running after this. */
	pf_hooks_remove(PF_SLOTS_ALL);
	pf_rx_remove();
	/*
	 * Held tx packets go on from the LOCAL_OUT hook after ours: replay
	 * them while ours is still registered (else they would run the
	 * chain from its start, a hook before ours twice). No hook holds
	 * one after synchronize_net(): the filter is unpublished.
	 */
	if (pf_hold_count()) {
		synchronize_net();
		pf_hold_release_sync();
	}
	pf_tx_remove();
	pf_gate_reopen_off();
	pf_follow_disarm();
	pf_nft_disarm();
	pf_exhausted_since = 0;
	/* Held packets go on, untraced (their filter is gone). */
	pf_hold_release();
	if (old) {
		pf_reason = reason;
		/* Whatever pf_hooks_remove() waited for: no reader is left. */
		call_rcu(&old->rcu, pf_filter_free_rcu);
	}
}

/* Arms @f, replacing any armed filter; takes ownership of @f. */
int pf_filter_set(struct pf_filter *f, struct netlink_ext_ack *extack)
{
	struct pf_filter *old;
	unsigned int extra;
	int ret;

	mutex_lock(&pf_lock);
	if (unlikely(pf_test_delay_arm_ms))
		msleep(pf_test_delay_arm_ms);
	if (pf_unloading) {
		NL_SET_ERR_MSG(extack, "pktfilt is being unloaded");
		ret = -ENODEV;
		goto err;
	}
	if (PF_RT_NO_BH_LOCK) {
		NL_SET_ERR_MSG(extack, PF_RT_NO_BH_LOCK_MSG);
		ret = -EOPNOTSUPP;
		goto err;
	}
	old = rcu_dereference_protected(pf_active, lockdep_is_held(&pf_lock));
	if (old && (old->flags & PKTFILT_F_OWNED) &&
	    (f->flags & PKTFILT_F_EXCLUSIVE) &&
	    (old->owner_net != f->owner_net ||
	     old->owner_portid != f->owner_portid)) {
		NL_SET_ERR_MSG(extack,
			       "another pktfilt trace is running: its filter is armed until it ends");
		ret = -EBUSY;
		goto err;
	}

	if (pf_watch_missing()) {
		NL_SET_ERR_MSG(extack,
			       "cannot arm: a tracefs handler pktfilt must watch could not be probed on this kernel (pktfilt show and dmesg name it)");
		ret = -EOPNOTSUPP;
		goto err;
	}
	ret = pf_gate_arm(extack);
	/* A lazy filter's gate opens only after READY: no probe while it waits. */
	if (!ret && !(f->flags & PKTFILT_F_LAZY))
		ret = pf_gate_reopen_on(extack);
	if (ret)
		goto err;
	f->slots = 0;
	if (f->stages & BIT(PKTFILT_STAGE_L4))
		f->slots = pf_spec_slots(&f->spec);
	f->family = f->spec.saddr.family ?: f->spec.daddr.family;
	pf_quick_init(&f->quick, &f->spec);
	ret = pf_follow_arm(extack);
	if (!ret) {
		pf_nft_arm();
		/* A lazy filter's packets are traced only after READY. */
		if (!(f->flags & PKTFILT_F_LAZY))
			pf_nft_trace_on();
	}
	if (!ret && f->slots)
		ret = pf_hooks_install(f->slots, extack);
	if (!ret && (f->stages & BIT(PKTFILT_STAGE_RX)))
		ret = pf_rx_install(extack);
	if (!ret && (f->stages & BIT(PKTFILT_STAGE_TX)))
		ret = pf_tx_install(extack);
	if (ret) {
		if (!old)
			pf_disarm_locked(NULL);
		goto err;
	}

	f->id = ++pf_last_id;
	atomic64_set(&f->remaining, f->count);
	atomic_set(&f->lazy, PKTFILT_LAZY_WAITING);
	rcu_assign_pointer(pf_active, f);
	pf_reason = "";
	/*
	 * The packets the replaced filter held go on now, untraced (no
	 * longer their filter's: hold.c), while its tx hook is still there
	 * (see pf_disarm_locked()). After synchronize_net() no hook holds
	 * one for it any more. Any the new filter holds wait for its READY
	 * or bound, and so does one of the old filter's queued behind them.
	 */
	if (old && pf_hold_count()) {
		synchronize_net();
		pf_hold_release_sync();
	}

	extra = pf_hooks_installed() & ~f->slots;
	if (extra)
		pf_hooks_remove(extra);
	if (!(f->stages & BIT(PKTFILT_STAGE_RX)))
		pf_rx_remove();
	if (!(f->stages & BIT(PKTFILT_STAGE_TX)))
		pf_tx_remove();
	pf_exhausted_since = 0;
	mutex_unlock(&pf_lock);
	if (old)
		call_rcu(&old->rcu, pf_filter_free_rcu);
	return 0;
err:
	mutex_unlock(&pf_lock);
	pf_filter_free(f);
	return ret;
}

/*
 * READY: the owner of lazy filter @id patched its scope; the packets held
 * are replayed, traced, and the next ones traced at once.
 */
int pf_filter_ready(u32 id, struct netlink_ext_ack *extack)
{
	struct pf_filter *f;
	int ret = 0;

	mutex_lock(&pf_lock);
	f = rcu_dereference_protected(pf_active, lockdep_is_held(&pf_lock));
	if (!f || f->id != id) {
		NL_SET_ERR_MSG(extack,
			       "no such filter armed: it was cleared or replaced");
		ret = -ESRCH;
	} else if (!(f->flags & PKTFILT_F_LAZY)) {
		NL_SET_ERR_MSG(extack,
			       "the armed filter is not lazy: it traces without READY");
		ret = -EINVAL;
	} else {
		/* set_ftrace_pid, emptied while it waited, is set again. */
		ret = pf_gate_arm(extack);
		if (!ret)
			ret = pf_gate_reopen_on(extack);
		if (!ret) {
			pf_nft_trace_on();
			pf_hold_ready(f);
		}
	}
	mutex_unlock(&pf_lock);
	return ret;
}

void pf_filter_clear(const char *reason)
{
	mutex_lock(&pf_lock);
	pf_disarm_locked(reason);
	mutex_unlock(&pf_lock);
}

static bool pf_owned_by(const struct pf_filter *f, struct net *net, u32 portid)
{
	return f && (f->flags & PKTFILT_F_OWNED) && f->owner_net == net &&
	       f->owner_portid == portid;
}

/*
 * A netlink socket went away: drop the filter it owned, if any. Every
 * generic netlink socket of the system ends up here, so the owner is
 * looked for under RCU, and only the owner's close takes pf_lock (which
 * arming holds across slow calls).
 */
void pf_filter_owner_gone(struct net *net, u32 portid)
{
	struct pf_filter *f;
	bool owner;

	rcu_read_lock();
	owner = pf_owned_by(rcu_dereference(pf_active), net, portid);
	rcu_read_unlock();
	if (!owner)
		return;
	mutex_lock(&pf_lock);
	f = rcu_dereference_protected(pf_active, lockdep_is_held(&pf_lock));
	if (pf_owned_by(f, net, portid))
		pf_disarm_locked("the owning pktfilt process exited");
	mutex_unlock(&pf_lock);
}

/*
 * A kprobe in watch.c saw a tracefs write that changes what the armed
 * filter relies on. Kprobe context (NMI-like): mark the filter, so that no
 * packet is traced any more, and leave the disarming to a work item.
 *
 * @lazy_owner: the write was to current_tracer or set_ftrace_pid. While a
 * lazy filter waits, its own process (pktfilt trace) keeps the tracer nop
 * and set_ftrace_pid empty, so that nothing is patched and no task pays
 * for function_graph's or the PID filter's probes at context switches;
 * when a packet is held it sets the PID and starts function_graph, then
 * says READY (which checks the PID filter): those writes are expected.
 * Anyone else's, or any after READY, still disarm.
 */
void notrace pf_filter_tracefs_changed(const char *reason, bool lazy_owner)
{
	struct pf_filter *f;

	rcu_read_lock();
	f = rcu_dereference(pf_active);
	if (f && lazy_owner && pf_filter_waits(f) &&
	    task_tgid_nr(current) == f->arm_tgid)
		f = NULL;
	if (f && !cmpxchg(&f->stale, NULL, reason))
		irq_work_queue(&pf_stale_irq_work);
	rcu_read_unlock();
}

static void pf_stale_irq_work_fn(struct irq_work *work)
{
	schedule_work(&pf_stale_work);
}

static void pf_stale_work_fn(struct work_struct *work)
{
	struct pf_filter *f;

	mutex_lock(&pf_lock);
	f = rcu_dereference_protected(pf_active, lockdep_is_held(&pf_lock));
	if (f && f->stale)
		pf_disarm_locked(f->stale);
	mutex_unlock(&pf_lock);
}

static void pf_exhausted_work_fn(struct work_struct *work)
{
	struct pf_filter *f;
	u32 id = (u32)atomic_read(&pf_exhausted_id);

	if (unlikely(pf_test_delay_work_ms))
		pf_test_delay("count-reached work", pf_test_delay_work_ms,
			      false);
	mutex_lock(&pf_lock);
	f = rcu_dereference_protected(pf_active, lockdep_is_held(&pf_lock));
	if (f && f->count && f->id == id && !atomic64_read(&f->remaining)) {
		/*
		 * Its packets' later stages first, for a while; and the
		 * packets held behind them (lazy), which new ones of their
		 * flow must not overtake.
		 */
		if (!pf_exhausted_since)
			pf_exhausted_since = jiffies;
		if ((pf_follow_pending(f->id) || pf_hold_count()) &&
		    time_before(jiffies, pf_exhausted_since + PF_EXHAUSTED_WAIT)) {
			schedule_delayed_work(&pf_exhausted_work,
					      PF_EXHAUSTED_STEP);
		} else {
			pf_disarm_locked("count reached: all packets traced");
		}
	}
	mutex_unlock(&pf_lock);
}

struct pf_filter *pf_filter_get_locked(void)
{
	return rcu_dereference_protected(pf_active, lockdep_is_held(&pf_lock));
}

/* What keeps the module from working normally, or "". Under pf_lock. */
const char *pf_filter_problem_locked(void)
{
	const char *pinned = pf_hooks_problem();

	lockdep_assert_held(&pf_lock);
	if (PF_RT_NO_BH_LOCK)
		return PF_RT_NO_BH_LOCK_MSG;
	if (*pinned)
		return pinned;
	pinned = pf_rx_problem();
	if (*pinned)
		return pinned;
	if (!pf_gate_kprobe_fires())
		return "kprobes are disabled (/sys/kernel/debug/kprobes/enabled is 0): the gate's kprobe cannot fire, nothing can be traced or armed";
	return pf_watch_missing() ?: "";
}

const char *pf_filter_reason_locked(void)
{
	lockdep_assert_held(&pf_lock);
	return pf_reason;
}

void pf_filter_stats(struct pf_stats *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct pf_stats *s = per_cpu_ptr(&pf_stats, cpu);

		sum->seen += READ_ONCE(s->seen);
		sum->matched += READ_ONCE(s->matched);
		sum->traced += READ_ONCE(s->traced);
		sum->not_ready += READ_ONCE(s->not_ready);
		sum->exhausted += READ_ONCE(s->exhausted);
		sum->gate_missed += READ_ONCE(s->gate_missed);
		sum->followed += READ_ONCE(s->followed);
		sum->dropped += READ_ONCE(s->dropped);
		sum->held += READ_ONCE(s->held);
		sum->hold_expired += READ_ONCE(s->hold_expired);
		sum->hold_flushed += READ_ONCE(s->hold_flushed);
		sum->hold_full += READ_ONCE(s->hold_full);
	}
}

/*
 * After pf_watch_exit(): nothing marks a filter stale any more. The filter
 * goes first, for good (pf_unloading: the family is still registered, so
 * that the notifications of packets traced until now reach their
 * listeners): once its hooks are removed (synchronize_net() inside), no
 * packet can claim a count, queue the exhausted work or notify; only then
 * are the work items cancelled, so none can run after the module's code
 * is gone.
 */
void pf_filter_exit(void)
{
	mutex_lock(&pf_lock);
	pf_unloading = true;
	pf_disarm_locked("module unloaded");
	mutex_unlock(&pf_lock);
	irq_work_sync(&pf_stale_irq_work);
	cancel_work_sync(&pf_stale_work);
	cancel_delayed_work_sync(&pf_exhausted_work);
	/* Wait for the RCU frees of replaced filters before the code goes. */
	rcu_barrier();
}
