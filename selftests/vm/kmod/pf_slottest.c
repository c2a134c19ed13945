// SPDX-License-Identifier: GPL-2.0
/*
 * pf_slottest: a stand-in for another module that swaps the same protocol
 * handler slot as pktfilt (another tracer, a firewall shim). On load it
 * puts a copy of whatever inet_protos[slot] holds, with its own handler
 * that calls the saved one, into the slot; on unload it puts the saved
 * pointer back if the slot still holds its copy. With rx=1 it does the
 * same to ip_packet_type's ->func (ip_rcv(), or whoever wrapped it: the
 * rx stage's wrapper), the pointer rx.c swaps. With where=1 it only says
 * where the slots are (hostile.sh's kprobe event: kallsyms names data only
 * with KALLSYMS_ALL). Used by selftests/vm/tests/harden.sh and hostile.sh;
 * never installed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <net/protocol.h>

static int proto = IPPROTO_UDP;
module_param(proto, int, 0444);
MODULE_PARM_DESC(proto, "the IPv4 protocol slot to take over (default 17, UDP)");
static bool rx;
module_param(rx, bool, 0444);
MODULE_PARM_DESC(rx, "take over ip_packet_type's ->func instead of a slot");
static bool where;
module_param(where, bool, 0444);
MODULE_PARM_DESC(where, "print where hostile.sh's protocol slots are, and fail to load");

typedef int (*pf_slottest_func)(struct sk_buff *skb, struct net_device *dev,
				struct packet_type *pt,
				struct net_device *orig_dev);
static struct packet_type *pf_slottest_pt;
static pf_slottest_func pf_slottest_saved_func;

static int pf_slottest_ip_rcv(struct sk_buff *skb, struct net_device *dev,
			      struct packet_type *pt,
			      struct net_device *orig_dev)
{
	return pf_slottest_saved_func(skb, dev, pt, orig_dev);
}

static int pf_slottest_probe_rcv(struct sk_buff *skb, struct net_device *dev,
				 struct packet_type *pt,
				 struct net_device *orig_dev)
{
	consume_skb(skb);
	return NET_RX_SUCCESS;
}

/*
 * Is @pt ip_packet_type: the one of its type that calls ip_rcv() or the rx
 * stage's wrapper? (Not by its name: kallsyms names data only with
 * KALLSYMS_ALL, which Debian's arm64 6.1 lacks.)
 */
static bool pf_slottest_is_ip(struct packet_type *pt)
{
	char sym[KSYM_SYMBOL_LEN];

	if (pt->type != htons(ETH_P_IP))
		return false;
	sprint_symbol(sym, (unsigned long)READ_ONCE(pt->func));
	return !strncmp(sym, "ip_rcv+0x0/", 11) ||
	       !strncmp(sym, "pf_ip_rcv+0x0/", 14);
}

/* ip_packet_type, as rx.c finds it: a moment in its ptype_base bucket. */
static struct packet_type *pf_slottest_find_ip(void)
{
	struct packet_type probe = {
		.type = htons(ETH_P_IP),
		.func = pf_slottest_probe_rcv,
	};
	struct packet_type *found = NULL;
	struct list_head *pos;
	int n = 0;

	dev_add_pack(&probe);
	rcu_read_lock();
	for (pos = rcu_dereference(list_next_rcu(&probe.list));
	     pos != &probe.list && n < 256;
	     pos = rcu_dereference(list_next_rcu(pos)), n++) {
		struct packet_type *pt = list_entry(pos, struct packet_type,
						    list);

		if (pf_slottest_is_ip(pt)) {
			found = pt;
			break;
		}
	}
	rcu_read_unlock();
	dev_remove_pack(&probe);
	return found;
}

static int pf_slottest_rx_init(void)
{
	pf_slottest_func cur;

	pf_slottest_pt = pf_slottest_find_ip();
	if (!pf_slottest_pt)
		return -ENOENT;
	cur = READ_ONCE(pf_slottest_pt->func);
	pf_slottest_saved_func = cur;
	if (cmpxchg(&pf_slottest_pt->func, cur, pf_slottest_ip_rcv) != cur)
		return -EBUSY;
	pr_info("took over ip_packet_type's func (it held %ps)\n", cur);
	return 0;
}

static void pf_slottest_rx_exit(void)
{
	if (cmpxchg(&pf_slottest_pt->func, pf_slottest_ip_rcv,
		    pf_slottest_saved_func) != pf_slottest_ip_rcv)
		pr_err("ip_packet_type's func changed under us: not restored\n");
	synchronize_net();
	pr_info("gave ip_packet_type's func back\n");
}

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

	if (where) {
		/* hostile.sh's slots: tcp, udp, icmp; tcp, udp, icmpv6. */
		pr_info("slots v4_6=0x%lx v4_17=0x%lx v4_1=0x%lx v6_6=0x%lx v6_17=0x%lx v6_58=0x%lx\n",
			(unsigned long)&inet_protos[IPPROTO_TCP],
			(unsigned long)&inet_protos[IPPROTO_UDP],
			(unsigned long)&inet_protos[IPPROTO_ICMP],
			(unsigned long)&inet6_protos[IPPROTO_TCP],
			(unsigned long)&inet6_protos[IPPROTO_UDP],
			(unsigned long)&inet6_protos[IPPROTO_ICMPV6]);
		return -ECANCELED;
	}
	if (rx)
		return pf_slottest_rx_init();
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
	if (rx) {
		pf_slottest_rx_exit();
		return;
	}
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
