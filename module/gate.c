// SPDX-License-Identifier: GPL-2.0
/*
 * The ftrace gate: make ftrace trace the current CPU for the duration of one
 * protocol handler call, and nothing else.
 *
 * ftrace's PID filter caches its decision per CPU, in
 * tr->array_buffer.data->ftrace_ignore_pid, written at every context switch
 * by ftrace_filter_pid_sched_switch_probe() from trace_ignore_this_task().
 * The gate calls that probe itself, for current, while a kretprobe forces
 * trace_ignore_this_task() to return false: the probe writes current->pid,
 * and every function entered from then on is traced (on 6.11+ fgraph also
 * requires pid == current->pid, which this satisfies). Calling the probe
 * again unforced writes what a context switch to current writes, which is
 * what was there before.
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
 */
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>

#include "internal.h"

#define PF_PROBE_NAME	"ftrace_filter_pid_sched_switch_probe"
#define PF_TRACE_NAME	"global_trace"

/* The signature of ftrace_filter_pid_sched_switch_probe() since 5.19. */
typedef void (*pf_probe_fn)(void *data, bool preempt,
			    struct task_struct *prev,
			    struct task_struct *next,
			    unsigned int prev_state);

static struct tracepoint *pf_sched_switch;
/* Both found in the sched_switch table, then only compared with it. */
static pf_probe_fn pf_probe;
static void *pf_trace;

/* 1 while this CPU calls the probe forced; set by the return handler. */
static DEFINE_PER_CPU(int, pf_forcing);
static DEFINE_PER_CPU(int, pf_forced);

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
			pf_trace = it->data;
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

/*
 * Entry of trace_ignore_this_task(): only our own forced call needs the
 * return handler; every other call (each context switch) is let go here.
 */
static int pf_tit_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return this_cpu_read(pf_forcing) ? 0 : 1;
}

static int pf_tit_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	regs_set_return_value(regs, 0);	/* false: do not ignore this task */
	this_cpu_write(pf_forced, 1);
	return 0;
}

static struct kretprobe pf_tit_krp = {
	.kp.symbol_name	= "trace_ignore_this_task",
	.entry_handler	= pf_tit_entry,
	.handler	= pf_tit_return,
};

static bool pf_krp_registered;

/* Starts tracing this CPU. Softirq context, from the hook. */
bool notrace pf_gate_open(void)
{
	unsigned long flags;
	bool forced;

	/*
	 * Interrupts off: a wakeup in hardirq may call trace_ignore_this_task()
	 * (set_event_pid) and must not be the call that gets forced.
	 */
	local_irq_save(flags);
	this_cpu_write(pf_forced, 0);
	this_cpu_write(pf_forcing, 1);
	pf_probe(pf_trace, false, current, current, TASK_RUNNING);
	this_cpu_write(pf_forcing, 0);
	forced = this_cpu_read(pf_forced);
	local_irq_restore(flags);
	return forced;
}

/* Puts this CPU back as the last context switch left it. */
void notrace pf_gate_close(void)
{
	/*
	 * If set_ftrace_pid was emptied meanwhile, ftrace has reset every CPU
	 * to "trace all": calling the probe now would leave a PID behind.
	 */
	if (pf_gate_ready())
		pf_probe(pf_trace, false, current, current, TASK_RUNNING);
}

/* Called under pf_lock before a filter is armed. */
int pf_gate_arm(struct netlink_ext_ack *extack)
{
	int ret;

	if (!pf_probe_lookup()) {
		NL_SET_ERR_MSG(extack,
			       "set_ftrace_pid is empty: write a PID that never runs first, e.g. cat /proc/sys/kernel/pid_max > /sys/kernel/tracing/set_ftrace_pid");
		return -ENOTCONN;
	}
	if (pf_krp_registered)
		return 0;
	ret = register_kretprobe(&pf_tit_krp);
	if (ret) {
		NL_SET_ERR_MSG(extack,
			       "cannot register a kretprobe on trace_ignore_this_task (CONFIG_KRETPROBES?)");
		return ret;
	}
	pf_krp_registered = true;
	return 0;
}

/* Called under pf_lock once no hook can be inside the gate any more. */
void pf_gate_disarm(void)
{
	if (!pf_krp_registered)
		return;
	unregister_kretprobe(&pf_tit_krp);
	/* A fresh registration needs a fresh struct state. */
	memset(&pf_tit_krp.kp, 0, sizeof(pf_tit_krp.kp));
	pf_tit_krp.kp.symbol_name = "trace_ignore_this_task";
	pf_tit_krp.nmissed = 0;
	pf_krp_registered = false;
}

int pf_gate_init(void)
{
	for_each_kernel_tracepoint(pf_find_sched_switch, &pf_sched_switch);
	if (!pf_sched_switch) {
		pr_err("pktfilt: no sched_switch tracepoint (CONFIG_TRACEPOINTS?)\n");
		return -ENOENT;
	}
	return 0;
}

void pf_gate_exit(void)
{
	pf_gate_disarm();
}
