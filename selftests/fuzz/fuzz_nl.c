// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of the netlink reply parsing (tool/nl.c, tool/show.c):
 * the input is one generic netlink message as the kernel would send it,
 * header included (its nlmsg_len is made the input's length). It goes
 * through what "pktfilt show" does with a reply: pf_nl_parse() (the
 * attribute policy), pf_show_decode() (pf_nl_get_filter() and the stats),
 * pf_show_print(); through what the events group's callback does with a
 * notification (pf_nl_parse_event()); and, taken as an NLMSG_ERROR (error
 * or ack) if long enough for libnl to hand it over, through the extended
 * ack's parsing (pf_nl_parse_extack()), in a buffer of exactly its length.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "nl.h"
#include "show.h"

static FILE *null_out;

static int w_netns_ino(const char *path, __u32 *ino)
{
	(void)path;
	*ino = 4026532165u;
	return 0;
}

static int w_ifindex(const char *name, const char *netns_path, __u32 *idx)
{
	(void)name;
	(void)netns_path;
	*idx = 2;
	return 0;
}

static int w_netns_path(__u32 ino, char *buf, size_t len)
{
	if (ino != 4026532165u)
		return -2;
	snprintf(buf, len, "/run/netns/blue");
	return 0;
}

static int w_ifname(__u32 idx, const char *path, char *buf, size_t len)
{
	(void)path;
	if (idx != 2)
		return -19;
	snprintf(buf, len, "eth0");
	return 0;
}

static const struct pf_resolver world = {
	w_netns_ino, w_netns_path, w_ifindex, w_ifname,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	null_out = fopen("/dev/null", "w");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nlattr *tb[PKTFILT_A_MAX + 1];
	struct nlmsghdr *nlh;
	struct nl_msg *msg;
	struct pf_status st;

	if (size < sizeof(*nlh) || size > 65536)
		return 0;
	nlh = malloc(size);
	if (!nlh)
		return 0;
	memcpy(nlh, data, size);
	nlh->nlmsg_len = (uint32_t)size;
	if (size >= NLMSG_HDRLEN + sizeof(struct nlmsgerr)) {
		char extack[256] = "";

		pf_nl_parse_extack(nlh, extack, sizeof(extack));
		if (strnlen(extack, sizeof(extack)) == sizeof(extack))
			abort();	/* not terminated */
	}
	msg = nlmsg_convert(nlh);
	free(nlh);
	if (!msg)
		return 0;
	memset(tb, 0, sizeof(tb));
	if (!pf_nl_parse(msg, tb) && !pf_show_decode(tb, &st))
		pf_show_print(null_out, &st, &world);
	memset(tb, 0, sizeof(tb));
	if (!pf_nl_parse_event(msg, tb) && tb[PKTFILT_A_SEQ])
		(void)nla_get_u64(tb[PKTFILT_A_SEQ]);
	nlmsg_free(msg);
	return 0;
}
