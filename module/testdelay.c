// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only delays. Each widens a window that a problem fixed earlier
 * needed, so that selftests/vm/tests/harden.sh hits it every time: the
 * fix must hold with the window wide open (and the code before the fix
 * fails). 0 unless given; 0 costs one predicted branch, and none is on
 * the path of a packet that does not claim the last count, try or close
 * the gate. Each delay says so in dmesg, which the tests read to know
 * that the window was reached.
 *
 *  - test_delay_arm_ms: in pf_filter_set(), with pf_lock held, as a slow
 *    synchronize_net() or kprobe registration would. Arming used to hold
 *    the genetlink mutex meanwhile (no parallel_ops), stalling every
 *    other generic netlink family, and every genetlink socket's close
 *    waited for pf_lock (harden.sh armstall).
 *  - test_delay_exit_ms, test_delay_claim_ms, test_delay_work_ms: in the
 *    module's exit before the filter goes, in a packet's hook between the
 *    claim of the last count and the queueing of the work that disarms,
 *    and at the start of that work. Exit used to cancel the work before
 *    clearing the filter: a packet claiming the last count meanwhile
 *    queued the work after the cancel, and it ran in freed module code
 *    (harden.sh unloadclaim).
 *  - test_delay_close_ms (writable, used once): in the gate's closing
 *    call, between ftrace's probe reading the PID lists and its write of
 *    the CPU's value. Emptying set_ftrace_pid meanwhile resets every CPU
 *    to "trace" before that write lands "ignore": function_graph stayed
 *    silent on that CPU until the gate repaired it (harden.sh closerace).
 *  - test_delay_trial_ms (writable, used once): the same window in the
 *    gate's trial (pf_gate_prepare(), pf_gate_kprobe_fires(): arming,
 *    pktfilt show), which did not repair it (harden.sh trialrace).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>

#include "internal.h"

unsigned int pf_test_delay_arm_ms;
module_param_named(test_delay_arm_ms, pf_test_delay_arm_ms, uint, 0444);
MODULE_PARM_DESC(test_delay_arm_ms,
		 "for tests: sleep this long while arming, with the module's lock held");

unsigned int pf_test_delay_exit_ms;
module_param_named(test_delay_exit_ms, pf_test_delay_exit_ms, uint, 0444);
MODULE_PARM_DESC(test_delay_exit_ms,
		 "for tests: sleep this long in rmmod before the filter is cleared");

unsigned int pf_test_delay_claim_ms;
module_param_named(test_delay_claim_ms, pf_test_delay_claim_ms, uint, 0444);
MODULE_PARM_DESC(test_delay_claim_ms,
		 "for tests: spin this long after a packet claims the last count");

unsigned int pf_test_delay_work_ms;
module_param_named(test_delay_work_ms, pf_test_delay_work_ms, uint, 0444);
MODULE_PARM_DESC(test_delay_work_ms,
		 "for tests: sleep this long at the start of the count-reached work");

unsigned int pf_test_delay_close_ms;
module_param_named(test_delay_close_ms, pf_test_delay_close_ms, uint, 0644);
MODULE_PARM_DESC(test_delay_close_ms,
		 "for tests: spin this long in the next gate close, inside ftrace's probe");

unsigned int pf_test_delay_trial_ms;
module_param_named(test_delay_trial_ms, pf_test_delay_trial_ms, uint, 0644);
MODULE_PARM_DESC(test_delay_trial_ms,
		 "for tests: spin this long in the next gate trial, inside ftrace's probe");

/*
 * At most 5 s: a spin with interrupts off stays well below the soft and
 * hard lockup detectors' 10-20 s, whatever a test (or root) asked for.
 */
#define PF_TEST_DELAY_MAX_MS	5000

/*
 * Sleeps @ms (process context) or spins (atomic context). The spin ends
 * at whichever comes first, @ms by the clock or @ms of mdelay(1): in an
 * emulator mdelay()'s calibration can be off many times over (on a
 * loaded host 3000 ms of it ran 21 s, and RCU reported a stall), and with
 * interrupts off the clock may not move (5.10 with two vCPUs froze).
 */
void pf_test_delay(const char *where, unsigned int ms, bool atomic)
{
	unsigned int i;
	u64 end;

	if (!ms)
		return;
	ms = min_t(unsigned int, ms, PF_TEST_DELAY_MAX_MS);
	pr_info("test delay: %s, %u ms\n", where, ms);
	if (!atomic) {
		msleep(ms);
		return;
	}
	end = ktime_get_mono_fast_ns() + (u64)ms * NSEC_PER_MSEC;
	for (i = 0; i < ms && ktime_get_mono_fast_ns() < end; i++)
		mdelay(1);
}
