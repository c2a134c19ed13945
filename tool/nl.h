/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink client: one socket, one request at a time.
 */
#ifndef PKTFILT_NL_H
#define PKTFILT_NL_H

#include <netlink/attr.h>
#include <netlink/msg.h>

#include "pktfilt.h"
#include "parse.h"

struct pf_nl;

/* Called for every reply message, with its attributes parsed. */
typedef int (*pf_nl_reply_fn)(struct nlattr **tb, void *arg);

/*
 * Connect and resolve the "pktfilt" family. Returns 0, -ENOENT if the family
 * is not registered (module not loaded) or another negative errno.
 */
int pf_nl_open(struct pf_nl **nl);
void pf_nl_close(struct pf_nl *nl);
/*
 * The version of the loaded module's family (PKTFILT_GENL_VERSION of the
 * pktfilt.h it was built with), 0 if the controller did not say.
 */
unsigned int pf_nl_version(const struct pf_nl *nl);
/* The socket's file descriptor (e.g. for FD_CLOEXEC). */
int pf_nl_fd(const struct pf_nl *nl);

/* A request message for @cmd, to fill with attributes and pass to send. */
struct nl_msg *pf_nl_msg(struct pf_nl *nl, __u8 cmd);

/*
 * Send @msg (consumed), call @reply for each reply and wait for the ack.
 * Returns 0 or the negative errno the kernel (or libnl) reported; then
 * pf_nl_extack() has the kernel's explanation, if it gave one.
 */
int pf_nl_request(struct pf_nl *nl, struct nl_msg *msg, pf_nl_reply_fn reply,
		  void *arg);
const char *pf_nl_extack(const struct pf_nl *nl);

/* A pktfilt message's attributes, checked against the UAPI's types. */
int pf_nl_parse(struct nl_msg *msg, struct nlattr **tb);

/*
 * READY for lazy filter @id: its scope is patched. 0, -ENOMEM if the
 * request cannot be built, or the kernel's -errno (extack: pf_nl_extack).
 */
int pf_nl_ready(struct pf_nl *nl, __u32 id);

/*
 * What the callbacks parse, exported for the fuzzer: the kernel's message
 * (NLMSGERR_ATTR_MSG) in an NLMSG_ERROR of at least
 * NLMSG_HDRLEN + sizeof(struct nlmsgerr) bytes (as libnl hands it over),
 * copied to @buf if there is one; and a notification of the events group,
 * 0 with its attributes in @tb if it is a PACKET one, else -EBADMSG.
 */
void pf_nl_parse_extack(const struct nlmsghdr *nlh, char *buf, size_t size);
int pf_nl_parse_event(struct nl_msg *msg, struct nlattr **tb);

/*
 * Filter <-> attributes: SET requests, and what GET echoes back. STAGES
 * is put if f->stages is not 0 (see pf_stages_compat()); a GET without
 * it is read as l4, what a version 1 module traces.
 */
int pf_nl_put_filter(struct nl_msg *msg, const struct pf_filter *f);
int pf_nl_get_filter(struct nlattr **tb, struct pf_filter *f);

/*
 * The "events" multicast group: PACKET notifications, one per traced
 * packet. Only listeners in the initial network namespace get them.
 * The socket is non-blocking; poll pf_nl_events_fd() for input, then
 * pf_nl_events_read() calls @fn for each notification received so far.
 */
struct pf_nl_events;

int pf_nl_events_open(struct pf_nl_events **ev, pf_nl_reply_fn fn, void *arg);
int pf_nl_events_fd(const struct pf_nl_events *ev);
/* 0, -ENOBUFS if notifications were dropped (socket full), or -errno. */
int pf_nl_events_read(struct pf_nl_events *ev);
void pf_nl_events_close(struct pf_nl_events *ev);

#endif /* PKTFILT_NL_H */
