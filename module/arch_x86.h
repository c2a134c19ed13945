/* SPDX-License-Identifier: GPL-2.0 */
/* x86-64's part (arch.h). */
#ifndef PF_ARCH_X86_H
#define PF_ARCH_X86_H

#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/uaccess.h>
#include <asm/processor-flags.h>

/* Were interrupts enabled where the kprobe hit (the int3 frame's flags)? */
static __always_inline bool pf_arch_irqs_were_on(const struct pt_regs *regs)
{
	return regs->flags & X86_EFLAGS_IF;
}

/* A kprobe at a function's entry: its first two arguments (rdi, rsi) NULL. */
static __always_inline void pf_arch_null_args01(struct pt_regs *regs)
{
	regs->di = 0;
	regs->si = 0;
}

/*
 * A kprobe at a function's entry: the function returns at once, to its
 * caller, through @ret, a function that only returns (error injection's
 * just_return_func), whose return pops the return address the call left:
 * the one function_graph may have replaced meanwhile.
 */
static __always_inline void pf_arch_skip_function(struct pt_regs *regs,
						  void (*ret)(void))
{
	instruction_pointer_set(regs, (unsigned long)ret);
}

/*
 * An indirect call on an IBT kernel must land on ENDBR64. Checked rather
 * than trusted, since QEMU does not enforce IBT.
 */
static inline bool pf_arch_call_landing(const void *addr)
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
 * The ftrace call site of the function a disabled kprobe at its start
 * found, or 0: at a function's start (past ENDBR64) the kprobe sits on
 * ftrace's site if it has one (KPROBES_ON_FTRACE).
 */
static inline unsigned long pf_arch_ftrace_site(const struct kprobe *kp)
{
	return kp->flags & KPROBE_FLAG_FTRACE ? (unsigned long)kp->addr : 0;
}

/* Is @ip, the callback's, the site pf_arch_ftrace_site() gave? */
#define pf_arch_at_ftrace_site(ip, site) ((ip) == (site))

/*
 * The rx device hook's ftrace callback: its first argument, and the address
 * it sends the call on to. From 5.11 a callback gets a struct ftrace_regs
 * with the argument registers only (cheaper to save than a pt_regs;
 * livepatch changes the instruction pointer in it the same way), with
 * accessors renamed in 6.x; 5.10 gives the pt_regs that
 * FTRACE_OPS_FL_SAVE_REGS asks for. The callback needs no recursion guard
 * of ftrace's (it calls nothing it hooks): from 5.11 that is the default,
 * 5.10 wants RECURSION_SAFE. Every x86-64 kernel pktfilt builds for can.
 */
#define PF_ARCH_RXCORE 1
#if defined(PF_FTRACE_REGS_ACCESSORS)
#define pf_fregs ftrace_regs
#define pf_arg0(fregs) ftrace_regs_get_argument(fregs, 0)
#define pf_set_ip(fregs, ip) ftrace_regs_set_instruction_pointer(fregs, ip)
#define PF_FTRACE_FLAGS 0
#elif defined(PF_FTRACE_REGS)
#define pf_fregs ftrace_regs
#define pf_arg0(fregs) ((fregs)->regs.di)
#define pf_set_ip(fregs, ip) ftrace_instruction_pointer_set(fregs, ip)
#define PF_FTRACE_FLAGS 0
#else
#define pf_fregs pt_regs
#define pf_arg0(regs) ((regs)->di)
#define pf_set_ip(regs, ip) instruction_pointer_set(regs, ip)
#define PF_FTRACE_FLAGS (FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_RECURSION_SAFE)
#endif

#endif /* PF_ARCH_X86_H */
