// SPDX-License-Identifier: GPL-2.0
/*
 * Following a traced packet: its id at later stages, and how it ended.
 *
 * A packet traced at one stage is remembered by its skb's address and a
 * fingerprint of its IP header (pf_key_from_ip()): received after a veth
 * (the same skb), forwarded, or NATed (the fingerprint leaves out what NAT
 * and forwarding change), it is known again at the next stage and traced
 * under the same id, whatever the predicates say of it by then. A packet
 * copied into a new skb (GSO segments, a tunnel's new packet, a clone that
 * goes on while the original is freed) is not followed: the new skb is a
 * packet of its own, traced only if it matches.
 *
 * When a followed skb is freed, the kfree_skb and consume_skb tracepoints
 * say how: pktfilt_free names the kernel's drop reason and the function
 * that dropped it, or CONSUMED, and the packet is forgotten. Inside a
 * graph that function is return_to_handler: function_graph replaced the
 * return address the tracepoint reports, and the graph shows the caller
 * (the reader takes it from there; nothing is looked up here, where every
 * call of ours would show in the graph).
 *
 * Some frees pass no tracepoint: TCP's coalescing (kfree_skb_partial()),
 * its deferred and cached frees of received data (skb_attempt_defer_free(),
 * kfree_skb_napi_cache()), the pure ACKs of its fast path (__kfree_skb()).
 * The skb cache then hands the same address to the next packet, often of
 * the same flow. So an skb is known by its address and its fingerprint,
 * which includes what differs from one packet of a flow to the next (TCP's
 * sequence numbers: pf_key_l4_fp()), and:
 *  - at a free, every entry of that address ends (no skb lives there any
 *    more), but only one whose fingerprint is the freed skb's gets a
 *    pktfilt_free: another packet's drop is not the traced packet's fate;
 *  - a new packet traced at an address drops the entries of that address
 *    and fingerprint (they could not be told from it);
 *  - one packet passes a stage of a namespace once (pf_follow_find());
 *  - an entry expires after PF_FOLLOW_TTL anyway.
 * A per-skb mark would be stronger, but struct sk_buff has no field a
 * module may own, and a silent free cannot be seen without hooking the
 * kernel's free functions, which every packet runs.
 *
 * The table is small and only written for traced packets; the hooks and
 * the free probes read it without the lock until an address matches, and
 * not at all while it is empty (pf_follow_n), which is nearly always.
 * The free probes live as long as the module: registering a tracepoint
 * probe patches every call site of kfree_skb's and consume_skb's
 * tracepoints, code every packet runs, so it is done once at load, not at
 * every arming. Unarmed, a free costs a call and a test of pf_follow_n.
 *
 * Indirect calls (IBT): none made here. The tracepoint probes are called by
 * the kernel's tracepoint iterators; their addresses are taken here, so the
 * compiler gives them ENDBR64.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/irqflags.h>
#include <linux/jiffies.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <trace/events/skb.h>

#include "internal.h"
#include "trace.h"

#define PF_FOLLOW_MAX	64
#define PF_FOLLOW_TTL	(5 * HZ)

struct pf_follow {
	const struct sk_buff *skb;	/* NULL: a free entry */
	u32 fp;
	u32 filter_id;
	u64 id;
	unsigned long expires;
	u8 stage;			/* where it was seen last */
	u8 family;			/* PF_FAMILY_*, of the fingerprint */
	u32 netns;
};

static struct pf_follow pf_follow[PF_FOLLOW_MAX];
static atomic_t pf_follow_lock = ATOMIC_INIT(0);
atomic_t pf_follow_n = ATOMIC_INIT(0);
static atomic64_t pf_packet_id = ATOMIC64_INIT(0);

static struct tracepoint *pf_tp_kfree, *pf_tp_consume;
static bool pf_free_probes_on;

/* The table's lock (pf_atomic_lock_irqsave()): the free probes take it. */
static __always_inline unsigned long pf_follow_lock_irqsave(void)
{
	return pf_atomic_lock_irqsave(&pf_follow_lock);
}

static __always_inline void pf_follow_unlock_irqrestore(unsigned long flags)
{
	pf_atomic_unlock_irqrestore(&pf_follow_lock, flags);
}

/* Under pf_follow_lock. */
static void pf_follow_drop(struct pf_follow *e)
{
	WRITE_ONCE(e->skb, NULL);
	atomic_dec(&pf_follow_n);
}

/*
 * A new packet id, remembered for @skb with fingerprint @fp of @family,
 * seen at @stage in @netns. An entry of the same address and fingerprint
 * is a packet whose free no tracepoint reported: it goes.
 */
u64 notrace pf_follow_add(const struct sk_buff *skb, u32 fp, u8 family,
			  u32 filter_id, u8 stage, u32 netns)
{
	u64 id = atomic64_inc_return(&pf_packet_id);
	struct pf_follow *e, *victim = NULL;
	unsigned long flags;
	int i;

	flags = pf_follow_lock_irqsave();
	for (i = 0; i < PF_FOLLOW_MAX; i++) {
		e = &pf_follow[i];
		if (e->skb && (time_after(jiffies, e->expires) ||
			       (e->skb == skb && e->fp == fp)))
			pf_follow_drop(e);
		if (victim && !victim->skb)
			continue;
		if (!e->skb || !victim || time_before(e->expires, victim->expires))
			victim = e;
	}
	/* Full: the oldest is forgotten (its later stages go untraced). */
	if (victim->skb)
		pf_follow_drop(victim);
	victim->fp = fp;
	victim->filter_id = filter_id;
	victim->id = id;
	victim->expires = jiffies + PF_FOLLOW_TTL;
	victim->stage = stage;
	victim->family = family;
	victim->netns = netns;
	WRITE_ONCE(victim->skb, skb);
	atomic_inc(&pf_follow_n);
	pf_follow_unlock_irqrestore(flags);
	return id;
}

/* The entry of packet @id goes: it was not traced after all. */
void notrace pf_follow_forget(u64 id)
{
	unsigned long flags;
	int i;

	flags = pf_follow_lock_irqsave();
	for (i = 0; i < PF_FOLLOW_MAX; i++)
		if (pf_follow[i].skb && pf_follow[i].id == id)
			pf_follow_drop(&pf_follow[i]);
	pf_follow_unlock_irqrestore(flags);
}

/* The entry holding @skb's address, or -1; read without the lock. */
static int notrace pf_follow_slot(const struct sk_buff *skb)
{
	int i;

	for (i = 0; i < PF_FOLLOW_MAX; i++)
		if (READ_ONCE(pf_follow[i].skb) == skb)
			return i;
	return -1;
}

/*
 * The id of the followed packet @skb of filter @filter_id, now at @stage
 * in @netns, or 0. Called by the hooks when pf_follow_n is not 0, once per
 * packet and stage, outside any graph. The entry must have @skb's address
 * and fingerprint: others of that address belong to packets that were
 * freed without a tracepoint, or to what this skb carried before (a
 * tunnel's inner packet, followed again after decapsulation). One packet
 * passes a stage of a namespace once: an skb seen again where its entry
 * was seen last is a new packet equal to a freed one: the old entry goes.
 */
u64 notrace pf_follow_find(const struct sk_buff *skb, u8 family,
			   u32 filter_id, u8 stage, u32 netns)
{
	unsigned long flags;
	u64 id = 0;
	u32 fp;
	int i;

	if (pf_follow_slot(skb) < 0)
		return 0;
	fp = pf_key_fingerprint(skb, family);
	flags = pf_follow_lock_irqsave();
	for (i = 0; i < PF_FOLLOW_MAX; i++) {
		struct pf_follow *e = &pf_follow[i];

		if (e->skb != skb || e->fp != fp || e->family != family ||
		    e->filter_id != filter_id ||
		    !time_before(jiffies, e->expires))
			continue;
		if (e->stage == stage && e->netns == netns) {
			pf_follow_drop(e);
		} else {
			id = e->id;
			e->stage = stage;
			e->netns = netns;
		}
		break;
	}
	pf_follow_unlock_irqrestore(flags);
	return id;
}

/*
 * Is @skb's address in the table? A look that changes nothing, for a
 * decision taken before pf_follow_find() is asked. Any context.
 */
bool notrace pf_follow_known(const struct sk_buff *skb)
{
	return pf_follow_slot(skb) >= 0;
}

/* Is a packet of filter @filter_id still on its way? */
bool pf_follow_pending(u32 filter_id)
{
	unsigned long flags;
	bool pending = false;
	int i;

	flags = pf_follow_lock_irqsave();
	for (i = 0; i < PF_FOLLOW_MAX; i++) {
		struct pf_follow *e = &pf_follow[i];

		if (e->skb && time_after(jiffies, e->expires))
			pf_follow_drop(e);
		else if (e->skb && e->filter_id == filter_id)
			pending = true;
	}
	pf_follow_unlock_irqrestore(flags);
	return pending;
}

/*
 * @skb is being freed: every entry of its address ends, and the one whose
 * fingerprint is @skb's says how (the headers are intact here). Any
 * context; inside a traced packet's graph nothing called here may be
 * traced: the lock is inline, and there the fingerprint is only computed
 * where it calls nothing (pf_key_fingerprint_inline()).
 */
static void notrace pf_follow_freed(const struct sk_buff *skb, int reason,
				    const void *location)
{
	u32 fp[PF_FAMILY_IPV6 + 1] = { };
	bool have[PF_FAMILY_IPV6 + 1] = { };
	unsigned long flags;
	u64 id = 0;
	int i;

	if (!atomic_read(&pf_follow_n) || pf_follow_slot(skb) < 0)
		return;
	flags = pf_follow_lock_irqsave();
	for (i = 0; i < PF_FOLLOW_MAX; i++) {
		struct pf_follow *e = &pf_follow[i];
		u8 fam = e->family;

		if (e->skb != skb)
			continue;
		if (!id && fam <= PF_FAMILY_IPV6) {
			/*
			 * Headers that need a call to read (IPv6 extension
			 * headers, bytes outside the linear part, a short
			 * packet) are read only outside a graph, where a
			 * call shows nowhere; inside one, its address alone
			 * has to do.
			 */
			if (!have[fam]) {
				fp[fam] = pf_key_fingerprint_inline(skb, fam) ||
					  !pf_gate_is_open() ?
					  pf_key_fingerprint(skb, fam) : e->fp;
				have[fam] = true;
			}
			if (fp[fam] == e->fp)
				id = e->id;
		}
		pf_follow_drop(e);
	}
	pf_follow_unlock_irqrestore(flags);
	if (!id)
		return;
	if (reason != PF_FREE_CONSUMED)
		this_cpu_inc(pf_stats.dropped);
	trace_pktfilt_free(id, reason, location);
}

/* Since 5.17 kfree_skb says why (PF_KFREE_SKB_REASON, always with rx_sk). */
#ifdef PF_KFREE_SKB_REASON
#ifdef PF_KFREE_SKB_CONST_SK
static void notrace pf_kfree_probe(void *data, struct sk_buff *skb,
				   void *location, enum skb_drop_reason reason,
				   const struct sock *rx_sk)
#elif defined(PF_KFREE_SKB_RX_SK)
static void notrace pf_kfree_probe(void *data, struct sk_buff *skb,
				   void *location, enum skb_drop_reason reason,
				   struct sock *rx_sk)
#else
static void notrace pf_kfree_probe(void *data, struct sk_buff *skb,
				   void *location, enum skb_drop_reason reason)
#endif
{
	pf_follow_freed(skb, reason > 0 ? reason : SKB_DROP_REASON_NOT_SPECIFIED,
			location);
}
#else
/* Before 5.17 the kernel gives no reason: pktfilt_free says UNKNOWN. */
static void notrace pf_kfree_probe(void *data, struct sk_buff *skb,
				   void *location)
{
	pf_follow_freed(skb, PF_FREE_UNKNOWN, location);
}
#endif

#ifdef PF_CONSUME_SKB_LOCATION
static void notrace pf_consume_probe(void *data, struct sk_buff *skb,
				     void *location)
{
	pf_follow_freed(skb, PF_FREE_CONSUMED, location);
}
#else
static void notrace pf_consume_probe(void *data, struct sk_buff *skb)
{
	pf_follow_freed(skb, PF_FREE_CONSUMED, NULL);
}
#endif

static void pf_find_free_tps(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "kfree_skb"))
		pf_tp_kfree = tp;
	else if (!strcmp(tp->name, "consume_skb"))
		pf_tp_consume = tp;
}

/* At load, and at arming if that failed (under pf_lock). */
int pf_follow_arm(struct netlink_ext_ack *extack)
{
	int ret;

	if (pf_free_probes_on)
		return 0;
	/* A changed prototype fails the build, not the kernel. */
	check_trace_callback_type_kfree_skb(pf_kfree_probe);
	check_trace_callback_type_consume_skb(pf_consume_probe);
	if (!pf_tp_kfree || !pf_tp_consume)
		for_each_kernel_tracepoint(pf_find_free_tps, NULL);
	if (!pf_tp_kfree || !pf_tp_consume) {
		NL_SET_ERR_MSG(extack,
			       "the kernel has no kfree_skb or consume_skb tracepoint");
		return -EOPNOTSUPP;
	}
	ret = tracepoint_probe_register(pf_tp_kfree, pf_kfree_probe, NULL);
	if (ret)
		goto fail;
	ret = tracepoint_probe_register(pf_tp_consume, pf_consume_probe, NULL);
	if (ret) {
		tracepoint_probe_unregister(pf_tp_kfree, pf_kfree_probe, NULL);
		goto fail;
	}
	pf_free_probes_on = true;
	return 0;
fail:
	NL_SET_ERR_MSG(extack, "cannot register on the kfree_skb and consume_skb tracepoints");
	return ret;
}

/* At unload, after every filter is gone. */
void pf_follow_exit(void)
{
	if (!pf_free_probes_on)
		return;
	tracepoint_probe_unregister(pf_tp_consume, pf_consume_probe, NULL);
	tracepoint_probe_unregister(pf_tp_kfree, pf_kfree_probe, NULL);
	tracepoint_synchronize_unregister();
	pf_free_probes_on = false;
}

/* Process context, under pf_lock: after the hooks are gone. */
void pf_follow_disarm(void)
{
	unsigned long flags;
	int i;

	flags = pf_follow_lock_irqsave();
	for (i = 0; i < PF_FOLLOW_MAX; i++)
		if (pf_follow[i].skb)
			pf_follow_drop(&pf_follow[i]);
	pf_follow_unlock_irqrestore(flags);
}
