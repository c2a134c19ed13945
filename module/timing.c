// SPDX-License-Identifier: GPL-2.0
/*
 * What the hooks cost, measured in the kernel (for make bench).
 *
 * Off unless the module is loaded with timing=1: the hooks then take a
 * static branch that is a no-op otherwise. With it, each hooked packet is
 * timed with local_clock():
 *   quick     hook entry to the call of the original handler, for packets
 *             rejected on the fast path (ports and IPv4 addresses read in
 *             place) or while nothing is armed
 *   nomatch   the same for the other packets that do not match (a key
 *             built and every predicate tested: the near misses)
 *   nomatch_total  the near misses again, hook entry to the handler's
 *             return: what a packet costs untraced, the handler included
 *   untraced  hook entry to the handler's return, for matching packets
 *             that were not traced (count used up, gate busy)
 *   traced    the same for traced packets
 * and read, per bucket, as packets and mean nanoseconds from
 * /sys/kernel/debug/pktfilt/timing, less the cost of reading the clock
 * twice (measured at load, printed as clock_ns). Writing to it resets.
 * No timestamp is taken while the gate is open: whatever ran then would
 * be in the graph.
 *
 * Under emulation a clock read costs as much as the fast path itself and
 * varies with it, so the fast path is also timed many passes per clock
 * pair: writing "COUNT SPORT DPORT SADDR DADDR" to pktfilt/fastpath runs,
 * COUNT times each, on one CPU, on a UDP/IPv4 packet built here, against
 * the armed filter: the hook's fast path (pf_rcv_filter(), as a call);
 * the slow path's test (key and every predicate, as for a near miss; the
 * gate is left alone); and an empty call. Reading it gives each in
 * picoseconds per pass, and how many passes each path rejected.
 *
 * Indirect calls (IBT): pf_fastpath_loop()'s fn(), one of this file's
 * pf_fastpath_once(), pf_fastpath_slow(), pf_fastpath_empty(), whose
 * addresses are taken (ENDBR64 from the compiler).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/inet.h>
#include <linux/ip.h>
#include <linux/jump_label.h>
#include <linux/moduleparam.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/timekeeping.h>
#include <linux/udp.h>
#include <net/net_namespace.h>

#include "internal.h"

static bool pf_timing_param;
module_param_named(timing, pf_timing_param, bool, 0444);
MODULE_PARM_DESC(timing, "time each hooked packet, see debugfs pktfilt/timing (for benchmarks)");

DEFINE_STATIC_KEY_FALSE(pf_timing_key);

struct pf_timing_bucket {
	u64 packets;
	u64 ns;
};

static DEFINE_PER_CPU(struct pf_timing_bucket[PF_TIMING_NUM], pf_timing);
static u64 pf_clock_ns;
static struct dentry *pf_timing_dir;

static const char *const pf_timing_names[PF_TIMING_NUM] = {
	[PF_TIMING_QUICK]	= "quick",
	[PF_TIMING_NOMATCH]	= "nomatch",
	[PF_TIMING_NOMATCH_TOTAL] = "nomatch_total",
	[PF_TIMING_UNTRACED]	= "untraced",
	[PF_TIMING_TRACED]	= "traced",
};

void notrace pf_timing_add(enum pf_timing_kind kind, u64 ns)
{
	struct pf_timing_bucket *b = this_cpu_ptr(&pf_timing[kind]);

	b->packets++;
	b->ns += ns;
}

static int pf_timing_show(struct seq_file *m, void *v)
{
	unsigned int cpu, k;

	seq_printf(m, "clock_ns %llu\n", pf_clock_ns);
	for (k = 0; k < PF_TIMING_NUM; k++) {
		u64 packets = 0, ns = 0, mean = 0;

		for_each_possible_cpu(cpu) {
			packets += per_cpu(pf_timing[k].packets, cpu);
			ns += per_cpu(pf_timing[k].ns, cpu);
		}
		if (packets) {
			mean = div64_u64(ns, packets);
			mean = mean > pf_clock_ns ? mean - pf_clock_ns : 0;
		}
		seq_printf(m, "%s packets %llu ns %llu\n", pf_timing_names[k],
			   packets, mean);
	}
	return 0;
}

static int pf_timing_open(struct inode *inode, struct file *file)
{
	return single_open(file, pf_timing_show, NULL);
}

/* A reset races with packets being counted: fine for a benchmark. */
static ssize_t pf_timing_write(struct file *file, const char __user *buf,
			       size_t len, loff_t *ppos)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(&pf_timing, cpu), 0, sizeof(pf_timing));
	return len;
}

static const struct file_operations pf_timing_fops = {
	.owner		= THIS_MODULE,
	.open		= pf_timing_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
	.write		= pf_timing_write,
};

/* The last fastpath run, for reading. Under pf_fastpath_lock. */
static DEFINE_MUTEX(pf_fastpath_lock);
static struct {
	u32 passes;
	u32 rejected;
	u32 slow_rejected;
	u64 ps;		/* per pass, fast path */
	u64 slow_ps;	/* per pass, key and predicates */
	u64 call_ps;	/* per pass, empty call */
} pf_fastpath_res;

/*
 * What the loop calls, each returning true where the packet is turned
 * away: the hook's fast path; the slow path's test (key and predicates,
 * without the gate); and nothing, for the cost of the call alone.
 */
static noinline notrace bool pf_fastpath_once(const struct sk_buff *skb)
{
	return !pf_rcv_filter(skb, PF_SLOT_UDP4);
}

static noinline notrace bool pf_fastpath_slow(const struct sk_buff *skb)
{
	struct pf_filter *f = rcu_dereference(pf_active);
	struct pf_key key;

	return !f || !pf_key_from_skb(skb, PF_SLOT_UDP4, &key) ||
	       !pf_match(&f->spec, &key);
}

static noinline notrace bool pf_fastpath_empty(const struct sk_buff *skb)
{
	barrier();
	return true;
}

/* A UDP/IPv4 header pair, laid out as the UDP handler finds it. */
static struct sk_buff *pf_fastpath_skb(u16 sport, u16 dport, __be32 saddr,
				       __be32 daddr)
{
	const unsigned int headroom = 128;	/* as a received packet has */
	struct sk_buff *skb = alloc_skb(headroom + 64, GFP_KERNEL);
	struct udphdr *uh;
	struct iphdr *iph;

	if (!skb)
		return NULL;
	skb_reserve(skb, headroom);
	skb_reset_network_header(skb);
	iph = skb_put_zero(skb, sizeof(*iph));
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = 64;
	iph->protocol = IPPROTO_UDP;
	iph->tot_len = htons(sizeof(*iph) + sizeof(*uh) + 8);
	iph->saddr = saddr;
	iph->daddr = daddr;
	skb_set_transport_header(skb, sizeof(*iph));
	uh = skb_put_zero(skb, sizeof(*uh) + 8);
	uh->source = htons(sport);
	uh->dest = htons(dport);
	uh->len = htons(sizeof(*uh) + 8);
	/* Where the IP layer leaves skb->data for the handler. */
	skb_pull(skb, sizeof(*iph));
	/* For the key's ifindex and netns; not a reference: never sent. */
	skb->dev = init_net.loopback_dev;
	return skb;
}

/*
 * COUNT passes of fn, in chunks with preemption off, each chunk between
 * one pair of clock reads. Returns the nanoseconds summed. The clock is
 * the clocksource's, not local_clock(): when the TSC is marked unstable
 * (the emulator's vCPU thread starved by its host) local_clock() falls
 * back to jiffies, and a chunk shorter than a tick would read as 0 ns.
 */
static u64 pf_fastpath_loop(bool (*fn)(const struct sk_buff *skb),
			    const struct sk_buff *skb, u32 count, u32 *hits)
{
	const u32 chunk = 10000;
	u64 ns = 0, t0;
	u32 done = 0, n, i;

	while (done < count) {
		n = min(chunk, count - done);
		preempt_disable();
		rcu_read_lock();
		t0 = ktime_get_ns();
		for (i = 0; i < n; i++)
			*hits += fn(skb);
		ns += ktime_get_ns() - t0;
		rcu_read_unlock();
		/* The loop's packets are not traffic: out of "seen" again. */
		if (fn == pf_fastpath_once)
			this_cpu_sub(pf_stats.seen, n);
		preempt_enable();
		done += n;
		cond_resched();
	}
	return ns;
}

static int pf_fastpath_show(struct seq_file *m, void *v)
{
	mutex_lock(&pf_fastpath_lock);
	seq_printf(m, "passes %u rejected %u ps %llu slow_rejected %u slow_ps %llu call_ps %llu\n",
		   pf_fastpath_res.passes, pf_fastpath_res.rejected,
		   pf_fastpath_res.ps, pf_fastpath_res.slow_rejected,
		   pf_fastpath_res.slow_ps, pf_fastpath_res.call_ps);
	mutex_unlock(&pf_fastpath_lock);
	return 0;
}

static int pf_fastpath_open(struct inode *inode, struct file *file)
{
	return single_open(file, pf_fastpath_show, NULL);
}

static ssize_t pf_fastpath_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	char buf[80], sa[16], da[16];
	u32 count, rejected = 0, slow_rejected = 0, calls = 0;
	__be32 saddr, daddr;
	struct sk_buff *skb;
	u16 sport, dport;
	u64 ns, slow_ns, call_ns;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%u %hu %hu %15s %15s", &count, &sport, &dport,
		   sa, da) != 5 ||
	    !in4_pton(sa, -1, (u8 *)&saddr, -1, NULL) ||
	    !in4_pton(da, -1, (u8 *)&daddr, -1, NULL) ||
	    count == 0 || count > 100000000)
		return -EINVAL;
	skb = pf_fastpath_skb(sport, dport, saddr, daddr);
	if (!skb)
		return -ENOMEM;
	mutex_lock(&pf_fastpath_lock);
	ns = pf_fastpath_loop(pf_fastpath_once, skb, count, &rejected);
	slow_ns = pf_fastpath_loop(pf_fastpath_slow, skb, count, &slow_rejected);
	call_ns = pf_fastpath_loop(pf_fastpath_empty, skb, count, &calls);
	pf_fastpath_res.passes = count;
	pf_fastpath_res.rejected = rejected;
	pf_fastpath_res.slow_rejected = slow_rejected;
	pf_fastpath_res.ps = div_u64(ns * 1000, count);
	pf_fastpath_res.slow_ps = div_u64(slow_ns * 1000, count);
	pf_fastpath_res.call_ps = div_u64(call_ns * 1000, count);
	mutex_unlock(&pf_fastpath_lock);
	/* Not a drop: kfree_skb() would show in drop monitors. */
	consume_skb(skb);
	return len;
}

static const struct file_operations pf_fastpath_fops = {
	.owner		= THIS_MODULE,
	.open		= pf_fastpath_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
	.write		= pf_fastpath_write,
};

/* The mean of two back-to-back local_clock() reads, over many. */
static u64 pf_timing_calibrate(void)
{
	const unsigned int rounds = 100000;
	u64 sum = 0, t0;
	unsigned int i;

	preempt_disable();
	for (i = 0; i < rounds; i++) {
		t0 = local_clock();
		sum += local_clock() - t0;
	}
	preempt_enable();
	return div_u64(sum, rounds);
}

void pf_timing_init(void)
{
	if (!pf_timing_param)
		return;
	pf_clock_ns = pf_timing_calibrate();
	/* debugfs errors are not checked, by design of debugfs. */
	pf_timing_dir = debugfs_create_dir("pktfilt", NULL);
	debugfs_create_file("timing", 0600, pf_timing_dir, NULL, &pf_timing_fops);
	debugfs_create_file("fastpath", 0600, pf_timing_dir, NULL,
			    &pf_fastpath_fops);
	static_branch_enable(&pf_timing_key);
}

/* After the hooks are gone: nothing adds to the buckets any more. */
void pf_timing_exit(void)
{
	if (!pf_timing_param)
		return;
	static_branch_disable(&pf_timing_key);
	debugfs_remove_recursive(pf_timing_dir);
}
