// SPDX-License-Identifier: GPL-2.0
/*
 * The ftrace gate: make ftrace trace the current CPU for the duration of one
 * protocol handler call, and nothing else.
 *
 * ftrace's PID filter caches its decision per CPU, in
 * tr->array_buffer.data->ftrace_ignore_pid, written at every context switch
 * by ftrace_filter_pid_sched_switch_probe() from trace_ignore_this_task().
 * The gate calls that probe itself, for current, three times:
 *  1. unforced, while a kretprobe records what trace_ignore_this_task()
 *     answers for current: the per-CPU value stays as it was, and we learn
 *     how to put it back;
 *  2. with trace_ignore_this_task() skipped and answering false (a kprobe
 *     returns straight to the caller): the probe writes current->pid and
 *     every function entered from then on is traced (6.11+ fgraph also
 *     requires pid == current->pid, which this satisfies);
 *  3. after the handler, skipped again and answering what step 1 recorded:
 *     the per-CPU value is what it was. The body of trace_ignore_this_task()
 *     (a PID list lookup under a traced spinlock) does not run while the CPU
 *     is traced, so nothing but the handler shows in the graph.
 *
 * No private structure is read or written, and nothing is looked up with
 * kallsyms_lookup_name(). The probe and its trace_array are taken from the
 * sched_switch tracepoint's own table of registered probes, so:
 *  - the function pointer we call is the very pointer the scheduler calls
 *    through __traceiter_sched_switch: an address-taken function start,
 *    which keeps its ENDBR on IBT kernels (checked anyway below);
 *  - its presence in the table proves that set_ftrace_pid (or
 *    set_ftrace_notrace_pid) is non-empty. When it is empty the probe is not
 *    registered, the per-CPU value is FTRACE_PID_TRACE, and calling the probe
 *    would leave a PID behind that nothing resets: the gate stays shut.
 * sprint_symbol() (KALLSYMS_ALL) tells the top-level trace array,
 * global_trace, from the trace arrays of tracefs instances.
 *
 * On PREEMPT_RT, softirqs run in preemptible task context: a context switch
 * inside the handler makes ftrace's probe recompute the per-CPU value, for
 * the next task and again for ours when it comes back, which would leave the
 * rest of the graph untraced. A probe of our own, registered after ftrace's,
 * opens the gate again when the task it was opened for is switched back in.
 * The task cannot move meanwhile: softirq processing on RT is migration
 * disabled, and serialized per CPU, so no other hook call can interleave.
 *
 * Indirect calls (IBT: each target must start with ENDBR64; QEMU does not
 * enforce it, harden.sh's ibt case reads the bytes on the IBT kernels):
 *  - pf_probe(): ftrace_filter_pid_sched_switch_probe(), the very pointer
 *    the scheduler calls through the sched_switch tracepoint, so an
 *    address-taken function start; pf_probe_lookup() also checks ENDBR64.
 * The kprobe, kretprobe and RT sched_switch handlers are called by the
 * kernel through pointers; their addresses are taken here, so the compiler
 * gives them ENDBR64.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <asm/text-patching.h>
#include <trace/events/sched.h>

#include "internal.h"

#ifndef CONFIG_X86_64
#error "the gate returns from a kprobe with int3_emulate_ret(): x86-64 only"
#endif

#define PF_PROBE_NAME	"ftrace_filter_pid_sched_switch_probe"
#define PF_TRACE_NAME	"global_trace"

/*
 * ftrace_filter_pid_sched_switch_probe(), which the gate calls, is a
 * sched_switch probe: pf_probe has the type of our own probe below, which
 * pf_gate_init() passes to the kernel's check_trace_callback_type_sched_switch():
 * a changed tracepoint prototype fails the build instead of calling ftrace
 * with the wrong arguments.
 */
static void pf_switch_probe(void *data, bool preempt, struct task_struct *prev,
			    struct task_struct *next, unsigned int prev_state);

static struct tracepoint *pf_sched_switch;
/* Both found in the sched_switch table, then only compared with it. */
static typeof(&pf_switch_probe) pf_probe;
static void *pf_trace;

/* What the kprobes do to trace_ignore_this_task() on this CPU. */
enum pf_mode {
	PF_MODE_NONE,		/* nothing: a context switch, someone else */
	PF_MODE_OBSERVE,	/* record its answer in pf_answer */
	PF_MODE_SKIP,		/* do not run it, answer pf_answer */
	PF_MODE_CLOSE,		/* the same, called with interrupts off */
	PF_MODE_REOPEN,		/* do not run it, answer false; in sched_switch */
};

static DEFINE_PER_CPU(int, pf_mode);
static DEFINE_PER_CPU(unsigned long, pf_answer);
static DEFINE_PER_CPU(int, pf_done);	/* the kprobe did what pf_mode said */
static DEFINE_PER_CPU(int, pf_open);	/* between open and close */
static DEFINE_PER_CPU(struct task_struct *, pf_open_task);	/* who opened */
static bool pf_switch_probe_registered;

static void pf_find_sched_switch(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		*(struct tracepoint **)priv = tp;
}

/* Is @addr exactly the start of the kernel symbol @name? */
static bool pf_is_symbol_start(const void *addr, const char *name)
{
	char buf[KSYM_SYMBOL_LEN];
	size_t len = strlen(name);

	sprint_symbol(buf, (unsigned long)addr);
	return !strncmp(buf, name, len) && !strncmp(buf + len, "+0x0/", 5);
}

/*
 * An indirect call on an IBT kernel must land on ENDBR64. The pointer comes
 * from the tracepoint table so this always holds; check it rather than trust
 * it, since QEMU does not enforce IBT.
 */
static bool pf_has_endbr(const void *addr)
{
#ifdef CONFIG_X86_KERNEL_IBT
	u32 insn;

	if (copy_from_kernel_nofault(&insn, addr, sizeof(insn)))
		return false;
	return insn == 0xfa1e0ff3;	/* f3 0f 1e fa: endbr64 */
#else
	return true;
#endif
}

/*
 * Finds ftrace's PID probe for global_trace among the registered sched_switch
 * probes. Process context, under pf_lock.
 */
static bool pf_probe_lookup(void)
{
	struct tracepoint_func *it;
	bool found = false;

	rcu_read_lock_sched();
	for (it = rcu_dereference_sched(pf_sched_switch->funcs);
	     it && it->func; it++) {
		if (pf_probe && it->func == pf_probe && it->data == pf_trace) {
			found = true;
			break;
		}
		if (pf_probe)
			continue;
		if (pf_is_symbol_start(it->func, PF_PROBE_NAME) &&
		    pf_is_symbol_start(it->data, PF_TRACE_NAME) &&
		    pf_has_endbr(it->func)) {
			pf_probe = it->func;
			WRITE_ONCE(pf_trace, it->data);
			found = true;
			break;
		}
	}
	rcu_read_unlock_sched();
	return found;
}

/* Is set_ftrace_pid non-empty right now? Any context. */
bool notrace pf_gate_ready(void)
{
	struct tracepoint_func *it;
	bool found = false;

	if (!pf_probe)
		return false;
	rcu_read_lock_sched_notrace();
	for (it = rcu_dereference_sched(pf_sched_switch->funcs);
	     it && it->func; it++) {
		if (it->func == pf_probe && it->data == pf_trace) {
			found = true;
			break;
		}
	}
	rcu_read_unlock_sched_notrace();
	return found;
}

/* Is @tr the trace array the gate steers? Any context. */
bool notrace pf_gate_is_trace_array(const void *tr)
{
	return tr == READ_ONCE(pf_trace);
}

/*
 * Is this trace_ignore_this_task() call the gate's own, in @mode? pf_mode is
 * set around the gate's calls, which run in softirq context with interrupts
 * enabled. A hardirq that interrupts them (set_event_pid's wakeup probe
 * calls trace_ignore_this_task() too) runs with interrupts disabled: the
 * interrupted flags in the int3 frame tell the two apart. Interrupts stay
 * enabled on purpose: one held back while the gate opens would be delivered,
 * and traced, before the handler's graph starts.
 */
static bool notrace pf_is_gate_call(struct pt_regs *regs, int mode)
{
	return this_cpu_read(pf_mode) == mode &&
	       (regs->flags & X86_EFLAGS_IF);
}

/*
 * Closing is the exception: an interrupt that became pending while the int3
 * ran would be delivered at its iret, before the probe writes the per-CPU
 * value, i.e. still traced, at depth 0 after the graph. So the gate closes
 * with interrupts off, and no hardirq can call in meanwhile.
 */
static bool notrace pf_is_close_call(struct pt_regs *regs)
{
	return this_cpu_read(pf_mode) == PF_MODE_CLOSE &&
	       !(regs->flags & X86_EFLAGS_IF);
}

/* The RT re-open from our sched_switch probe: interrupts off too. */
static bool notrace pf_is_reopen_call(struct pt_regs *regs)
{
	return this_cpu_read(pf_mode) == PF_MODE_REOPEN &&
	       !(regs->flags & X86_EFLAGS_IF);
}

/* Entry of trace_ignore_this_task(): only step 1 needs the return. */
static int notrace pf_tit_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return pf_is_gate_call(regs, PF_MODE_OBSERVE) ? 0 : 1;
}

static int notrace pf_tit_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	this_cpu_write(pf_answer, regs_return_value(regs));
	this_cpu_write(pf_done, 1);
	return 0;
}

static struct kretprobe pf_tit_krp = {
	.kp.symbol_name	= "trace_ignore_this_task",
	.entry_handler	= pf_tit_entry,
	.handler	= pf_tit_return,
};

/*
 * Steps 2 and 3: return to the caller with pf_answer, as the function's own
 * ret would. The probe sits on the function entry (checked at arm time), so
 * the return address is on top of the stack. It is an int3 probe, never an
 * optimized jump (see pf_tit_post), so changing regs->ip is honoured.
 */
static int notrace pf_tit_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (pf_is_reopen_call(regs)) {
		regs_set_return_value(regs, 0);
	} else if (pf_is_gate_call(regs, PF_MODE_SKIP) ||
		   pf_is_close_call(regs)) {
		regs_set_return_value(regs, this_cpu_read(pf_answer));
	} else {
		return 0;
	}
	int3_emulate_ret(regs);
	this_cpu_write(pf_done, 1);
	return 1;
}

/* Never called when pf_tit_pre() returns 1; its presence stops optprobes. */
static void notrace pf_tit_post(struct kprobe *p, struct pt_regs *regs,
			unsigned long flags)
{
}

static struct kprobe pf_tit_kp = {
	.symbol_name	= "trace_ignore_this_task",
	.pre_handler	= pf_tit_pre,
	.post_handler	= pf_tit_post,
};

static bool pf_probes_registered;

/*
 * For the tests: the kretprobe's instances. Every trace_ignore_this_task()
 * call on any CPU holds one while it runs (the entry handler then declines
 * the calls that are not the gate's), so with 1 the gate's step 1 misses
 * whenever another CPU is in a context switch: what a loaded machine with
 * the default (2 per CPU, at least 10) does rarely. 0: the default.
 */
static int pf_test_gate_maxactive;
module_param_named(test_gate_maxactive, pf_test_gate_maxactive, int, 0444);
MODULE_PARM_DESC(test_gate_maxactive,
		 "for tests: instances of the gate's return probe (0: the kernel's default); 1 makes it miss often");

/* register_*() fill in the structs; a later registration needs them clean. */
static void pf_probes_reset(void)
{
	memset(&pf_tit_kp, 0, sizeof(pf_tit_kp));
	pf_tit_kp.symbol_name = "trace_ignore_this_task";
	pf_tit_kp.pre_handler = pf_tit_pre;
	pf_tit_kp.post_handler = pf_tit_post;
	memset(&pf_tit_krp.kp, 0, sizeof(pf_tit_krp.kp));
	pf_tit_krp.kp.symbol_name = "trace_ignore_this_task";
	pf_tit_krp.nmissed = 0;
	pf_tit_krp.maxactive = 0;
}

/* Calls ftrace's sched_switch probe for @next with @mode set. */
static bool notrace pf_call_probe(int mode, struct task_struct *next)
{
	this_cpu_write(pf_done, 0);
	this_cpu_write(pf_mode, mode);
	pf_probe(pf_trace, false, current, next, TASK_RUNNING);
	this_cpu_write(pf_mode, PF_MODE_NONE);
	return this_cpu_read(pf_done);
}

/*
 * A handler called from within a traced handler on the same CPU (a nested
 * delivery) is part of the outer graph already.
 */
bool notrace pf_gate_is_open(void)
{
	return this_cpu_read(pf_open);
}

/*
 * set_ftrace_pid was emptied while the gate called ftrace's probe: ftrace
 * unregisters the probe and then resets every CPU's value to "trace all",
 * with nothing to stop our call from landing after the reset and leaving
 * "ignore" behind, which would silence function_graph on this CPU until
 * set_ftrace_pid is written again. So after each call the table is
 * checked again; if the probe is gone, the CPU is set back to a value that
 * traces (current's PID: with no PID filter, any value but "ignore"
 * traces). Interrupts are off, so a new set_ftrace_pid write's IPI, which
 * recomputes every CPU, comes after us. Returns whether the probe was
 * still there.
 */
static bool notrace pf_gate_settle(void)
{
	unsigned long flags;
	bool ready;

	local_irq_save(flags);
	ready = pf_gate_ready();
	if (!ready)
		pf_call_probe(PF_MODE_REOPEN, current);
	local_irq_restore(flags);
	return ready;
}

/*
 * Step 1, before the packet is claimed and announced: records what
 * trace_ignore_this_task() answers for current, so that the gate can be
 * closed again. The one step that can fail: the kretprobe finds no free
 * instance (missed), the context is not the gate's (interrupts off), or
 * set_ftrace_pid was emptied meanwhile. Changes nothing. Softirq context,
 * from the hook.
 */
bool notrace pf_gate_prepare(void)
{
	bool done;

	/*
	 * On RT the softirq is preemptible: a switch between setting pf_mode
	 * and the kprobe would run pf_switch_probe(), which resets pf_mode.
	 * ftrace's probe also expects to run non-preemptible
	 * (rcu_dereference_sched). Preemption is off anyway in softirq
	 * context elsewhere.
	 */
	preempt_disable_notrace();
	done = pf_call_probe(PF_MODE_OBSERVE, current);
	done = pf_gate_settle() && done;
	preempt_enable_notrace();
	return done;
}

/*
 * Step 2: starts tracing this CPU, after pf_gate_prepare() succeeded on it
 * for this packet (pf_answer holds its answer; nothing between uses it: the
 * hooks of one CPU are serialized, on RT too, and interrupts leave pf_answer
 * alone). A plain kprobe, no return instance: it can only be missed when
 * re-entered from another kprobe handler, which pf_gate_prepare() would have
 * been too. So it does not fail where step 1 did not.
 */
bool notrace pf_gate_open(void)
{
	unsigned long answer;
	bool open;

	preempt_disable_notrace();
	answer = this_cpu_read(pf_answer);
	this_cpu_write(pf_answer, 0);	/* false: trace this task */
	/* Open before the call: a preemption right after it re-opens (RT). */
	this_cpu_write(pf_open_task, current);
	this_cpu_write(pf_open, 1);
	open = pf_call_probe(PF_MODE_SKIP, current);
	this_cpu_write(pf_answer, answer);
	this_cpu_write(pf_open, open);
	preempt_enable_notrace();
	return open;
}

/* Puts this CPU back as it was before pf_gate_open(). */
void notrace pf_gate_close(void)
{
	unsigned long flags;

	local_irq_save(flags);
	this_cpu_write(pf_open, 0);
	/*
	 * If set_ftrace_pid was emptied meanwhile, ftrace has reset every CPU
	 * to "trace all": calling the probe now would leave a PID behind.
	 */
	if (pf_gate_ready()) {
		pf_call_probe(PF_MODE_CLOSE, current);
		pf_gate_settle();
	}
	local_irq_restore(flags);
}

/* Called under pf_lock before a filter is armed. */
int pf_gate_arm(struct netlink_ext_ack *extack)
{
	int ret;

	if (!pf_probe_lookup()) {
		NL_SET_ERR_MSG(extack,
			       "set_ftrace_pid is empty: write a PID that never runs first, e.g. cat /proc/sys/kernel/pid_max > /sys/kernel/tracing/set_ftrace_pid");
		return -ESRCH;
	}
	if (pf_probes_registered)
		return 0;

	/* The kprobe first: its post_handler keeps the address unoptimized. */
	ret = register_kprobe(&pf_tit_kp);
	if (ret) {
		NL_SET_ERR_MSG(extack,
			       "cannot register a kprobe on trace_ignore_this_task (CONFIG_KPROBES?)");
		goto reset;
	}
	if (!(pf_tit_kp.flags & KPROBE_FLAG_ON_FUNC_ENTRY) ||
	    kprobe_ftrace(&pf_tit_kp)) {
		NL_SET_ERR_MSG(extack,
			       "trace_ignore_this_task cannot be probed at its entry with int3 on this kernel");
		ret = -EOPNOTSUPP;
		goto unreg_kp;
	}
	if (pf_test_gate_maxactive > 0)
		pf_tit_krp.maxactive = pf_test_gate_maxactive;
	ret = register_kretprobe(&pf_tit_krp);
	if (ret) {
		NL_SET_ERR_MSG(extack,
			       "cannot register a kretprobe on trace_ignore_this_task (CONFIG_KRETPROBES?)");
		goto unreg_kp;
	}
	pf_probes_registered = true;
	return 0;

unreg_kp:
	unregister_kprobe(&pf_tit_kp);
reset:
	pf_probes_reset();
	return ret;
}

/* Called under pf_lock once no hook can be inside the gate any more. */
void pf_gate_disarm(void)
{
	if (!pf_probes_registered)
		return;
	unregister_kretprobe(&pf_tit_krp);
	unregister_kprobe(&pf_tit_kp);
	pf_probes_reset();
	pf_probes_registered = false;
}

/*
 * RT only: runs after every other sched_switch probe, ftrace's included (it
 * has the default priority), with interrupts off. When the task that opened
 * the gate on this CPU is switched back in, ftrace has just shut the gate
 * for it: open it again.
 */
static void notrace pf_switch_probe(void *data, bool preempt,
				    struct task_struct *prev,
				    struct task_struct *next,
				    unsigned int prev_state)
{
	if (!this_cpu_read(pf_open) || next != this_cpu_read(pf_open_task))
		return;
	if (pf_gate_ready())
		pf_call_probe(PF_MODE_REOPEN, next);
}

int pf_gate_init(void)
{
	int ret;

	/* The compiler checks pf_probe against the tracepoint's own type. */
	check_trace_callback_type_sched_switch(pf_switch_probe);
	BUILD_BUG_ON(!__same_type(pf_probe, void (*)(void *, bool,
						     struct task_struct *,
						     struct task_struct *,
						     unsigned int)));
	for_each_kernel_tracepoint(pf_find_sched_switch, &pf_sched_switch);
	if (!pf_sched_switch) {
		pr_err("no sched_switch tracepoint (CONFIG_TRACEPOINTS?)\n");
		return -ENOENT;
	}
	if (!IS_ENABLED(CONFIG_PREEMPT_RT))
		return 0;
	ret = tracepoint_probe_register_prio(pf_sched_switch, pf_switch_probe,
					     NULL, INT_MIN);
	if (ret) {
		pr_err("cannot register a sched_switch probe: %d\n", ret);
		return ret;
	}
	pf_switch_probe_registered = true;
	return 0;
}

void pf_gate_exit(void)
{
	pf_gate_disarm();
	if (pf_switch_probe_registered) {
		tracepoint_probe_unregister(pf_sched_switch, pf_switch_probe, NULL);
		tracepoint_synchronize_unregister();
		pf_switch_probe_registered = false;
	}
}
