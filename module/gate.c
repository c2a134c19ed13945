// SPDX-License-Identifier: GPL-2.0
/*
 * The ftrace gate: make ftrace trace the current CPU for the duration of one
 * protocol handler call, and nothing else.
 *
 * ftrace's PID filter caches its decision per CPU, in
 * tr->array_buffer.data->ftrace_ignore_pid, written at every context switch
 * by ftrace_filter_pid_sched_switch_probe() from trace_ignore_this_task().
 * The gate calls that probe itself, for current, twice:
 *  1. to open: a kprobe at the entry of trace_ignore_this_task() hands it
 *     no PID lists (its first two arguments NULL), so it answers false
 *     ("trace this task"): the probe writes current->pid and every function
 *     entered from then on is traced (6.11+ fgraph also requires pid ==
 *     current->pid, which this satisfies);
 *  2. to close, after the handler: unforced. trace_ignore_this_task() gives
 *     the answer ftrace itself gives current at a context switch, and the
 *     probe writes what the per-CPU value is whenever current runs. Its
 *     body (a PID list lookup; in kernels before 7.x under a spinlock whose
 *     functions are traced) runs while the CPU is still traced, after the
 *     handler returned: outside the graph, and not recorded at all with
 *     set_graph_function on the roots, as pktfilt trace sets it.
 * The kprobe only changes argument registers, never the return address, so
 * the kernel may optimize it into a jump (optprobe): at every context
 * switch, while armed, the scheduler's own call of trace_ignore_this_task()
 * passes a jump and a quick "not ours" instead of two int3 traps (the cost
 * BENCHMARKS.md measured, about 700 instructions per switch, with the
 * kretprobe and int3 kprobe this gate used before). arm64 has no
 * optprobes: there each of those calls takes one BRK trap.
 *
 * No private structure is read or written, and nothing is looked up with
 * kallsyms_lookup_name(). The probe and its trace_array are taken from the
 * sched_switch tracepoint's own table of registered probes, so:
 *  - the function pointer we call is the very pointer the scheduler calls
 *    through __traceiter_sched_switch: an address-taken function start,
 *    which keeps its landing pad on IBT or BTI kernels (checked anyway
 *    below);
 *  - its presence in the table proves that set_ftrace_pid (or
 *    set_ftrace_notrace_pid) is non-empty. When it is empty the probe is not
 *    registered, the per-CPU value is FTRACE_PID_TRACE, and calling the probe
 *    would leave a PID behind that nothing resets: the gate stays shut.
 * The probe's data tells the top-level trace array, global_trace, from the
 * trace arrays of tracefs instances: global_trace is the one static trace
 * array, instances are kzalloc()ed (trace_array_create()).
 * pf_is_core_object() tells them apart without reading either, and names
 * global_trace where kallsyms names data (KALLSYMS_ALL; Debian's arm64 6.1
 * has none).
 *
 * On PREEMPT_RT, softirqs run in preemptible task context: a context switch
 * inside the handler makes ftrace's probe recompute the per-CPU value, for
 * the next task and again for ours when it comes back, which would leave the
 * rest of the graph untraced. A probe of our own, registered after ftrace's,
 * opens the gate again when the task it was opened for is switched back in.
 * The task cannot move meanwhile: softirq processing on RT is migration
 * disabled, and serialized per CPU, so no other hook call can interleave
 * (from 6.18 on only with PREEMPT_RT_NEEDS_BH_LOCK: without it pktfilt
 * refuses to arm, filter.c).
 *
 * Indirect calls (IBT: each target must start with ENDBR64, arm64 BTI: with
 * a landing pad, arch.h; QEMU does not enforce IBT, harden.sh's ibt case
 * reads the bytes on the IBT kernels):
 *  - pf_probe(): ftrace_filter_pid_sched_switch_probe(), the very pointer
 *    the scheduler calls through the sched_switch tracepoint, so an
 *    address-taken function start; pf_probe_lookup() also checks its
 *    landing pad.
 * The kprobe and RT sched_switch handlers are called by the kernel through
 * pointers; their addresses are taken here, so the compiler gives them
 * ENDBR64 (BTI C).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <trace/events/sched.h>

#include "arch.h"
#include "internal.h"

#define PF_PROBE_NAME	"ftrace_filter_pid_sched_switch_probe"
#define PF_TRACE_NAME	"global_trace"

/*
 * ftrace_filter_pid_sched_switch_probe(), which the gate calls, is a
 * sched_switch probe: pf_probe has the type of our own probe below, which
 * pf_gate_init() passes to the kernel's check_trace_callback_type_sched_switch():
 * a changed tracepoint prototype fails the build instead of calling ftrace
 * with the wrong arguments.
 */
#ifdef PF_SCHED_SWITCH_PREV_STATE
static void pf_switch_probe(void *data, bool preempt, struct task_struct *prev,
			    struct task_struct *next, unsigned int prev_state);
#else
/* Before 5.18, no prev_state. */
static void pf_switch_probe(void *data, bool preempt, struct task_struct *prev,
			    struct task_struct *next);
#endif

static struct tracepoint *pf_sched_switch;
/* Both found in the sched_switch table, then only compared with it. */
static typeof(&pf_switch_probe) pf_probe;
static void *pf_trace;

/* What the kprobe does to trace_ignore_this_task() on this CPU. */
enum pf_mode {
	PF_MODE_NONE,		/* nothing: a context switch, someone else */
	PF_MODE_OPEN,		/* no PID lists: it answers false */
	PF_MODE_REOPEN,		/* the same, with interrupts off (settle, RT) */
	PF_MODE_CLOSE,		/* nothing: the gate's close (a test delay) */
	PF_MODE_TRIAL,		/* nothing but pf_done: does the kprobe fire? */
};

static DEFINE_PER_CPU(int, pf_mode);
static DEFINE_PER_CPU(int, pf_done);	/* the kprobe did what pf_mode said */
static DEFINE_PER_CPU(int, pf_open);	/* between open and close */
static DEFINE_PER_CPU(struct task_struct *, pf_open_task);	/* who opened */
static bool pf_switch_probe_registered;

static void pf_find_sched_switch(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		*(struct tracepoint **)priv = tp;
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
		if (pf_is_core_symbol(it->func, PF_PROBE_NAME) &&
		    pf_is_core_object(it->data, PF_TRACE_NAME) &&
		    pf_arch_call_landing(it->func)) {
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
 * interrupted context's flags in the trap frame (int3, BRK) tell the two
 * apart. Interrupts stay
 * enabled on purpose: one held back while the gate opens would be delivered,
 * and traced, before the handler's graph starts.
 */
static bool notrace pf_is_gate_call(struct pt_regs *regs, int mode)
{
	return this_cpu_read(pf_mode) == mode && pf_arch_irqs_were_on(regs);
}

/* Settling and the RT re-open: interrupts off. */
static bool notrace pf_is_reopen_call(struct pt_regs *regs)
{
	return this_cpu_read(pf_mode) == PF_MODE_REOPEN &&
	       !pf_arch_irqs_were_on(regs);
}

/*
 * At the entry of trace_ignore_this_task(filtered_pids, filtered_no_pids,
 * task): for the gate's own calls, no lists, so the answer is false. The
 * arguments are still in their registers (arch.h), and an optimized probe
 * (x86-64) restores the registers it saved, changes included.
 */
static int notrace pf_tit_pre(struct kprobe *p, struct pt_regs *regs)
{
	/* Interrupts are off in the close: no hardirq's call can be it. */
	if (unlikely(pf_test_delay_close_ms) &&
	    this_cpu_read(pf_mode) == PF_MODE_CLOSE)
		pf_test_delay("gate close, inside ftrace's probe",
			      xchg(&pf_test_delay_close_ms, 0), true);
	if (pf_is_gate_call(regs, PF_MODE_TRIAL)) {
		if (unlikely(pf_test_delay_trial_ms))
			pf_test_delay("gate trial, inside ftrace's probe",
				      xchg(&pf_test_delay_trial_ms, 0), true);
		this_cpu_write(pf_done, 1);
		return 0;
	}
	if (!pf_is_gate_call(regs, PF_MODE_OPEN) && !pf_is_reopen_call(regs))
		return 0;
	pf_arch_null_args01(regs);
	this_cpu_write(pf_done, 1);
	return 0;
}

static struct kprobe pf_tit_kp = {
	.symbol_name	= "trace_ignore_this_task",
	.pre_handler	= pf_tit_pre,
};

static bool pf_probes_registered;

/* Is the registered kprobe at the very entry of trace_ignore_this_task()? */
static bool pf_kprobe_on_entry(void)
{
#ifdef KPROBE_FLAG_ON_FUNC_ENTRY
	return pf_tit_kp.flags & KPROBE_FLAG_ON_FUNC_ENTRY;
#else
	/* Before 5.17 no flag says so (and no IBT moves it): its address. */
	return pf_is_core_symbol(pf_tit_kp.addr, "trace_ignore_this_task");
#endif
}

/* register_kprobe() fills in the struct; a later registration needs it clean. */
static void pf_probes_reset(void)
{
	memset(&pf_tit_kp, 0, sizeof(pf_tit_kp));
	pf_tit_kp.symbol_name = "trace_ignore_this_task";
	pf_tit_kp.pre_handler = pf_tit_pre;
}

/* Calls ftrace's sched_switch probe for @next with @mode set. */
static bool notrace pf_call_probe(int mode, struct task_struct *next)
{
	this_cpu_write(pf_done, 0);
	this_cpu_write(pf_mode, mode);
#ifdef PF_SCHED_SWITCH_PREV_STATE
	pf_probe(pf_trace, false, current, next, TASK_RUNNING);
#else
	pf_probe(pf_trace, false, current, next);
#endif
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
 * Does the gate's kprobe fire in this context? ftrace's probe is called
 * unforced, so it writes for current what it already holds: nothing
 * changes but pf_done. Unless set_ftrace_pid was emptied between the
 * check and the probe's write, as in the close: then that write lands
 * "ignore" after ftrace reset every CPU to "trace", and settling sets
 * this CPU back. Whether the kprobe fired is the answer either way (the
 * gate's open finds the probe gone by itself). Interrupts on; preemption
 * off.
 */
static bool notrace pf_gate_trial(void)
{
	bool fires;

	if (!pf_gate_ready())
		return false;
	fires = pf_call_probe(PF_MODE_TRIAL, current);
	pf_gate_settle();
	return fires;
}

/*
 * Before the packet is claimed and announced: can the gate open here? The
 * context must be the gate's (interrupts on), set_ftrace_pid non-empty,
 * and the kprobe must fire. It does not when kprobes are disabled
 * (debugfs kprobes/enabled), nor in a softirq run on top of another
 * kprobe's handler (ftrace-based and optimized kprobes run theirs with
 * interrupts on): kprobes count such a hit as missed and skip our
 * handler. So the gate tries it first, changing nothing, and a packet it
 * cannot trace is neither claimed nor announced. Softirq context (or BH
 * off), from the hook.
 */
bool notrace pf_gate_prepare(void)
{
	bool fires;

	if (irqs_disabled())
		return false;
	preempt_disable_notrace();
	fires = pf_gate_trial();
	preempt_enable_notrace();
	return fires;
}

/*
 * Does the gate's kprobe fire? For arming and `pktfilt show`, in process
 * context: false when kprobes are disabled. Only asked once
 * set_ftrace_pid is set (pf_gate_ready()); true otherwise.
 */
bool pf_gate_kprobe_fires(void)
{
	bool fires;

	if (!pf_probes_registered || !pf_gate_ready())
		return true;
	preempt_disable();
	fires = pf_gate_trial();
	preempt_enable();
	return fires;
}

/*
 * Starts tracing this CPU. Right after pf_gate_prepare() tried the kprobe
 * in the same context, it fails only if kprobes were disabled in between
 * (counted as "gate missed"; the watcher on that switch marks the filter
 * stale, see watch.c).
 */
bool notrace pf_gate_open(void)
{
	bool open;

	/*
	 * On RT the softirq is preemptible: a switch between setting pf_mode
	 * and the kprobe would run pf_switch_probe(), which resets pf_mode.
	 * ftrace's probe also expects to run non-preemptible
	 * (rcu_dereference_sched).
	 */
	preempt_disable_notrace();
	/* Open before the call: a preemption right after it re-opens (RT). */
	this_cpu_write(pf_open_task, current);
	this_cpu_write(pf_open, 1);
	open = pf_call_probe(PF_MODE_OPEN, current);
	open = pf_gate_settle() && open;
	this_cpu_write(pf_open, open);
	preempt_enable_notrace();
	return open;
}

/*
 * Puts this CPU back as ftrace has it for current. Interrupts off: one that
 * became pending meanwhile would otherwise be taken, and traced, before the
 * probe writes the per-CPU value.
 */
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

/*
 * The kprobe lives as long as the module: registering it, then having it
 * optimized, and unregistering it each patch the text of a function every
 * CPU runs at every context switch; once at load and once at unload is
 * all it takes. Unarmed it costs nothing unless set_ftrace_pid is set (the
 * scheduler calls trace_ignore_this_task() only then): a jump and a test.
 * Process context, under pf_lock or at load.
 */
static int pf_probes_register(struct netlink_ext_ack *extack)
{
	int ret;

	if (pf_probes_registered)
		return 0;
	ret = register_kprobe(&pf_tit_kp);
	if (ret) {
		NL_SET_ERR_MSG(extack,
			       "cannot register a kprobe on trace_ignore_this_task (CONFIG_KPROBES?)");
		goto reset;
	}
	if (!pf_kprobe_on_entry() || kprobe_ftrace(&pf_tit_kp)) {
		NL_SET_ERR_MSG(extack,
			       "trace_ignore_this_task cannot be probed at its entry on this kernel");
		ret = -EOPNOTSUPP;
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

/* Called under pf_lock before a filter is armed. */
int pf_gate_arm(struct netlink_ext_ack *extack)
{
	int ret;

	if (!pf_probe_lookup()) {
		NL_SET_ERR_MSG(extack,
#ifndef PF_PID_LIST_BITMAP
			       "set_ftrace_pid is empty: write a PID that never runs first, e.g. cat /proc/sys/kernel/pid_max > /sys/kernel/tracing/set_ftrace_pid");
#else
			       /* A bitmap of pid_max bits: pid_max is refused. */
			       "set_ftrace_pid is empty: write a PID that never runs first, e.g. echo $(($(cat /proc/sys/kernel/pid_max) - 1)) > /sys/kernel/tracing/set_ftrace_pid");
#endif
		return -ESRCH;
	}
	/* Registered at load; again here only if that failed. */
	ret = pf_probes_register(extack);
	if (ret)
		return ret;
	if (!pf_gate_kprobe_fires()) {
		NL_SET_ERR_MSG(extack,
			       "the gate's kprobe does not fire: kprobes are disabled (echo 1 > /sys/kernel/debug/kprobes/enabled)");
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * RT only: runs after every other sched_switch probe, ftrace's included (it
 * has the default priority), with interrupts off. When the task that opened
 * the gate on this CPU is switched back in, ftrace has just shut the gate
 * for it: open it again.
 */
#ifdef PF_SCHED_SWITCH_PREV_STATE
static void notrace pf_switch_probe(void *data, bool preempt, struct task_struct *prev,
				    struct task_struct *next,
				    unsigned int prev_state)
#else
static void notrace pf_switch_probe(void *data, bool preempt, struct task_struct *prev,
				    struct task_struct *next)
#endif
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
#ifdef PF_SCHED_SWITCH_PREV_STATE
	BUILD_BUG_ON(!__same_type(pf_probe, void (*)(void *, bool,
						     struct task_struct *,
						     struct task_struct *,
						     unsigned int)));
#else
	BUILD_BUG_ON(!__same_type(pf_probe, void (*)(void *, bool,
						     struct task_struct *,
						     struct task_struct *)));
#endif
	for_each_kernel_tracepoint(pf_find_sched_switch, &pf_sched_switch);
	if (!pf_sched_switch) {
		pr_err("no sched_switch tracepoint (CONFIG_TRACEPOINTS?)\n");
		return -ENOENT;
	}
	/* If it fails here, arming says why (and tries again). */
	ret = pf_probes_register(NULL);
	if (ret)
		pr_warn("no kprobe on trace_ignore_this_task yet (%d): pktfilt set will say why\n",
			ret);
	return 0;
}

/*
 * RT only: the re-open probe, registered while a filter may open the gate
 * (armed eagerly, or lazy and READY), not while one waits or none is
 * armed: every context switch would run it. Under pf_lock.
 */
int pf_gate_reopen_on(struct netlink_ext_ack *extack)
{
	int ret;

	if (!IS_ENABLED(CONFIG_PREEMPT_RT) || pf_switch_probe_registered)
		return 0;
	ret = tracepoint_probe_register_prio(pf_sched_switch, pf_switch_probe,
					     NULL, INT_MIN);
	if (ret) {
		NL_SET_ERR_MSG(extack,
			       "cannot register pktfilt's sched_switch probe, which PREEMPT_RT needs to reopen the gate");
		return ret;
	}
	pf_switch_probe_registered = true;
	return 0;
}

/*
 * At disarming (under pf_lock), once no hook runs: no gate opens after it.
 * A probe still running elsewhere is waited for at unload (pf_gate_exit()).
 */
void pf_gate_reopen_off(void)
{
	if (!pf_switch_probe_registered)
		return;
	tracepoint_probe_unregister(pf_sched_switch, pf_switch_probe, NULL);
	pf_switch_probe_registered = false;
}

void pf_gate_exit(void)
{
	if (pf_probes_registered) {
		unregister_kprobe(&pf_tit_kp);
		pf_probes_reset();
		pf_probes_registered = false;
	}
	if (IS_ENABLED(CONFIG_PREEMPT_RT)) {
		pf_gate_reopen_off();
		tracepoint_synchronize_unregister();
	}
}
