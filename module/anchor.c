// SPDX-License-Identifier: GPL-2.0
/*
 * For `pktfilt set --lazy` by hand (docs/usage.md): the one function in
 * set_ftrace_filter while function_graph runs and the filter waits (an
 * empty filter means every function, and this one is never called).
 * pktfilt trace waits with the tracer nop instead.
 *
 * The module's only traceable function: Kbuild builds every other file
 * without ftrace's call sites, this one with them.
 */
#include <linux/compiler.h>

#include "internal.h"

noinline void pktfilt_anchor(void)
{
	barrier();
}
