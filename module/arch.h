/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What pktfilt does differently per architecture: the registers the gate's
 * kprobe reads and changes, the landing pad an indirect call needs, how the
 * rx device hook's ftrace callback reads its argument and sends the call
 * on. One header per architecture; nothing else in module/ tests one.
 */
#ifndef PF_ARCH_H
#define PF_ARCH_H

#if defined(CONFIG_X86_64)
#include "arch_x86.h"
#elif defined(CONFIG_ARM64)
#include "arch_arm64.h"
#else
#error "pktfilt has no part for this architecture (x86-64 and arm64 only)"
#endif

#endif /* PF_ARCH_H */
