// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only faults, for the lazy hold's failure branches (hold.c) that no
 * packet reaches by itself: each knob forces one, so that
 * selftests/vm/tests/harden.sh can show the branch leaves the packet
 * whole (and the code before the fix fails). As testdelay.c's: 0 unless
 * given or written (all are writable), 0 costs one predicted branch; each
 * says so in dmesg when it fires, which the tests read to know the branch
 * was reached. The counting knobs count down: "the next N".
 *
 *  - test_fault_dst: the next N held packets whose dst has no reference
 *    of its own (the input route cache's, valid under RCU only) fail to
 *    get one, as dst_hold_safe() fails when another CPU dropped the
 *    route's last reference meanwhile (harden.sh holddst).
 *  - test_fault_sk: the next N held packets' sockets (tx: the sending
 *    socket) fail to get a reference, as when another CPU dropped the
 *    socket's last one meanwhile (harden.sh holdsk).
 *  - test_fault_alloc: the next N allocations of a held packet's entry
 *    fail, as GFP_ATOMIC can (harden.sh holdalloc).
 *  - test_fault_replay_ms (used once): the next held packet the work item
 *    takes off the list waits this long (a sleep, process context)
 *    before its replay, and says when the replay is over, so that a test
 *    can remove a device the packet refers to in between (harden.sh
 *    holddev).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>

#include "internal.h"

unsigned int pf_test_fault_dst;
module_param_named(test_fault_dst, pf_test_fault_dst, uint, 0644);
MODULE_PARM_DESC(test_fault_dst,
		 "for tests: the next N held packets' noref dst cannot be referenced");

unsigned int pf_test_fault_sk;
module_param_named(test_fault_sk, pf_test_fault_sk, uint, 0644);
MODULE_PARM_DESC(test_fault_sk,
		 "for tests: the next N held packets' sockets cannot be referenced");

unsigned int pf_test_fault_alloc;
module_param_named(test_fault_alloc, pf_test_fault_alloc, uint, 0644);
MODULE_PARM_DESC(test_fault_alloc,
		 "for tests: the next N allocations of a held packet's entry fail");

unsigned int pf_test_fault_replay_ms;
module_param_named(test_fault_replay_ms, pf_test_fault_replay_ms, uint, 0644);
MODULE_PARM_DESC(test_fault_replay_ms,
		 "for tests: the next held packet waits this long off the list before its replay");

/*
 * Claims one of the faults *@n still has to inject: true (and a dmesg
 * line naming @what) if there was one. Any context.
 */
bool pf_test_fault(const char *what, unsigned int *n)
{
	unsigned int old;

	do {
		old = READ_ONCE(*n);
		if (!old)
			return false;
	} while (cmpxchg(n, old, old - 1) != old);
	pr_info("test fault: %s\n", what);
	return true;
}

/*
 * Sleeps the delay *@ms asks for, once (it is reset to 0), saying @what.
 * Process context. True if it slept.
 */
bool pf_test_fault_wait(const char *what, unsigned int *ms)
{
	unsigned int n = xchg(ms, 0);

	if (!n)
		return false;
	pf_test_delay(what, n, false);
	return true;
}
