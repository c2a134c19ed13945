// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink client, on libnl-3.
 *
 * libnl 3.7 turns a kernel error into an NLE_* code and drops the extended
 * ack (the kernel's own explanation). So we ask for extended acks with
 * NETLINK_EXT_ACK, keep the errno from the error callback, and read
 * NLMSGERR_ATTR_MSG out of the NLMSG_ERROR message ourselves.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/family.h>

#include "nl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif

struct pf_nl {
	struct nl_sock *sk;
	int family;
	unsigned int version;	/* of the family, 0: unknown */
	char extack[256];	/* NLMSGERR_ATTR_MSG of the last reply */
};

/* What one request is waiting for, shared with the callbacks. */
struct pf_nl_req {
	struct pf_nl *nl;
	pf_nl_reply_fn reply;
	void *arg;
	int done;
	int err;		/* negative errno */
};

static const struct nla_policy pf_nl_policy[PKTFILT_A_MAX + 1] = {
	[PKTFILT_A_PROTO]	= { .type = NLA_U8 },
	[PKTFILT_A_SADDR4]	= { .type = NLA_U32 },
	[PKTFILT_A_SADDR6]	= { .minlen = 16 },
	[PKTFILT_A_SADDR_PLEN]	= { .type = NLA_U8 },
	[PKTFILT_A_DADDR4]	= { .type = NLA_U32 },
	[PKTFILT_A_DADDR6]	= { .minlen = 16 },
	[PKTFILT_A_DADDR_PLEN]	= { .type = NLA_U8 },
	[PKTFILT_A_SPORT_MIN]	= { .type = NLA_U16 },
	[PKTFILT_A_SPORT_MAX]	= { .type = NLA_U16 },
	[PKTFILT_A_DPORT_MIN]	= { .type = NLA_U16 },
	[PKTFILT_A_DPORT_MAX]	= { .type = NLA_U16 },
	[PKTFILT_A_IFINDEX]	= { .type = NLA_U32 },
	[PKTFILT_A_NETNS]	= { .type = NLA_U32 },
	[PKTFILT_A_MARK]	= { .type = NLA_U32 },
	[PKTFILT_A_MARK_MASK]	= { .type = NLA_U32 },
	[PKTFILT_A_COUNT]	= { .type = NLA_U32 },
	[PKTFILT_A_FLAGS]	= { .type = NLA_U32 },
	[PKTFILT_A_STATE]	= { .type = NLA_U8 },
	[PKTFILT_A_REMAINING]	= { .type = NLA_U32 },
	[PKTFILT_A_FILTER_ID]	= { .type = NLA_U32 },
	[PKTFILT_A_STATS]	= { .type = NLA_NESTED },
	[PKTFILT_A_REASON]	= { .type = NLA_STRING },
	[PKTFILT_A_SEQ]		= { .type = NLA_U64 },
	[PKTFILT_A_CPU]		= { .type = NLA_U32 },
	[PKTFILT_A_SPORT]	= { .type = NLA_U16 },
	[PKTFILT_A_DPORT]	= { .type = NLA_U16 },
	[PKTFILT_A_PROBLEM]	= { .type = NLA_STRING },
	[PKTFILT_A_RX_FROM_IP]	= { .type = NLA_FLAG },
	[PKTFILT_A_STAGES]	= { .type = NLA_U32 },
	[PKTFILT_A_EXPR]	= { .type = NLA_STRING },
	[PKTFILT_A_STAGE]	= { .type = NLA_U8 },
	[PKTFILT_A_PACKET_ID]	= { .type = NLA_U64 },
	[PKTFILT_A_HOLD_MS]	= { .type = NLA_U32 },
	[PKTFILT_A_SNAPLEN]	= { .type = NLA_U32 },
	[PKTFILT_A_LAZY]	= { .type = NLA_U8 },
	[PKTFILT_A_HELD]	= { .type = NLA_U32 },
	[PKTFILT_A_HELD_NS]	= { .type = NLA_U64 },
};

/* libnl's NLE_* codes carry no errno; keep the ones worth telling apart. */
static int pf_nl_errno(int nle)
{
	switch (-nle) {
	case NLE_NOMEM:		return -ENOMEM;
	case NLE_PERM:		return -EPERM;
	case NLE_NOACCESS:	return -EACCES;
	case NLE_OBJ_NOTFOUND:	return -ENOENT;
	case NLE_AGAIN:		return -EAGAIN;
	case NLE_INTR:		return -EINTR;
	case NLE_MSGSIZE:	return -EMSGSIZE;
	case NLE_OPNOTSUPP:	return -EOPNOTSUPP;
	case NLE_PROTO_MISMATCH: return -EPROTONOSUPPORT;
	default:		return -EPROTO;
	}
}

/*
 * The version the loaded module registered its family with, from the
 * controller's list of families; 0 if it cannot be had.
 */
static unsigned int pf_nl_family_version(struct nl_sock *sk)
{
	struct nl_cache *cache = NULL;
	struct genl_family *fam;
	unsigned int version = 0;

	if (genl_ctrl_alloc_cache(sk, &cache) < 0)
		return 0;
	fam = genl_ctrl_search_by_name(cache, PKTFILT_GENL_NAME);
	if (fam) {
		version = genl_family_get_version(fam);
		genl_family_put(fam);
	}
	nl_cache_free(cache);
	return version;
}

int pf_nl_open(struct pf_nl **out)
{
	struct pf_nl *nl = calloc(1, sizeof(*nl));
	int one = 1;
	int err;

	if (!nl)
		return -ENOMEM;
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		free(nl);
		return -ENOMEM;
	}
	err = genl_connect(nl->sk);
	if (err)
		goto fail;
	/*
	 * Best effort, both: without EXT_ACK (before 4.12) there is just no
	 * message; CAP_ACK keeps our request out of error replies.
	 */
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_CAP_ACK,
		   &one, sizeof(one));

	err = genl_ctrl_resolve(nl->sk, PKTFILT_GENL_NAME);
	if (err < 0)
		goto fail;
	nl->family = err;
	nl->version = pf_nl_family_version(nl->sk);
	*out = nl;
	return 0;
fail:
	nl_socket_free(nl->sk);
	free(nl);
	return pf_nl_errno(err);
}

void pf_nl_close(struct pf_nl *nl)
{
	if (!nl)
		return;
	nl_socket_free(nl->sk);
	free(nl);
}

unsigned int pf_nl_version(const struct pf_nl *nl)
{
	return nl->version;
}

int pf_nl_fd(const struct pf_nl *nl)
{
	return nl_socket_get_fd(nl->sk);
}

const char *pf_nl_extack(const struct pf_nl *nl)
{
	return nl->extack[0] ? nl->extack : NULL;
}

struct nl_msg *pf_nl_msg(struct pf_nl *nl, __u8 cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, 0,
			 cmd, PKTFILT_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/*
 * The TLVs of an NLMSG_ERROR (error or ack) follow struct nlmsgerr and, if
 * the kernel did not cap it, a copy of our request. Whatever the message
 * says, nothing is read outside it.
 */
void pf_nl_parse_extack(const struct nlmsghdr *nlh, char *buf, size_t size)
{
	const struct nlmsgerr *e = nlmsg_data(nlh);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	int datalen = nlmsg_datalen(nlh);
	size_t off = sizeof(*e);

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (datalen < (int)sizeof(*e))
		return;		/* libnl checks it too */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		/* Our request, its header in e->msg: 16 bytes at least. */
		if (e->msg.nlmsg_len < NLMSG_HDRLEN)
			return;
		off += (((size_t)e->msg.nlmsg_len + NLMSG_ALIGNTO - 1) &
			~(size_t)(NLMSG_ALIGNTO - 1)) - NLMSG_HDRLEN;
	}
	if (off >= (size_t)datalen)
		return;
	if (nla_parse(tb, NLMSGERR_ATTR_MAX,
		      (struct nlattr *)((char *)e + off), datalen - (int)off,
		      NULL))
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		nla_strlcpy(buf, tb[NLMSGERR_ATTR_MSG], size);
}

static void pf_nl_extack_parse(struct pf_nl *nl, const struct nlmsghdr *nlh)
{
	pf_nl_parse_extack(nlh, nl->extack, sizeof(nl->extack));
}

static int pf_nl_on_error(struct sockaddr_nl *who, struct nlmsgerr *e,
			  void *arg)
{
	struct pf_nl_req *req = arg;
	/* libnl hands us the payload of the NLMSG_ERROR: step back to it. */
	const struct nlmsghdr *nlh =
		(const struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);

	(void)who;
	pf_nl_extack_parse(req->nl, nlh);
	req->err = e->error < 0 ? e->error : -EPROTO;
	req->done = 1;
	return NL_STOP;
}

/* A successful ack may still carry a message (a warning). */
static int pf_nl_on_ack(struct nl_msg *msg, void *arg)
{
	struct pf_nl_req *req = arg;

	pf_nl_extack_parse(req->nl, nlmsg_hdr(msg));
	req->done = 1;
	return NL_STOP;
}

int pf_nl_parse(struct nl_msg *msg, struct nlattr **tb)
{
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, PKTFILT_A_MAX, pf_nl_policy))
		return -EBADMSG;
	return 0;
}

static int pf_nl_on_valid(struct nl_msg *msg, void *arg)
{
	struct pf_nl_req *req = arg;
	struct nlattr *tb[PKTFILT_A_MAX + 1];
	int err;

	if (!req->reply)
		return NL_OK;
	err = pf_nl_parse(msg, tb);
	if (err < 0) {
		req->err = -EBADMSG;
		return NL_OK;	/* keep reading up to the ack */
	}
	err = req->reply(tb, req->arg);
	if (err < 0 && !req->err)
		req->err = err;
	return NL_OK;
}

int pf_nl_request(struct pf_nl *nl, struct nl_msg *msg, pf_nl_reply_fn reply,
		  void *arg)
{
	struct pf_nl_req req = { .nl = nl, .reply = reply, .arg = arg };
	struct nl_cb *cb;
	int err;

	nl->extack[0] = '\0';
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, pf_nl_on_valid, &req);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, pf_nl_on_ack, &req);
	nl_cb_err(cb, NL_CB_CUSTOM, pf_nl_on_error, &req);

	/* nl_send_auto() asks for an ack: it ends every request. */
	err = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	while (err >= 0 && !req.done)
		err = nl_recvmsgs(nl->sk, cb);
	nl_cb_put(cb);

	/* Our error callback's errno beats libnl's translation of it. */
	if (req.err)
		return req.err;
	return err < 0 ? pf_nl_errno(err) : 0;
}

static int pf_nl_put_addr(struct nl_msg *msg, const struct pf_addr_pred *a,
			  int a4, int a6, int aplen)
{
	if (!a->family)
		return 0;
	if (a->family == PF_FAMILY_IPV4 && nla_put(msg, a4, 4, a->addr))
		return -EMSGSIZE;
	if (a->family == PF_FAMILY_IPV6 && nla_put(msg, a6, 16, a->addr))
		return -EMSGSIZE;
	return nla_put_u8(msg, aplen, a->plen) ? -EMSGSIZE : 0;
}

static int pf_nl_put_ports(struct nl_msg *msg, const struct pf_port_pred *p,
			   int amin, int amax)
{
	if (!p->set)
		return 0;
	if (nla_put_u16(msg, amin, p->min) || nla_put_u16(msg, amax, p->max))
		return -EMSGSIZE;
	return 0;
}

int pf_nl_put_filter(struct nl_msg *msg, const struct pf_filter *f)
{
	const struct pf_spec *s = &f->spec;

	if (s->proto && nla_put_u8(msg, PKTFILT_A_PROTO, s->proto))
		return -EMSGSIZE;
	if (pf_nl_put_addr(msg, &s->saddr, PKTFILT_A_SADDR4, PKTFILT_A_SADDR6,
			   PKTFILT_A_SADDR_PLEN) ||
	    pf_nl_put_addr(msg, &s->daddr, PKTFILT_A_DADDR4, PKTFILT_A_DADDR6,
			   PKTFILT_A_DADDR_PLEN) ||
	    pf_nl_put_ports(msg, &s->sport, PKTFILT_A_SPORT_MIN,
			    PKTFILT_A_SPORT_MAX) ||
	    pf_nl_put_ports(msg, &s->dport, PKTFILT_A_DPORT_MIN,
			    PKTFILT_A_DPORT_MAX))
		return -EMSGSIZE;
	if (s->ifindex && nla_put_u32(msg, PKTFILT_A_IFINDEX, s->ifindex))
		return -EMSGSIZE;
	if (s->netns && nla_put_u32(msg, PKTFILT_A_NETNS, s->netns))
		return -EMSGSIZE;
	if (s->has_mark && (nla_put_u32(msg, PKTFILT_A_MARK, s->mark) ||
			    nla_put_u32(msg, PKTFILT_A_MARK_MASK, s->mark_mask)))
		return -EMSGSIZE;
	/* Always explicit: the default is the module's, not ours. */
	if (nla_put_u32(msg, PKTFILT_A_COUNT, f->count))
		return -EMSGSIZE;
	if (f->hold_ms && nla_put_u32(msg, PKTFILT_A_HOLD_MS, f->hold_ms))
		return -EMSGSIZE;
	if (f->flags && nla_put_u32(msg, PKTFILT_A_FLAGS, f->flags))
		return -EMSGSIZE;
	/* 0 only for a version 1 module, which knows no such attribute. */
	if (f->stages && nla_put_u32(msg, PKTFILT_A_STAGES, f->stages))
		return -EMSGSIZE;
	/* Only if given: a module older than version 6 knows no such. */
	if (f->snaplen_set && nla_put_u32(msg, PKTFILT_A_SNAPLEN, f->snaplen))
		return -EMSGSIZE;
	if (f->bpf_len &&
	    (nla_put(msg, PKTFILT_A_BPF, f->bpf_len * sizeof(f->bpf[0]),
		     f->bpf) ||
	     nla_put_string(msg, PKTFILT_A_EXPR, f->expr)))
		return -EMSGSIZE;
	return 0;
}

/* Returns 1 if an address was there, 0 if not, -EBADMSG if malformed. */
static int pf_nl_get_addr(struct nlattr **tb, struct pf_addr_pred *a,
			  int a4, int a6, int aplen)
{
	if (tb[a4] && nla_len(tb[a4]) == 4) {
		a->family = PF_FAMILY_IPV4;
		memcpy(a->addr, nla_data(tb[a4]), 4);
		a->plen = 32;
	} else if (tb[a6] && nla_len(tb[a6]) == 16) {
		a->family = PF_FAMILY_IPV6;
		memcpy(a->addr, nla_data(tb[a6]), 16);
		a->plen = 128;
	} else if (tb[a4] || tb[a6]) {
		return -EBADMSG;
	} else {
		return 0;
	}
	if (tb[aplen])
		a->plen = nla_get_u8(tb[aplen]);
	return 1;
}

static int pf_nl_get_ports(struct nlattr **tb, struct pf_port_pred *p,
			   int amin, int amax)
{
	if (!tb[amin])
		return 0;
	p->set = 1;
	p->min = nla_get_u16(tb[amin]);
	p->max = tb[amax] ? nla_get_u16(tb[amax]) : p->min;
	return 1;
}

/*
 * Fill @f from what GET echoes, applying the UAPI's defaults. Returns 1 if
 * any filter attribute was present, 0 if none, -EBADMSG.
 */
int pf_nl_get_filter(struct nlattr **tb, struct pf_filter *f)
{
	struct pf_spec *s = &f->spec;
	int any = 0, ret;

	memset(f, 0, sizeof(*f));
	f->count = PF_DEFAULT_COUNT;
	if (tb[PKTFILT_A_PROTO]) {
		s->proto = nla_get_u8(tb[PKTFILT_A_PROTO]);
		any = 1;
	}
	ret = pf_nl_get_addr(tb, &s->saddr, PKTFILT_A_SADDR4,
			     PKTFILT_A_SADDR6, PKTFILT_A_SADDR_PLEN);
	if (ret < 0)
		return ret;
	any |= ret;
	ret = pf_nl_get_addr(tb, &s->daddr, PKTFILT_A_DADDR4,
			     PKTFILT_A_DADDR6, PKTFILT_A_DADDR_PLEN);
	if (ret < 0)
		return ret;
	any |= ret;
	any |= pf_nl_get_ports(tb, &s->sport, PKTFILT_A_SPORT_MIN,
			       PKTFILT_A_SPORT_MAX);
	any |= pf_nl_get_ports(tb, &s->dport, PKTFILT_A_DPORT_MIN,
			       PKTFILT_A_DPORT_MAX);
	if (tb[PKTFILT_A_IFINDEX]) {
		s->ifindex = nla_get_u32(tb[PKTFILT_A_IFINDEX]);
		any = 1;
	}
	if (tb[PKTFILT_A_NETNS]) {
		s->netns = nla_get_u32(tb[PKTFILT_A_NETNS]);
		any = 1;
	}
	if (tb[PKTFILT_A_MARK]) {
		s->has_mark = 1;
		s->mark = nla_get_u32(tb[PKTFILT_A_MARK]);
		s->mark_mask = tb[PKTFILT_A_MARK_MASK] ?
			nla_get_u32(tb[PKTFILT_A_MARK_MASK]) : 0xffffffffU;
		any = 1;
	}
	if (tb[PKTFILT_A_COUNT]) {
		f->count = nla_get_u32(tb[PKTFILT_A_COUNT]);
		any = 1;
	}
	if (tb[PKTFILT_A_FLAGS])
		f->flags = nla_get_u32(tb[PKTFILT_A_FLAGS]);
	/* Absent: a version 1 module, or a SET without it: l4. */
	f->stages = tb[PKTFILT_A_STAGES] ?
		nla_get_u32(tb[PKTFILT_A_STAGES]) : 1U << PKTFILT_STAGE_L4;
	/* Version 6; shown (pf_format_filter()) only if not the default. */
	if (tb[PKTFILT_A_SNAPLEN]) {
		f->snaplen = nla_get_u32(tb[PKTFILT_A_SNAPLEN]);
		f->snaplen_set = f->snaplen != PKTFILT_SNAPLEN_DEFAULT;
	}
	f->expr[0] = '\0';
	if (tb[PKTFILT_A_EXPR])
		nla_strlcpy(f->expr, tb[PKTFILT_A_EXPR], sizeof(f->expr));
	return any;
}

int pf_nl_ready(struct pf_nl *nl, __u32 id)
{
	struct nl_msg *msg = pf_nl_msg(nl, PKTFILT_CMD_READY);

	if (!msg || nla_put_u32(msg, PKTFILT_A_FILTER_ID, id)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return pf_nl_request(nl, msg, NULL, NULL);
}

/* The "events" group. */
struct pf_nl_events {
	struct nl_sock *sk;
	pf_nl_reply_fn fn;
	void *arg;
	int err;
};

int pf_nl_parse_event(struct nl_msg *msg, struct nlattr **tb)
{
	const struct nlmsghdr *nlh = nlmsg_hdr(msg);
	const struct genlmsghdr *gh;

	/* The generic header's cmd is read only if the message holds it. */
	if (!genlmsg_valid_hdr((struct nlmsghdr *)nlh, 0))
		return -EBADMSG;
	gh = nlmsg_data(nlh);
	/* HELD (version 3) too: no SEQ, a FILTER_ID and HELD. */
	if (gh->cmd != PKTFILT_CMD_PACKET && gh->cmd != PKTFILT_CMD_HELD)
		return -EBADMSG;
	return pf_nl_parse(msg, tb);
}

static int pf_nl_on_event(struct nl_msg *msg, void *arg)
{
	struct pf_nl_events *ev = arg;
	struct nlattr *tb[PKTFILT_A_MAX + 1];
	int err;

	if (pf_nl_parse_event(msg, tb))
		return NL_SKIP;
	err = ev->fn(tb, ev->arg);
	if (err < 0 && !ev->err)
		ev->err = err;
	return NL_OK;
}

int pf_nl_events_open(struct pf_nl_events **out, pf_nl_reply_fn fn, void *arg)
{
	struct pf_nl_events *ev = calloc(1, sizeof(*ev));
	int err, grp;

	if (!ev)
		return -ENOMEM;
	ev->fn = fn;
	ev->arg = arg;
	ev->sk = nl_socket_alloc();
	if (!ev->sk) {
		free(ev);
		return -ENOMEM;
	}
	err = genl_connect(ev->sk);
	if (err)
		goto fail;
	grp = genl_ctrl_resolve_grp(ev->sk, PKTFILT_GENL_NAME,
				    PKTFILT_MCGRP_EVENTS);
	if (grp < 0) {
		err = grp;
		goto fail;
	}
	nl_socket_disable_seq_check(ev->sk);
	nl_socket_modify_cb(ev->sk, NL_CB_VALID, NL_CB_CUSTOM, pf_nl_on_event,
			    ev);
	err = nl_socket_add_membership(ev->sk, grp);
	if (err)
		goto fail;
	/* Room for bursts: a notification is about 150 bytes. */
	nl_socket_set_buffer_size(ev->sk, 1 << 20, 0);
	err = nl_socket_set_nonblocking(ev->sk);
	if (err)
		goto fail;
	*out = ev;
	return 0;
fail:
	nl_socket_free(ev->sk);
	free(ev);
	return pf_nl_errno(err);
}

int pf_nl_events_fd(const struct pf_nl_events *ev)
{
	return nl_socket_get_fd(ev->sk);
}

int pf_nl_events_read(struct pf_nl_events *ev)
{
	int ret;

	struct pollfd pfd = { .fd = nl_socket_get_fd(ev->sk), .events = POLLIN };

	/* nl_recvmsgs() reads one datagram, and says 0 for none too. */
	ev->err = 0;
	while (poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLIN | POLLERR))) {
		ret = nl_recvmsgs_default(ev->sk);
		if (ret == -NLE_INTR || ret == -NLE_AGAIN)
			continue;
		if (ret == -NLE_NOMEM)	/* what libnl makes of ENOBUFS */
			return -ENOBUFS;
		if (ret < 0)
			return pf_nl_errno(ret);
		if (ev->err)
			return ev->err;
	}
	return 0;
}

void pf_nl_events_close(struct pf_nl_events *ev)
{
	if (!ev)
		return;
	nl_socket_free(ev->sk);
	free(ev);
}
