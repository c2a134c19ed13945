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
 *   untraced  hook entry to the handler's return, for matching packets
 *             that were not traced (count used up, gate busy)
 *   traced    the same for traced packets
 * and read, per bucket, as packets and mean nanoseconds from
 * /sys/kernel/debug/pktfilt/timing, less the cost of reading the clock
 * twice (measured at load, printed as clock_ns). Writing to it resets.
 * No timestamp is taken while the gate is open: whatever ran then would
 * be in the graph.
 */
#include <linux/debugfs.h>
#include <linux/jump_label.h>
#include <linux/moduleparam.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>

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
