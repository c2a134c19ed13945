// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only delays. Each widens a window that a problem fixed earlier
 * needed, so that selftests/vm/tests/harden.sh hits it every time: the
 * fix must hold with the window wide open (and the code before the fix
 * fails). 0 unless given at load; 0 costs one predicted branch.
 *
 *  - test_delay_arm_ms: in pf_filter_set(), with pf_lock held, as a slow
 *    synchronize_net() or kprobe registration would. Arming used to hold
 *    the genetlink mutex meanwhile (no parallel_ops), stalling every
 *    other generic netlink family, and every genetlink socket's close
 *    waited for pf_lock (harden.sh armstall).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/moduleparam.h>

#include "internal.h"

unsigned int pf_test_delay_arm_ms;
module_param_named(test_delay_arm_ms, pf_test_delay_arm_ms, uint, 0444);
MODULE_PARM_DESC(test_delay_arm_ms,
		 "for tests: sleep this long while arming, with the module's lock held");
