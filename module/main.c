// SPDX-License-Identifier: GPL-2.0
/*
 * pktfilt: the complete function_graph of exactly the packets you name.
 *
 * Loading hooks nothing. A filter set over generic netlink hooks the
 * stages it traces (l4: hooks.c, rx: rxcore.c and rx.c, tx: tx.c); for a
 * matching packet the current CPU is traced for exactly the duration of
 * the stage's root function (gate.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <net/genetlink.h>

#include <pktfilt.h>
#include "internal.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

static int __init pktfilt_init(void)
{
	int ret;

	ret = pf_gate_init();
	if (ret)
		return ret;
	pf_watch_init();
	pf_timing_init();
	/* If it fails here, arming says why (and tries again). */
	ret = pf_follow_arm(NULL);
	if (ret)
		pr_warn("no probes on the kfree_skb and consume_skb tracepoints yet (%d): pktfilt set will say why\n",
			ret);
	ret = pf_hold_init();
	if (!ret) {
		ret = pf_genl_init();
		if (ret)
			pf_hold_exit();
	}
	if (ret) {
		pf_follow_exit();
		pf_timing_exit();
		pf_watch_exit();
		pf_gate_exit();
		return ret;
	}
	return 0;
}

static void __exit pktfilt_exit(void)
{
	/*
	 * No tracefs marks, then no filter and no hook (and no arming from
	 * then on), then no requests: the family goes once no hook can send
	 * a notification (one in flight would go out under a family that is
	 * gone), then the gate.
	 */
	pf_watch_exit();
	if (unlikely(pf_test_delay_exit_ms))
		pf_test_delay("exit", pf_test_delay_exit_ms, false);
	pf_filter_exit();
	/* Held packets replayed, untraced, before the replay code goes. */
	pf_hold_exit();
	pf_genl_exit();
	pf_rxcore_exit();
	pf_rx_exit();
	pf_follow_exit();
	pf_hooks_exit();
	pf_timing_exit();
	pf_gate_exit();
}

module_init(pktfilt_init);
module_exit(pktfilt_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Trace the complete function_graph of the packets you name");
MODULE_AUTHOR("pktfilt developers");
MODULE_VERSION("0.1.0");
MODULE_ALIAS_GENL_FAMILY(PKTFILT_GENL_NAME);
