// SPDX-License-Identifier: GPL-2.0
/*
 * pfjoin - join pktfilt's "events" multicast group as the calling user and
 * count the PACKET notifications that arrive, to test who may listen.
 *
 *   pfjoin [--listen-ms N]
 *   pfjoin --get VERSION
 *
 * Resolves the "pktfilt" family and its "events" group with nlctrl, joins
 * the group (NETLINK_ADD_MEMBERSHIP), then reads for --listen-ms (default
 * 0). Prints "pfjoin: joined, N notifications" and exits 0, or
 * "pfjoin: join: <strerror>" and exits 1 if the kernel refused; exit 2 on
 * any other error. Raw netlink, no libnl: it is linked static for the VM.
 *
 * --get VERSION: instead, sends PKTFILT_CMD_GET with VERSION in its generic
 * netlink header, as a tool of that version does, and prints "pfjoin: get:
 * reply" or "pfjoin: get: error E: MESSAGE" (the extended ack); exit 0 or 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../include/pktfilt.h"

#define BUF_SIZE 8192

static int die(const char *what)
{
	fprintf(stderr, "pfjoin: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* The id of the "events" group in a CTRL_CMD_GETFAMILY reply, or -1. */
static int find_group(const struct nlattr *a, int len)
{
	for (; len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len;
	     len -= NLA_ALIGN(a->nla_len),
	     a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len))) {
		const struct nlattr *g = (const void *)((const char *)a + NLA_HDRLEN);
		int glen = a->nla_len - NLA_HDRLEN;
		const char *name = NULL;
		int id = -1;

		for (; glen >= NLA_HDRLEN && g->nla_len >= NLA_HDRLEN &&
		       g->nla_len <= glen;
		     glen -= NLA_ALIGN(g->nla_len),
		     g = (const void *)((const char *)g + NLA_ALIGN(g->nla_len))) {
			const char *p = (const char *)g + NLA_HDRLEN;

			if (g->nla_type == CTRL_ATTR_MCAST_GRP_NAME)
				name = p;
			else if (g->nla_type == CTRL_ATTR_MCAST_GRP_ID &&
				 g->nla_len >= NLA_HDRLEN + 4)
				memcpy(&id, p, 4);
		}
		if (name && !strcmp(name, PKTFILT_MCGRP_EVENTS))
			return id;
	}
	return -1;
}

static int family_id = -1;

/* Asks nlctrl for pktfilt's "events" group id (and its family's id). */
static int resolve_group(int fd)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
		char buf[64];
	} req = { 0 };
	static char buf[BUF_SIZE];
	struct nlattr *a = (void *)req.buf;
	const struct nlmsghdr *h = (void *)buf;
	ssize_t len;

	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + sizeof(PKTFILT_GENL_NAME);
	memcpy(req.buf + NLA_HDRLEN, PKTFILT_GENL_NAME, sizeof(PKTFILT_GENL_NAME));
	req.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) + NLA_ALIGN(a->nla_len);
	req.n.nlmsg_type = GENL_ID_CTRL;
	req.n.nlmsg_flags = NLM_F_REQUEST;
	req.g.cmd = CTRL_CMD_GETFAMILY;
	req.g.version = 1;
	if (send(fd, &req, req.n.nlmsg_len, 0) < 0)
		die("send");
	len = recv(fd, buf, sizeof(buf), 0);
	if (len < 0)
		die("recv");
	if (!NLMSG_OK(h, len) || h->nlmsg_type == NLMSG_ERROR) {
		fprintf(stderr, "pfjoin: no pktfilt family (module not loaded?)\n");
		exit(2);
	}
	a = (void *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
	len = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	for (; len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len;
	     len -= NLA_ALIGN(a->nla_len),
	     a = (void *)((char *)a + NLA_ALIGN(a->nla_len))) {
		if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID &&
		    a->nla_len >= NLA_HDRLEN + 2) {
			unsigned short id;

			memcpy(&id, (char *)a + NLA_HDRLEN, 2);
			family_id = id;
		}
		if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GROUPS)
			return find_group((void *)((char *)a + NLA_HDRLEN),
					  a->nla_len - NLA_HDRLEN);
	}
	fprintf(stderr, "pfjoin: the pktfilt family has no events group\n");
	exit(2);
}

/* PKTFILT_CMD_GET as a tool of @version asks it; 0 for a reply. */
static int get(int fd, int version)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
	} req = { 0 };
	static char buf[BUF_SIZE];
	const struct nlmsghdr *h = (void *)buf;
	int one = 1;
	ssize_t len;

	if (family_id < 0) {
		fprintf(stderr, "pfjoin: no family id from nlctrl\n");
		exit(2);
	}
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	req.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	req.n.nlmsg_type = family_id;
	req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.g.cmd = PKTFILT_CMD_GET;
	req.g.version = version;
	if (send(fd, &req, req.n.nlmsg_len, 0) < 0)
		die("send");
	len = recv(fd, buf, sizeof(buf), 0);
	if (len < 0)
		die("recv");
	if (!NLMSG_OK(h, len)) {
		fprintf(stderr, "pfjoin: get: short reply\n");
		exit(2);
	}
	if (h->nlmsg_type == NLMSG_ERROR &&
	    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
		const struct nlmsgerr *e = NLMSG_DATA(h);
		const char *msg = "";
		const struct nlattr *a;
		int alen;

		if (!e->error) {
			printf("pfjoin: get: ack without a reply\n");
			return 1;
		}
		/*
		 * The error, the request echoed (only its header if
		 * NLM_F_CAPPED), then the TLVs.
		 */
		a = (const void *)((const char *)e +
				   NLMSG_ALIGN(h->nlmsg_flags & NLM_F_CAPPED ?
					       sizeof(*e) :
					       sizeof(e->error) + e->msg.nlmsg_len));
		alen = (int)h->nlmsg_len - (int)((const char *)a - (const char *)h);
		for (; alen >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
		       a->nla_len <= alen;
		     alen -= NLA_ALIGN(a->nla_len),
		     a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len)))
			if (a->nla_type == NLMSGERR_ATTR_MSG)
				msg = (const char *)a + NLA_HDRLEN;
		printf("pfjoin: get: error %d: %.*s\n", e->error, 400, msg);
		return 1;
	}
	printf("pfjoin: get: reply\n");
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen-ms", required_argument, NULL, 'l' },
		{ "get", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	static char buf[BUF_SIZE];
	long listen_ms = 0, end;
	int fd, grp, c, get_version = -1;
	unsigned long got = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'g') {
			get_version = (int)strtol(optarg, NULL, 10);
			continue;
		}
		if (c != 'l') {
			fprintf(stderr, "usage: pfjoin [--listen-ms N] | --get VERSION\n");
			return 2;
		}
		listen_ms = strtol(optarg, NULL, 10);
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		die("socket");
	grp = resolve_group(fd);
	if (get_version >= 0)
		return get(fd, get_version);
	if (grp < 0) {
		fprintf(stderr, "pfjoin: no events group id\n");
		return 2;
	}
	if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp,
		       sizeof(grp)) < 0) {
		printf("pfjoin: join: %s\n", strerror(errno));
		return 1;
	}
	end = now_ms() + listen_ms;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = end - now_ms();
		ssize_t len;

		if (left <= 0 || poll(&p, 1, left) <= 0)
			break;
		len = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (len <= 0)
			continue;
		for (const struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			const struct genlmsghdr *g = NLMSG_DATA(h);

			if (h->nlmsg_len >= NLMSG_LENGTH(GENL_HDRLEN) &&
			    g->cmd == PKTFILT_CMD_PACKET)
				got++;
		}
	}
	printf("pfjoin: joined, %lu notifications\n", got);
	return 0;
}
