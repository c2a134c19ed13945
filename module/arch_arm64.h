/* SPDX-License-Identifier: GPL-2.0 */
/* arm64's part (arch.h). */
#ifndef PF_ARCH_ARM64_H
#define PF_ARCH_ARM64_H

#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/uaccess.h>
#include <asm/insn.h>

/*
 * Were interrupts enabled where the kprobe hit (the BRK exception's saved
 * PSTATE, and the GIC priority mask with pseudo-NMI)?
 */
static __always_inline bool pf_arch_irqs_were_on(const struct pt_regs *regs)
{
	return interrupts_enabled(regs);
}

/* A kprobe at a function's entry: its first two arguments (x0, x1) NULL. */
static __always_inline void pf_arch_null_args01(struct pt_regs *regs)
{
	regs->regs[0] = 0;
	regs->regs[1] = 0;
}

/*
 * A kprobe at a function's entry: the function returns at once, to its
 * caller (the link register; error injection's
 * override_function_with_return()). @ret is x86's.
 */
static __always_inline void pf_arch_skip_function(struct pt_regs *regs,
						  void (*ret)(void))
{
	instruction_pointer_set(regs, procedure_link_pointer(regs));
}

/*
 * An indirect call (BLR) on a BTI kernel must land on BTI C or JC, or on
 * PACIASP/PACIBSP, which act as one; the compiler puts one at the start of
 * every address-taken function with -mbranch-protection=pac-ret+bti.
 */
static inline bool pf_arch_call_landing(const void *addr)
{
#ifdef CONFIG_ARM64_BTI_KERNEL
	u32 insn;

	if (copy_from_kernel_nofault(&insn, addr, sizeof(insn)))
		return false;
	insn = le32_to_cpu((__force __le32)insn);
	return insn == 0xd503245f ||	/* bti c */
	       insn == 0xd50324df ||	/* bti jc */
	       insn == 0xd503233f ||	/* paciasp */
	       insn == 0xd503237f;	/* pacibsp */
#else
	return true;
#endif
}

/*
 * The ftrace call site of the function a disabled kprobe at its start
 * found, or 0. arm64 has no KPROBES_ON_FTRACE: the kprobe sits on the
 * function's first instruction, ahead of ftrace's patched NOPs. Its start
 * will do: ftrace_set_filter_ip() takes a function's start for its ftrace
 * site since 5.18 (ftrace_location()), and fails on an untraceable one.
 */
static inline unsigned long pf_arch_ftrace_site(const struct kprobe *kp)
{
	return (unsigned long)kp->addr;
}

/*
 * Is @ip, the callback's, the ftrace site of the function starting at
 * @site? ftrace's site is its BL, after MOV X9, LR (and BTI C on BTI
 * kernels): one or two instructions in.
 */
#define pf_arch_at_ftrace_site(ip, site) \
	((ip) - (site) <= 2 * AARCH64_INSN_SIZE)

/*
 * The rx device hook's ftrace callback: its first argument, and the address
 * it sends the call on to. DYNAMIC_FTRACE_WITH_ARGS (6.2+) gives the
 * accessors, and ftrace_caller returns to the PC left in ftrace_regs.
 * 6.1 has DYNAMIC_FTRACE_WITH_REGS only, where the generic
 * ftrace_instruction_pointer_set() does nothing: there the hook stays off
 * and rx is traced from ip_rcv() on (rx.c), as rxcore.c says at install.
 */
#ifdef PF_FTRACE_REGS_ACCESSORS
#define PF_ARCH_RXCORE 1
#define pf_fregs ftrace_regs
#define pf_arg0(fregs) ftrace_regs_get_argument(fregs, 0)
#define pf_set_ip(fregs, ip) ftrace_regs_set_instruction_pointer(fregs, ip)
#else
#define PF_ARCH_RXCORE 0
#define pf_fregs ftrace_regs
#define pf_arg0(fregs) ((fregs)->regs.regs[0])
/* Never called (no hook installed), but the functions stay referenced. */
#define pf_set_ip(fregs, ip) do { (void)(fregs); (void)(ip); } while (0)
#endif
#define PF_FTRACE_FLAGS 0

#endif /* PF_ARCH_ARM64_H */
