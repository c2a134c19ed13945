// SPDX-License-Identifier: GPL-2.0
/*
 * pf_slottest: a stand-in for another module that swaps the same protocol
 * handler slot as pktfilt (another tracer, a firewall shim). On load it
 * puts a copy of whatever inet_protos[slot] holds, with its own handler
 * that calls the saved one, into the slot; on unload it puts the saved
 * pointer back if the slot still holds its copy. Used by
 * selftests/vm/tests/harden.sh; never installed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/module.h>
#include <net/protocol.h>

static int proto = IPPROTO_UDP;
module_param(proto, int, 0444);
MODULE_PARM_DESC(proto, "the IPv4 protocol slot to take over (default 17, UDP)");

static const struct net_protocol *pf_slottest_saved;
static struct net_protocol pf_slottest_copy;

static int pf_slottest_rcv(struct sk_buff *skb)
{
	return pf_slottest_saved->handler(skb);
}

/* const in 6.1's declaration, not in 6.12's: cast to one type. */
static const struct net_protocol __rcu **pf_slottest_slot(void)
{
	return (const struct net_protocol __rcu **)&inet_protos[proto];
}

static int __init pf_slottest_init(void)
{
	const struct net_protocol *cur;

	if (proto <= 0 || proto >= MAX_INET_PROTOS)
		return -EINVAL;
	rcu_read_lock();
	cur = rcu_dereference(*pf_slottest_slot());
	if (cur) {
		pf_slottest_saved = cur;
		pf_slottest_copy = *cur;
		pf_slottest_copy.handler = pf_slottest_rcv;
	}
	rcu_read_unlock();
	if (!cur)
		return -ENOENT;
	if (cmpxchg((const struct net_protocol __force **)pf_slottest_slot(),
		    cur, &pf_slottest_copy) != cur)
		return -EBUSY;
	pr_info("took over protocol slot %d (it held %ps)\n", proto,
		cur->handler);
	return 0;
}

static void __exit pf_slottest_exit(void)
{
	if (cmpxchg((const struct net_protocol __force **)pf_slottest_slot(),
		    &pf_slottest_copy, pf_slottest_saved) != &pf_slottest_copy)
		pr_err("protocol slot %d changed under us: not restored\n",
		       proto);
	synchronize_net();
	pr_info("gave protocol slot %d back\n", proto);
}

module_init(pf_slottest_init);
module_exit(pf_slottest_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pktfilt test: another module swapping a protocol slot");
