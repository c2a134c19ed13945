// SPDX-License-Identifier: GPL-2.0
/*
 * Watching tracefs: an armed filter relies on the top-level trace array
 * keeping the tracer, the PID filter and the buffers it was armed with.
 * When one of them changes, the filter is disarmed, with the reason
 * `pktfilt show` prints, instead of tracing into a setup that no longer
 * fits (a nop tracer eating the --count, a PID filter that now traces
 * other tasks, a buffer being resized under a graph).
 *
 * There is no notifier for tracefs writes, so kprobes sit on the functions
 * behind the files. They are registered at load time, while nothing is
 * likely to be running them, and fire only on writes to tracefs, never per
 * packet. A watcher that cannot be registered (a renamed function on some
 * other kernel) is reported in dmesg, and the module then refuses to arm
 * (pf_watch_missing()): a filter that could not notice a tracefs change
 * would trace into a setup it no longer fits.
 *
 * Each handler finds the trace array the write is for from its arguments
 * and ignores tracefs instances: only the array the gate steers
 * (global_trace) matters. current_tracer and set_ftrace_pid written by the
 * process that armed a lazy filter, before its READY, are expected
 * (pf_filter_tracefs_changed()).
 *
 * One more watcher is not on tracefs: debugfs kprobes/enabled. Writing 0
 * there disarms every kprobe, the gate's and these watchers, so no packet
 * could be traced (pf_gate_prepare() then claims none) and no tracefs
 * change noticed. The write is seen on entry, while the kprobes still
 * fire; whether it enables or disables is not read (the value reaches the
 * handler as a user pointer or an iov_iter, by kernel version), so any
 * write disarms. Arming is refused while kprobes are disabled
 * (pf_gate_arm()). It is optional: a kernel without it still arms.
 *
 * Indirect calls (IBT): w->trace_array(), if set, one of this file's pf_tr_*()
 * functions, whose addresses are taken in pf_watches[] (ENDBR64 from the
 * compiler). The kprobe handlers are called by the kernel, likewise.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/kprobes.h>
#include <linux/moduleparam.h>
#include <linux/ptrace.h>
#include <linux/seq_file.h>

#include "internal.h"

/* int f(struct trace_array *tr, const char *buf) */
static const void *pf_tr_arg0(struct pt_regs *regs)
{
	return (const void *)regs_get_kernel_argument(regs, 0);
}

/* int f(struct inode *inode, struct file *file): O_TRUNC empties the list */
static const void *pf_tr_truncating_open(struct pt_regs *regs)
{
	const struct inode *inode =
		(const struct inode *)regs_get_kernel_argument(regs, 0);
	const struct file *file =
		(const struct file *)regs_get_kernel_argument(regs, 1);

	if (!(file->f_mode & FMODE_WRITE) || !(file->f_flags & O_TRUNC))
		return NULL;
	return inode->i_private;
}

/* ssize_t f(struct file *filp, ...) on a seq_file whose private is tr */
static const void *pf_tr_seq_write(struct pt_regs *regs)
{
	const struct file *file =
		(const struct file *)regs_get_kernel_argument(regs, 0);
	const struct seq_file *m = file->private_data;

	return m ? m->private : NULL;
}

/* ssize_t f(struct file *filp, ...) on a file created with tr as data */
static const void *pf_tr_inode_write(struct pt_regs *regs)
{
	const struct file *file =
		(const struct file *)regs_get_kernel_argument(regs, 0);

	return file_inode(file)->i_private;
}

struct pf_watch {
	struct kprobe kp;
	const char *symbol;
	const void *(*trace_array)(struct pt_regs *regs);
	const char *what;
	const char *reason;	/* for pktfilt show */
	const char *missing;	/* the same, if it cannot be watched */
	bool optional;		/* missing, it does not keep a filter from arming */
	bool lazy_owner;	/* a lazy filter's owner writes it before READY */
	bool registered;
};

#define PF_WATCH(sym, fn, why, owner) {				\
	.symbol = sym, .trace_array = fn, .what = why,		\
	.lazy_owner = owner,					\
	.reason = "tracefs changed while armed: " why,		\
	.missing = "cannot arm: no kprobe on " sym " on this kernel, so an armed filter could not notice when " why, \
}

/* For the tests: one more watcher, on a function no kernel has. */
static bool pf_test_missing_watch;
module_param_named(test_missing_watch, pf_test_missing_watch, bool, 0444);
MODULE_PARM_DESC(test_missing_watch,
		 "for tests: also watch a function that does not exist, as on a kernel where a tracefs handler was renamed (the module then refuses to arm)");

static struct pf_watch pf_watches[] = {
	PF_WATCH("tracing_set_tracer", pf_tr_arg0,
		 "current_tracer was written", true),
	PF_WATCH("ftrace_pid_open", pf_tr_truncating_open,
		 "set_ftrace_pid was written", true),
	PF_WATCH("ftrace_pid_write", pf_tr_seq_write,
		 "set_ftrace_pid was written", true),
	PF_WATCH("ftrace_no_pid_open", pf_tr_truncating_open,
		 "set_ftrace_notrace_pid was written", false),
	PF_WATCH("ftrace_no_pid_write", pf_tr_seq_write,
		 "set_ftrace_notrace_pid was written", false),
	PF_WATCH("tracing_entries_write", pf_tr_inode_write,
		 "buffer_size_kb was written", false),
	{
		.symbol = "write_enabled_file_bool",
		.what = "kprobes are enabled or disabled",
		.reason = "kprobes were enabled or disabled (/sys/kernel/debug/kprobes/enabled was written) while armed",
		.optional = true,
	},
	/* Last: registered only with test_missing_watch=1. */
	PF_WATCH("pktfilt_no_such_function", pf_tr_arg0,
		 "a test's nonexistent file was written", false),
};

#define PF_WATCH_TEST	(ARRAY_SIZE(pf_watches) - 1)

static int pf_watch_pre(struct kprobe *p, struct pt_regs *regs)
{
	const struct pf_watch *w = container_of(p, struct pf_watch, kp);
	const void *tr;

	/* No trace array: a write there concerns every filter. */
	if (!w->trace_array) {
		pf_filter_tracefs_changed(w->reason, false);
		return 0;
	}
	tr = w->trace_array(regs);
	if (tr && pf_gate_is_trace_array(tr))
		pf_filter_tracefs_changed(w->reason, w->lazy_owner);
	return 0;
}

/*
 * Does nothing; its presence is what matters: a kprobe with a post handler
 * is never optimized into a jump. Optimizing, and undoing it at rmmod, runs the
 * kprobe optimizer, which waits for an RCU Tasks grace period while holding
 * kprobe_mutex and text_mutex; insmod and rmmod then waited for it, seconds
 * per cycle on 6.1 under TCG with traffic running.
 */
static void pf_watch_post(struct kprobe *p, struct pt_regs *regs,
			  unsigned long flags)
{
}

void pf_watch_exit(void)
{
	struct kprobe *kps[ARRAY_SIZE(pf_watches)];
	int i, n = 0;

	for (i = 0; i < ARRAY_SIZE(pf_watches); i++) {
		if (pf_watches[i].registered)
			kps[n++] = &pf_watches[i].kp;
		pf_watches[i].registered = false;
	}
	/* One RCU grace period for all of them: rmmod stays quick. */
	if (n)
		unregister_kprobes(kps, n);
}

/*
 * The first watcher that could not be registered, as a sentence for
 * `pktfilt show`, or NULL if every one is in place.
 */
const char *pf_watch_missing(void)
{
	const struct pf_watch *w;

	for (w = pf_watches; w < pf_watches + ARRAY_SIZE(pf_watches); w++)
		if (!w->registered && !w->optional &&
		    (w != &pf_watches[PF_WATCH_TEST] || pf_test_missing_watch))
			return w->missing;
	return NULL;
}

void pf_watch_init(void)
{
	struct pf_watch *w;
	int ret;

	for (w = pf_watches; w < pf_watches + ARRAY_SIZE(pf_watches); w++) {
		if (w == &pf_watches[PF_WATCH_TEST] && !pf_test_missing_watch)
			continue;
		memset(&w->kp, 0, sizeof(w->kp));
		w->kp.symbol_name = w->symbol;
		w->kp.pre_handler = pf_watch_pre;
		w->kp.post_handler = pf_watch_post;
		ret = register_kprobe(&w->kp);
		if (ret && w->optional) {
			pr_info("no kprobe on %s (error %d): a filter will not notice when %s\n",
				w->symbol, ret, w->what);
			continue;
		}
		if (ret) {
			pr_warn("no kprobe on %s (error %d): a filter could not notice when %s, so none will be armed\n",
				w->symbol, ret, w->what);
			continue;
		}
		w->registered = true;
	}
}
