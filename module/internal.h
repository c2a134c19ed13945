/* SPDX-License-Identifier: GPL-2.0 */
/* Declarations shared by the pktfilt.ko source files. */
#ifndef PKTFILT_INTERNAL_H
#define PKTFILT_INTERNAL_H

#include <linux/atomic.h>
#include <linux/in.h>
#include <linux/jump_label.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <net/netlink.h>

#include <pktfilt.h>

#include "match.h"

/* The protocol handler slots pktfilt can wrap. */
enum pf_slot {
	PF_SLOT_TCP4,
	PF_SLOT_UDP4,
	PF_SLOT_ICMP4,
	PF_SLOT_TCP6,
	PF_SLOT_UDP6,
	PF_SLOT_ICMP6,
	PF_SLOT_NUM
};

#define PF_SLOTS_ALL	((1U << PF_SLOT_NUM) - 1)

/*
 * The function a graph starts at, as the pktfilt_packet event names it:
 * the L4 handlers in enum pf_slot's order, then the rx and tx roots.
 */
enum pf_root {
	PF_ROOT_TCP4,
	PF_ROOT_UDP4,
	PF_ROOT_ICMP4,
	PF_ROOT_TCP6,
	PF_ROOT_UDP6,
	PF_ROOT_ICMP6,
	PF_ROOT_IP_RCV,
	PF_ROOT_IPV6_RCV,
	PF_ROOT_NF_OUT,		/* tx: nf_hook_slow(), LOCAL_OUT's hooks after ours */
	PF_ROOT_NETIF_CORE,
};

/* pktfilt_free's reason for a normal free (consume_skb): never a drop's. */
#define PF_FREE_CONSUMED	0
/* A drop on a kernel whose kfree_skb gives no reason (before 5.17). */
#define PF_FREE_UNKNOWN		-1

/* An armed filter. Readers: under RCU from the hooks. Writers: pf_lock. */
struct pf_filter {
	struct rcu_head rcu;
	struct pf_spec spec;
	struct pf_quick quick;	/* from spec, for pf_key_quick_reject() */
	u32 id;			/* PKTFILT_A_FILTER_ID */
	u32 count;		/* packets to trace, 0 = no limit */
	atomic64_t remaining;	/* of count (u32): claimed before each trace */
	u32 flags;		/* PKTFILT_F_* */
	u32 owner_portid;	/* netlink socket that armed it, if OWNED */
	struct net *owner_net;	/* not a reference: only compared */
	unsigned int slots;	/* bit per enum pf_slot that must be hooked */
	u32 stages;		/* bit per enum pktfilt_stage traced */
	u8 family;		/* PF_FAMILY_* the predicates need, or 0 */
	struct bpf_prog *prog;	/* PKTFILT_A_BPF, or NULL */
	char *expr;		/* PKTFILT_A_EXPR, or NULL */
	const char *stale;	/* tracefs changed: disarm with this reason */
	u32 hold_ms;		/* PKTFILT_F_LAZY: a held packet's bound */
	u32 snaplen;		/* PKTFILT_A_SNAPLEN: bytes in the event */
	atomic_t lazy;		/* PKTFILT_F_LAZY: enum pktfilt_lazy */
	pid_t arm_tgid;		/* the process that armed it (watch.c) */
};

/*
 * A lazy filter before its READY: nothing is traced, packets are held, so
 * the gate (set_ftrace_pid, its probe) is not needed yet.
 */
static __always_inline bool pf_filter_waits(const struct pf_filter *f)
{
	return (f->flags & PKTFILT_F_LAZY) &&
	       atomic_read(&f->lazy) != PKTFILT_LAZY_ARMED;
}

struct pf_stats {
	u64 seen;
	u64 matched;
	u64 traced;
	u64 not_ready;
	u64 exhausted;
	u64 gate_missed;
	u64 followed;
	u64 dropped;
	u64 held;
	u64 hold_expired;
	u64 hold_flushed;
	u64 hold_full;
};

/*
 * What a stage's hook needs kept to replay a packet it holds (hold.c):
 * the device the packet goes to or came from, and for tx LOCAL_OUT's
 * netns and socket (nf_hook_state's).
 */
struct pf_hold_ctx {
	struct net_device *dev;
	struct net *net;
	struct sock *sk;
	u8 family;
	u8 slot;		/* l4: enum pf_slot */
	/* tx: where LOCAL_OUT goes on (dst_output(); SRv6: dst_input()) */
	int (*okfn)(struct net *net, struct sock *sk, struct sk_buff *skb);
};

/* pf_begin()'s answer for a packet. */
enum pf_verdict {
	PF_PASS,		/* not traced: the kernel's path as if unhooked */
	PF_TRACE,		/* traced: the gate is open, pf_rcv_end() after */
	PF_HOLD,		/* held (hold.c owns it now): the hook consumes it */
};

/* One packet at one stage's hook, as pf_begin() decides on it. */
struct pf_pkt {
	struct sk_buff *skb;
	u8 stage;		/* enum pktfilt_stage */
	u8 root;		/* enum pf_root */
	u32 fp;			/* pf_key_from_ip()'s fingerprint */
	u64 id;			/* followed from an earlier stage, or 0 */
	bool matched;		/* the caller ran pf_filter_match(): it passed */
	const struct pf_hold_ctx *hold;	/* can be held with this, or NULL */
	struct pf_key key;
};

/* filter.c: the armed filter, arming and disarming, counters */
extern struct mutex pf_lock;
DECLARE_PER_CPU(struct pf_stats, pf_stats);
int pf_filter_set(struct pf_filter *f, struct netlink_ext_ack *extack);
void pf_filter_clear(const char *reason);
void pf_filter_owner_gone(struct net *net, u32 portid);
struct pf_filter *pf_filter_get_locked(void);
void pf_filter_stats(struct pf_stats *sum);
const char *pf_filter_reason_locked(void);
const char *pf_filter_problem_locked(void);
enum pf_verdict pf_rcv_begin(struct pf_filter *f, struct sk_buff *skb,
			     enum pf_slot slot);
void pf_rcv_end(void);
enum pf_verdict pf_begin(struct pf_filter *f, struct pf_pkt *pkt);
int pf_filter_ready(u32 id, struct netlink_ext_ack *extack);
struct pf_filter *pf_stage_filter(enum pktfilt_stage stage);
void pf_filter_tracefs_changed(const char *reason, bool lazy_owner);
void pf_filter_exit(void);
void pf_filter_free(struct pf_filter *f);
bool pf_filter_match(const struct pf_filter *f, struct sk_buff *skb,
		     const struct pf_key *key);

/* hooks.c: wrapping inet_protos[] / inet6_protos[] slots */
int pf_hooks_install(unsigned int slots, struct netlink_ext_ack *extack);
void pf_hooks_remove(unsigned int slots);
unsigned int pf_hooks_installed(void);
const char *pf_hooks_problem(void);
bool pf_is_core_symbol(const void *addr, const char *name);
bool pf_is_core_object(const void *addr, const char *name);
void pf_hooks_exit(void);
u8 pf_slot_proto(enum pf_slot slot);
u8 pf_slot_family(enum pf_slot slot);

/* key.c: what a packet looks like to the matcher */
bool pf_key_from_skb(const struct sk_buff *skb, enum pf_slot slot,
		     struct pf_key *key);
bool pf_key_from_ip(const struct sk_buff *skb, u8 family, int ifindex,
		    const struct net *net, struct pf_key *key, u32 *fp);
u32 pf_key_fingerprint(const struct sk_buff *skb, u8 family);
bool pf_key_fingerprint_inline(const struct sk_buff *skb, u8 family);

/* bpf.c: the filter expression's classic BPF program */
#define PF_EXPR_MAX	1024	/* characters, the NUL not counted */
struct bpf_prog;
int pf_bpf_parse(struct pf_filter *f, const struct nlattr *prog,
		 const struct nlattr *expr, struct netlink_ext_ack *extack);
bool pf_bpf_match(const struct bpf_prog *prog, struct sk_buff *skb);
void pf_bpf_free(struct pf_filter *f);

/*
 * A lock of one atomic, taken inline with interrupts off, without the
 * irqflags tracing hooks (raw_local_irq_save()): follow.c's table and
 * hold.c's list. Their users run inside traced packets' graphs (the free
 * probes), where every function called shows, and the kernel's spinlock
 * functions are traced (and call out to paravirt code on some guests);
 * build-test checks that the module calls none. Held for a short walk.
 */
static __always_inline unsigned long pf_atomic_lock_irqsave(atomic_t *lock)
{
	unsigned long flags;

	raw_local_irq_save(flags);
	while (atomic_cmpxchg_acquire(lock, 0, 1))
		cpu_relax();
	return flags;
}

static __always_inline void pf_atomic_unlock_irqrestore(atomic_t *lock,
							unsigned long flags)
{
	atomic_set_release(lock, 0);
	raw_local_irq_restore(flags);
}

/* follow.c: packet ids across stages, and how traced packets end */
extern atomic_t pf_follow_n;
u64 pf_follow_add(const struct sk_buff *skb, u32 fp, u8 family,
		  u32 filter_id, u8 stage, u32 netns);
void pf_follow_forget(u64 id);
u64 pf_follow_find(const struct sk_buff *skb, u8 family, u32 filter_id,
		   u8 stage, u32 netns);
bool pf_follow_pending(u32 filter_id);
bool pf_follow_known(const struct sk_buff *skb);
int pf_follow_arm(struct netlink_ext_ack *extack);
void pf_follow_disarm(void);
void pf_follow_exit(void);

/* hold.c: a lazy filter's held packets, and their replay */
#define PF_HOLD_MS_DEFAULT	5000
#define PF_HOLD_MS_MAX		60000
enum pf_verdict pf_hold_decide(struct pf_filter *f, struct pf_pkt *pkt,
			       bool exhausted);
void pf_hold_ready(struct pf_filter *f);
void pf_hold_release(void);
void pf_hold_release_sync(void);
u32 pf_hold_count(void);
bool pf_hold_replaying(const struct sk_buff *skb);
u64 pf_hold_replay_ns(const struct sk_buff *skb);
int pf_hold_init(void);
void pf_hold_exit(void);
void pf_hooks_replay(struct sk_buff *skb, enum pf_slot slot);
void pf_rxcore_replay(struct sk_buff *skb);
void pf_tx_replay(struct sk_buff *skb, const struct pf_hold_ctx *ctx);

/* rx.c: the IP receive stage (the ETH_P_IP/ETH_P_IPV6 packet handlers) */
int pf_rx_install(struct netlink_ext_ack *extack);
void pf_rx_remove(void);
const char *pf_rx_problem(void);
void pf_rx_exit(void);
void pf_rx_replay(struct sk_buff *skb, u8 root);
bool pf_rx_key(struct pf_filter *f, struct sk_buff *skb, u8 family,
	       int ifindex, u8 root, struct pf_pkt *pkt, bool match);
/* rxcore.c: the rx stage from the device (netif_receive_skb's core) */
int pf_rxcore_install(struct netlink_ext_ack *extack);
bool pf_rxcore_remove(void);
void pf_rxcore_exit(void);
bool pf_rxcore_decided(const struct sk_buff *skb);
bool pf_rxcore_possible(void);

/* tx.c: the IP output stage (a netfilter LOCAL_OUT hook) */
int pf_tx_install(struct netlink_ext_ack *extack);
void pf_tx_remove(void);

/*
 * The hook's fast path: true if the packet cannot match, from its ports
 * and IPv4 addresses read in place, before a key is built. Inline and
 * without a buffer, so that a non-matching packet costs no call and no
 * stack canary. Only the linear part is read; a packet whose bytes lie
 * elsewhere is left to pf_key_from_skb(), which copies them. The ports
 * are where pf_key_from_skb() reads them; a TCP or UDP packet too short
 * for them has none, and a port predicate then fails either way.
 */
static __always_inline bool pf_key_quick_reject(const struct pf_quick *q,
						const struct sk_buff *skb,
						enum pf_slot slot)
{
	/*
	 * The linear part ends at the tail: the bytes from a header to the
	 * tail are those skb_header_pointer() finds in place (skb_headlen()
	 * less the header's offset from skb->data), for two loads fewer.
	 */
	const unsigned char *tail = skb_tail_pointer(skb);

	/* memcpy() of 4 or 8 bytes: plain loads, whatever the alignment. */
	if (q->ports) {
		const unsigned char *th = skb_transport_header(skb);
		__be16 p[2];
		u32 raw;

		if (slot != PF_SLOT_TCP4 && slot != PF_SLOT_UDP4 &&
		    slot != PF_SLOT_TCP6 && slot != PF_SLOT_UDP6)
			return true;
		if (tail - th >= 4) {
			memcpy(&raw, th, sizeof(raw));
			if (q->ports_exact) {
				if (pf_quick_reject_raw(q, raw))
					return true;
			} else {
				memcpy(p, &raw, sizeof(p));
				if (pf_quick_reject_ports(q, ntohs(p[0]),
							  ntohs(p[1])))
					return true;
			}
		}
	}
	if (q->v4 && (slot == PF_SLOT_TCP4 || slot == PF_SLOT_UDP4 ||
		      slot == PF_SLOT_ICMP4)) {
		/* saddr, daddr: the last 8 bytes of the 20-byte header */
		const unsigned char *nh = skb_network_header(skb) + 12;
		u32 a[2];

		if (tail - nh >= 8) {
			memcpy(a, nh, sizeof(a));
			if (pf_quick_reject_v4(q, a[0], a[1]))
				return true;
		}
	}
	return false;
}

extern struct pf_filter __rcu *pf_active;

/*
 * The filter a packet must be tested against, or NULL: nothing armed, or
 * rejected on the fast path. Under the IP layer's rcu_read_lock().
 */
static __always_inline struct pf_filter *pf_rcv_filter(const struct sk_buff *skb,
							enum pf_slot slot)
{
	struct pf_filter *f;

	this_cpu_inc(pf_stats.seen);
	f = rcu_dereference(pf_active);
	if (!f)
		return NULL;
	/* A followed packet is traced whatever it looks like now. */
	if (unlikely(atomic_read(&pf_follow_n)))
		return f;
	if (pf_key_quick_reject(&f->quick, skb, slot))
		return NULL;
	return f;
}

/*
 * The fast path of the rx and tx stages, on the packet's IP header in
 * place (skb_network_header()): true if it cannot match. The family and
 * protocol, IPv4 addresses and TCP/UDP ports of a first fragment; the rest
 * is left to pf_key_from_ip().
 */
static __always_inline bool pf_ip_quick_reject(const struct pf_filter *f,
					       const struct sk_buff *skb,
					       u8 family)
{
	const struct pf_quick *q = &f->quick;
	const unsigned char *nh = skb_network_header(skb);
	const unsigned char *tail = skb_tail_pointer(skb);
	u32 a[2], raw;
	__be16 p[2];
	u8 ihl;

	if (f->family && f->family != family)
		return true;
	if (family != PF_FAMILY_IPV4 || tail - nh < 20)
		return false;
	if (f->spec.proto && nh[9] != f->spec.proto)
		return true;
	memcpy(a, nh + 12, sizeof(a));
	if (q->v4 && pf_quick_reject_v4(q, a[0], a[1]))
		return true;
	if (!q->ports)
		return false;
	/* Ports wanted: only TCP and UDP first fragments have them. */
	if ((nh[9] != IPPROTO_TCP && nh[9] != IPPROTO_UDP) ||
	    ((nh[6] & 0x1f) | nh[7]))
		return true;
	ihl = (nh[0] & 0x0f) * 4;
	if (ihl < 20 || tail - nh < ihl + 4)
		return false;
	memcpy(&raw, nh + ihl, sizeof(raw));
	if (q->ports_exact)
		return pf_quick_reject_raw(q, raw);
	memcpy(p, &raw, sizeof(p));
	return pf_quick_reject_ports(q, ntohs(p[0]), ntohs(p[1]));
}

/* gate.c: turning function_graph on for the current CPU */
int pf_gate_init(void);
void pf_gate_exit(void);
int pf_gate_arm(struct netlink_ext_ack *extack);
int pf_gate_reopen_on(struct netlink_ext_ack *extack);
void pf_gate_reopen_off(void);
bool pf_gate_ready(void);
bool pf_gate_is_trace_array(const void *tr);
bool pf_gate_prepare(void);
bool pf_gate_kprobe_fires(void);
bool pf_gate_open(void);
bool pf_gate_is_open(void);
void pf_gate_close(void);

/* nft.c: nftables verdicts of the traced packet (pktfilt_nft) */
void pf_nft_arm(void);
void pf_nft_trace_on(void);
void pf_nft_disarm(void);
bool pf_nft_mark(struct sk_buff *skb, u64 id, bool followed);
void pf_nft_end(void);
void pf_nft_unmark(struct sk_buff *skb, bool marked);

/* watch.c: disarming when tracefs changes under an armed filter */
void pf_watch_init(void);
const char *pf_watch_missing(void);
void pf_watch_exit(void);

/* timing.c: the hooks' cost per packet, with timing=1 (make bench) */
enum pf_timing_kind {
	PF_TIMING_QUICK,
	PF_TIMING_NOMATCH,
	PF_TIMING_NOMATCH_TOTAL,
	PF_TIMING_UNTRACED,
	PF_TIMING_TRACED,
	PF_TIMING_NUM
};

DECLARE_STATIC_KEY_FALSE(pf_timing_key);
void pf_timing_init(void);
void pf_timing_exit(void);
void pf_timing_add(enum pf_timing_kind kind, u64 ns);

/* genl.c: the generic netlink family */
int pf_genl_init(void);
void pf_genl_exit(void);
void pf_genl_notify_packet(const struct pf_key *key, u64 seq, u8 stage,
			   u64 id, u64 held_ns);
void pf_genl_notify_held(u32 filter_id, u32 held);

/* anchor.c: set_ftrace_filter while a lazy filter waits (never called) */
void pktfilt_anchor(void);

/* testdelay.c: for the tests only; 0 unless given. */
extern unsigned int pf_test_delay_arm_ms;
extern unsigned int pf_test_delay_exit_ms;
extern unsigned int pf_test_delay_claim_ms;
extern unsigned int pf_test_delay_work_ms;
extern unsigned int pf_test_delay_close_ms;
extern unsigned int pf_test_delay_trial_ms;
void pf_test_delay(const char *where, unsigned int ms, bool atomic);

/* testfault.c: for the tests only; 0 unless given. */
extern unsigned int pf_test_fault_dst;
extern unsigned int pf_test_fault_sk;
extern unsigned int pf_test_fault_alloc;
extern unsigned int pf_test_fault_replay_ms;
bool pf_test_fault(const char *what, unsigned int *n);
bool pf_test_fault_wait(const char *what, unsigned int *ms);

#endif /* PKTFILT_INTERNAL_H */
