// SPDX-License-Identifier: GPL-2.0
/*
 * The rx stage at IP receive, wrapped at the protocol dispatch: for the
 * packets rxcore.c did not take at the device (a VLAN tag still in the
 * frame, skbs from pfmemalloc reserves, callers of
 * netif_receive_skb_core()), and the rx key both use (pf_rx_key()). A
 * packet rxcore.c traces passes here with the gate open: it is inside
 * that graph.
 *
 * __netif_receive_skb_core() hands an IPv4 packet to the kernel's
 * ETH_P_IP packet_type, ip_packet_type: ->func (ip_rcv()) one skb at a
 * time, ->list_func (ip_list_rcv()) for a batch from
 * netif_receive_skb_list() (NAPI drivers with GRO, such as virtio-net).
 * IPv6 likewise with ipv6_packet_type. While a filter traces at rx, both
 * pointers of both structs point to our wrappers, which call the kernel's
 * functions: ip_rcv() is the root of the graph, which goes on through
 * PREROUTING, routing, LOCAL_IN and the L4 handler to the socket, or
 * FORWARD and the output of the forwarded packet to the next device.
 *
 * A batch: the packets that are traced are taken out of it, in order, and
 * received one by one through ->func, so that each is one graph under one
 * header; the others go on as batches (the parts before and after). The
 * kernel does the same work either way (ip_list_rcv() runs ip_rcv_core()
 * and the hooks per packet, then groups by route), only unbatched.
 *
 * The structs are static in af_inet.c/af_inet6.c and not exported: they
 * are found by adding a packet_type of the same type for a moment and
 * walking its list (ptype_base's bucket) to the struct of that type whose
 * address is exactly that symbol (pf_is_core_object(); without
 * KALLSYMS_ALL: the core kernel's one static struct of the type), and
 * they are only used when their pointers are exactly the kernel's
 * functions. The pointers are swapped with cmpxchg() and put back the
 * same way, then synchronize_net() (the receive path calls them under
 * rcu_read_lock()). If another module replaced our wrapper meanwhile, it
 * may still call it: pktfilt then stays loaded (pinned), as hooks.c does
 * for the protocol slots, until that module puts our wrapper back: the
 * next arming, disarming or `show` then restores the kernel's function
 * and unpins (pf_rx_take_back()).
 *
 * A graph begun here lacks what ran before the protocol dispatch (taps,
 * tc ingress, bridge/VLAN handling), which rxcore.c's graphs hold.
 *
 * Indirect calls (IBT): r->func and r->list_func, the kernel's ip_rcv(),
 * ip_list_rcv(), ipv6_rcv() and ipv6_list_rcv() (names checked at
 * install): the receive path calls these very pointers, so they are
 * address-taken function starts with ENDBR64; pf_rx_replay() calls
 * pt->func, the pointer the receive path calls (that, or our wrapper).
 * Our wrappers are called through the structs; their addresses are taken
 * here, so they have ENDBR64 too.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/if_ether.h>
#include <linux/module.h>
#include <linux/netdevice.h>

#include "internal.h"

typedef int (*pf_pt_func)(struct sk_buff *skb, struct net_device *dev,
			  struct packet_type *pt, struct net_device *orig_dev);
typedef void (*pf_pt_list_func)(struct list_head *head, struct packet_type *pt,
				struct net_device *orig_dev);

struct pf_rx {
	__be16 type;
	u8 family;
	u8 root;			/* enum pf_root */
	const char *pt_name;		/* the kernel's struct packet_type */
	const char *func_name;
	const char *list_name;
	pf_pt_func wrap;
	pf_pt_list_func wrap_list;
	struct packet_type *pt;		/* found at the first install */
	pf_pt_func func;		/* the kernel's, while installed */
	pf_pt_list_func list_func;
	bool installed;
	bool taken;			/* our wrapper was replaced by another's */
};

static int pf_ip_rcv(struct sk_buff *skb, struct net_device *dev,
		     struct packet_type *pt, struct net_device *orig_dev);
static void pf_ip_list_rcv(struct list_head *head, struct packet_type *pt,
			   struct net_device *orig_dev);
static int pf_ipv6_rcv(struct sk_buff *skb, struct net_device *dev,
		       struct packet_type *pt, struct net_device *orig_dev);
static void pf_ipv6_list_rcv(struct list_head *head, struct packet_type *pt,
			     struct net_device *orig_dev);

enum { PF_RX_IP, PF_RX_IPV6, PF_RX_NUM };

static struct pf_rx pf_rx[PF_RX_NUM] = {
	[PF_RX_IP] = {
		.type = htons(ETH_P_IP), .family = PF_FAMILY_IPV4,
		.root = PF_ROOT_IP_RCV, .pt_name = "ip_packet_type",
		.func_name = "ip_rcv", .list_name = "ip_list_rcv",
		.wrap = pf_ip_rcv, .wrap_list = pf_ip_list_rcv,
	},
	[PF_RX_IPV6] = {
		.type = htons(ETH_P_IPV6), .family = PF_FAMILY_IPV6,
		.root = PF_ROOT_IPV6_RCV, .pt_name = "ipv6_packet_type",
		.func_name = "ipv6_rcv", .list_name = "ipv6_list_rcv",
		.wrap = pf_ipv6_rcv, .wrap_list = pf_ipv6_list_rcv,
	},
};

static bool pf_rx_pinned;

/*
 * Should @skb, received on @dev as a packet of @family, be traced with
 * @root? Fills @pkt (the key, and the id if it is followed). Whether it
 * matches is pf_begin()'s to say, unless @match. Also rxcore.c's.
 */
bool notrace pf_rx_key(struct pf_filter *f, struct sk_buff *skb, u8 family,
		       int ifindex, u8 root, struct pf_pkt *pkt, bool match)
{
	struct net *net = dev_net(skb->dev);

	pkt->id = 0;
	if (unlikely(atomic_read(&pf_follow_n)))
		pkt->id = pf_follow_find(skb, family, f->id, PKTFILT_STAGE_RX,
					 net->ns.inum);
	if (!pkt->id && pf_ip_quick_reject(f, skb, family))
		return false;
	if (!pf_key_from_ip(skb, family, ifindex, net, &pkt->key, &pkt->fp))
		return false;
	pkt->skb = skb;
	pkt->stage = PKTFILT_STAGE_RX;
	pkt->root = root;
	pkt->matched = false;
	pkt->hold = NULL;
	if (!match || pkt->id)
		return true;
	/* pf_begin() takes this answer: the program runs once. */
	pkt->matched = pf_filter_match(f, skb, &pkt->key);
	return pkt->matched;
}

static __always_inline bool pf_rx_wanted(struct pf_filter *f,
					 const struct pf_rx *r,
					 struct sk_buff *skb,
					 struct pf_pkt *pkt, bool match)
{
	return pf_rx_key(f, skb, r->family,
			 skb->skb_iif ?: skb->dev->ifindex, r->root, pkt,
			 match);
}

/* A packet pf_rx_wanted() took: received with the gate open if it opens. */
static __always_inline int pf_rx_traced(const struct pf_rx *r,
					struct pf_filter *f, struct pf_pkt *pkt,
					struct sk_buff *skb,
					struct net_device *dev,
					struct packet_type *pt,
					struct net_device *orig_dev)
{
	struct pf_hold_ctx hold = { .dev = dev, .family = r->family };
	enum pf_verdict v;
	int ret;

	/* Softirq already, nearly always; else no softirq runs inside. */
	local_bh_disable();
	pkt->hold = &hold;
	v = pf_begin(f, pkt);
	/* Held (hold.c): received later, when it is replayed. */
	if (v == PF_HOLD) {
		local_bh_enable();
		return NET_RX_SUCCESS;
	}
	ret = r->func(skb, dev, pt, orig_dev);
	if (v == PF_TRACE)
		pf_rcv_end();
	local_bh_enable();
	return ret;
}

/* One packet: traced if it is wanted and the gate opens. */
static __always_inline int pf_rx_one(const struct pf_rx *r, struct sk_buff *skb,
				     struct net_device *dev,
				     struct packet_type *pt,
				     struct net_device *orig_dev)
{
	struct pf_filter *f;
	struct pf_pkt pkt;

	/*
	 * Traced from the device on (rxcore.c): part of that graph; or
	 * rxcore.c decided on it already, on this device.
	 */
	if (pf_gate_is_open() || pf_rxcore_decided(skb))
		return r->func(skb, dev, pt, orig_dev);
	f = pf_stage_filter(PKTFILT_STAGE_RX);
	if (!f || irqs_disabled() || !pf_rx_wanted(f, r, skb, &pkt, false))
		return r->func(skb, dev, pt, orig_dev);
	return pf_rx_traced(r, f, &pkt, skb, dev, pt, orig_dev);
}

/*
 * A batch: the packets to trace go one by one, the rest in order around.
 * Each packet is looked at once (pf_follow_find() takes one look per
 * packet and stage).
 */
static __always_inline void pf_rx_list(const struct pf_rx *r,
				       struct list_head *head,
				       struct packet_type *pt,
				       struct net_device *orig_dev)
{
	struct sk_buff *skb, *next;
	struct list_head before;
	struct pf_filter *f;
	struct pf_pkt pkt;

	f = pf_gate_is_open() ? NULL : pf_stage_filter(PKTFILT_STAGE_RX);
	if (!f || irqs_disabled()) {
		r->list_func(head, pt, orig_dev);
		return;
	}
	INIT_LIST_HEAD(&before);
	list_for_each_entry_safe(skb, next, head, list) {
		if (!pf_rx_wanted(f, r, skb, &pkt, true))
			continue;
		list_cut_before(&before, head, &skb->list);
		if (!list_empty(&before)) {
			r->list_func(&before, pt, orig_dev);
			INIT_LIST_HEAD(&before);
		}
		skb_list_del_init(skb);
		pf_rx_traced(r, f, &pkt, skb, skb->dev, pt, orig_dev);
	}
	if (!list_empty(head))
		r->list_func(head, pt, orig_dev);
}

static notrace int pf_ip_rcv(struct sk_buff *skb, struct net_device *dev,
			     struct packet_type *pt, struct net_device *orig_dev)
{
	return pf_rx_one(&pf_rx[PF_RX_IP], skb, dev, pt, orig_dev);
}

static notrace void pf_ip_list_rcv(struct list_head *head,
				   struct packet_type *pt,
				   struct net_device *orig_dev)
{
	pf_rx_list(&pf_rx[PF_RX_IP], head, pt, orig_dev);
}

static notrace int pf_ipv6_rcv(struct sk_buff *skb, struct net_device *dev,
			       struct packet_type *pt,
			       struct net_device *orig_dev)
{
	return pf_rx_one(&pf_rx[PF_RX_IPV6], skb, dev, pt, orig_dev);
}

static notrace void pf_ipv6_list_rcv(struct list_head *head,
				     struct packet_type *pt,
				     struct net_device *orig_dev)
{
	pf_rx_list(&pf_rx[PF_RX_IPV6], head, pt, orig_dev);
}

/*
 * A packet pf_rx_traced() held (a lazy filter's), replayed (hold.c: BH
 * off, RCU) as the device receive calls the handler: through the struct,
 * our wrapper while armed (which traces it now), the kernel's function
 * once disarmed. ip_rcv() and ipv6_rcv() do not use orig_dev.
 */
void notrace pf_rx_replay(struct sk_buff *skb, u8 root)
{
	const struct pf_rx *r = &pf_rx[root == PF_ROOT_IPV6_RCV ? PF_RX_IPV6 :
							     PF_RX_IP];
	struct packet_type *pt = r->pt;

	READ_ONCE(pt->func)(skb, skb->dev, pt, skb->dev);
}

/* Our packet_type, in the list for a moment: whatever it gets, it frees. */
static int pf_rx_probe_rcv(struct sk_buff *skb, struct net_device *dev,
			   struct packet_type *pt, struct net_device *orig_dev)
{
	consume_skb(skb);
	return NET_RX_SUCCESS;
}

/* Finds the kernel's struct of @r in ptype_base's bucket. Process context. */
static struct packet_type *pf_rx_find(const struct pf_rx *r)
{
	struct packet_type probe = { .type = r->type, .func = pf_rx_probe_rcv };
	struct packet_type *found = NULL;
	struct list_head *pos;
	int n = 0;

	dev_add_pack(&probe);
	rcu_read_lock();
	/* The bucket's head is not a packet_type: no symbol of that name. */
	for (pos = rcu_dereference(list_next_rcu(&probe.list));
	     pos != &probe.list && n < 256;
	     pos = rcu_dereference(list_next_rcu(pos)), n++) {
		struct packet_type *pt = list_entry(pos, struct packet_type,
						    list);

		if (pt->type == r->type && pf_is_core_object(pt, r->pt_name)) {
			found = pt;
			break;
		}
	}
	rcu_read_unlock();
	dev_remove_pack(&probe);	/* synchronize_net() inside */
	return found;
}

/*
 * Handlers another module took over and has since handed back (each
 * pointer holds our wrapper again, or the kernel's function): the
 * kernel's functions go back. Under pf_lock. True if one came back; the
 * caller then runs synchronize_net() and pf_rx_unpin().
 */
static bool pf_rx_take_back(void)
{
	bool back = false;
	int i;

	for (i = 0; i < PF_RX_NUM; i++) {
		struct pf_rx *r = &pf_rx[i];
		struct packet_type *pt = r->pt;
		pf_pt_func func;
		pf_pt_list_func list_func;

		if (!r->taken)
			continue;
		func = READ_ONCE(pt->func);
		list_func = READ_ONCE(pt->list_func);
		if ((func != r->wrap && func != r->func) ||
		    (list_func != r->wrap_list && list_func != r->list_func))
			continue;
		/* A cmpxchg() lost to another change: taken, as it was. */
		if (func == r->wrap &&
		    cmpxchg(&pt->func, r->wrap, r->func) != r->wrap)
			continue;
		if (list_func == r->wrap_list &&
		    cmpxchg(&pt->list_func, r->wrap_list, r->list_func) !=
		    r->wrap_list)
			continue;
		r->taken = false;
		back = true;
		pr_info("%s holds pktfilt's wrapper again: the kernel's %s is back\n",
			r->pt_name, r->func_name);
	}
	return back;
}

/* After pf_rx_take_back() and synchronize_net(): unpin if none is taken. */
static void pf_rx_unpin(void)
{
	int i;

	for (i = 0; i < PF_RX_NUM; i++)
		if (pf_rx[i].taken)
			return;
	if (pf_rx_pinned) {
		pf_rx_pinned = false;
		module_put(THIS_MODULE);
	}
}

static int pf_rx_install_one(struct pf_rx *r, struct netlink_ext_ack *extack)
{
	struct packet_type *pt = r->pt;
	pf_pt_func func;
	pf_pt_list_func list_func;

	if (r->installed)
		return 0;
	if (r->taken && pf_rx_take_back()) {
		synchronize_net();
		pf_rx_unpin();
	}
	if (r->taken) {
		NL_SET_ERR_MSG(extack,
			       "the IP receive handler pktfilt wrapped was taken over by another module: pktfilt is pinned (see dmesg)");
		return -EBUSY;
	}
	if (!pt) {
		pt = pf_rx_find(r);
		if (!pt) {
			/* IPv6 may be disabled, or a module not loaded. */
			return r->family == PF_FAMILY_IPV6 ? 0 : -ENOENT;
		}
		r->pt = pt;
	}
	func = READ_ONCE(pt->func);
	list_func = READ_ONCE(pt->list_func);
	if (!pf_is_core_symbol(func, r->func_name) ||
	    !pf_is_core_symbol(list_func, r->list_name)) {
		pr_warn("%s calls %ps and %ps, not the kernel's %s and %s: another module changed it; not wrapped\n",
			r->pt_name, func, list_func, r->func_name,
			r->list_name);
		NL_SET_ERR_MSG(extack,
			       "the kernel's IP receive handler was changed by another module: --at rx is not possible (see dmesg)");
		return -EBUSY;
	}
	r->func = func;
	r->list_func = list_func;
	if (cmpxchg(&pt->list_func, list_func, r->wrap_list) != list_func)
		goto changed;
	if (cmpxchg(&pt->func, func, r->wrap) != func) {
		cmpxchg(&pt->list_func, r->wrap_list, list_func);
		synchronize_net();
		goto changed;
	}
	r->installed = true;
	return 0;
changed:
	NL_SET_ERR_MSG(extack,
		       "the IP receive handler changed while pktfilt wrapped it");
	return -EBUSY;
}

/* Puts the kernel's back; the caller then runs synchronize_net(). */
static void pf_rx_restore(struct pf_rx *r)
{
	struct packet_type *pt = r->pt;
	bool ok;

	ok = cmpxchg(&pt->func, r->wrap, r->func) == r->wrap;
	ok &= cmpxchg(&pt->list_func, r->wrap_list, r->list_func) ==
	      r->wrap_list;
	r->installed = false;
	if (ok)
		return;
	/* Someone may call our wrapper through theirs: never free it. */
	r->taken = true;
	if (!pf_rx_pinned) {
		pf_rx_pinned = true;
		__module_get(THIS_MODULE);
	}
	pr_err("%s was changed by another module while pktfilt wrapped it: that module may still call pktfilt's wrapper, so pktfilt stays loaded (pinned)\n",
	       r->pt_name);
}

/* Under pf_lock. */
int pf_rx_install(struct netlink_ext_ack *extack)
{
	int i, ret;

	for (i = 0; i < PF_RX_NUM; i++) {
		ret = pf_rx_install_one(&pf_rx[i], extack);
		if (ret) {
			if (ret == -ENOENT)
				NL_SET_ERR_MSG(extack,
					       "cannot find the kernel's IPv4 receive handler (ip_packet_type): --at rx is not possible on this kernel");
			pf_rx_remove();
			return ret;
		}
	}
	ret = pf_rxcore_install(extack);
	if (ret)
		pf_rx_remove();
	return ret;
}

/* Under pf_lock. */
void pf_rx_remove(void)
{
	bool removed = pf_rxcore_remove();
	int i;

	for (i = 0; i < PF_RX_NUM; i++) {
		if (!pf_rx[i].installed)
			continue;
		pf_rx_restore(&pf_rx[i]);
		removed = true;
	}
	if (pf_rx_pinned && pf_rx_take_back())
		removed = true;
	if (removed) {
		synchronize_net();
		pf_rx_unpin();
	}
}

/*
 * Module exit with a handler still taken over (it was taken while armed,
 * and rmmod's disarm found it): the code must not go while that module may
 * call it. Exit cannot be refused: wait for the handler to come back.
 */
void pf_rx_exit(void)
{
	unsigned int waited = 0;

	while (pf_rx_pinned) {
		if (pf_rx_take_back()) {
			synchronize_net();
			pf_rx_unpin();
			continue;
		}
		if (!(waited++ % 100))
			pr_emerg("unloading, but an IP receive handler pktfilt wrapped is held by another module that may call pktfilt's code: waiting for it to put the handler back\n");
		msleep(100);
	}
}

/* What `pktfilt show` says of the receive handlers, or "". Under pf_lock. */
const char *pf_rx_problem(void)
{
	if (pf_rx_pinned && pf_rx_take_back()) {
		synchronize_net();
		pf_rx_unpin();
	}
	if (!pf_rx_pinned)
		return "";
	return "pinned: another module replaced the IP receive handler pktfilt had wrapped and may still call pktfilt's code through it (see dmesg); pktfilt cannot be unloaded";
}
