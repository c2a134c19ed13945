// SPDX-License-Identifier: GPL-2.0
/*
 * The traced packets' bytes as pcapng (--format pcapng, trace --pcap), for
 * Wireshark and tshark: a section header block, an interface description
 * block per (ifindex, netns), an enhanced packet block per graph. An
 * interface's name is its device's when the resolver given finds it
 * (trace: the namespace is ours or under /run/netns, the device still
 * there), its description then "ifindex N netns INODE", else that is
 * its name.
 *
 * Written here, not with a library: libpcap (Debian 12's 1.10) writes only
 * the old pcap format, which has no per-packet id or comment, and
 * Wireshark's libwiretap is no library to link against. The three blocks
 * are a few fixed fields each (draft-ietf-opsawg-pcapng).
 *
 * Each frame: link type LINKTYPE_RAW (101: the bytes start at the IP
 * header, IPv4 or IPv6), timestamp the event's wall-clock time in ns
 * (if_tsresol 9), captured length the bytes the event carries, original
 * length the packet's from its network header. Options: epb_packetid
 * (Wireshark's frame.packet_id) the graph's packet id, the same at every
 * stage of one packet; epb_flags its direction (rx and l4 inbound, tx
 * outbound); opt_comment (frame.comment) "pktfilt id=ID seq=SEQ
 * stage=STAGE cpu=CPU root=ROOT" and its fate if known. Integers in host
 * order, as the section header's magic tells readers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "pcapng.h"
#include "render_int.h"

#define BT_SHB		0x0A0D0D0AU
#define BT_IDB		0x00000001U
#define BT_EPB		0x00000006U
#define SHB_MAGIC	0x1A2B3C4DU
#define LINKTYPE_RAW	101

#define OPT_END		0
#define OPT_COMMENT	1
#define OPT_SHB_USERAPPL 4
#define OPT_IF_NAME	2
#define OPT_IF_DESCRIPTION 3
#define OPT_IF_TSRESOL	9
#define OPT_EPB_FLAGS	2
#define OPT_EPB_PACKETID 5

#define EPB_INBOUND	1U
#define EPB_OUTBOUND	2U

struct pf_pcapng_if {
	int ifindex;
	unsigned long netns;
};

struct pf_pcapng {
	FILE *out;
	const struct pf_resolver *names;
	struct pf_pcapng_if *ifs;
	size_t nifs, cap;
	size_t nifs_named;	/* pf_pcapng_interface()'s, not with ifs */
	/* A block is made here, then written whole. */
	unsigned char *buf;
	size_t len, size;
	bool oom;
	uint64_t written, skipped;
};

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static void put(struct pf_pcapng *w, const void *p, size_t n)
{
	if (w->oom || !n)
		return;
	if (w->size - w->len < n) {
		size_t size = w->size ? w->size : 4096;
		unsigned char *b;

		while (size - w->len < n)
			size *= 2;
		b = realloc(w->buf, size);
		if (!b) {
			w->oom = true;
			return;
		}
		w->buf = b;
		w->size = size;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void put_u16(struct pf_pcapng *w, uint16_t v)
{
	put(w, &v, sizeof(v));
}

static void put_u32(struct pf_pcapng *w, uint32_t v)
{
	put(w, &v, sizeof(v));
}

static void put_pad(struct pf_pcapng *w)
{
	static const unsigned char zero[4];

	put(w, zero, pad4(w->len) - w->len);
}

/* An option: code, length, value, padded to 32 bits. */
static void put_opt(struct pf_pcapng *w, uint16_t code, const void *v,
		    size_t n)
{
	put_u16(w, code);
	put_u16(w, (uint16_t)n);
	put(w, v, n);
	put_pad(w);
}

static void block_begin(struct pf_pcapng *w, uint32_t type)
{
	w->len = 0;
	put_u32(w, type);
	put_u32(w, 0);		/* the length, set by block_end() */
}

/* The end of options and the length twice; written: 0 or -errno. */
static int block_end(struct pf_pcapng *w)
{
	uint32_t total;

	put_u16(w, OPT_END);
	put_u16(w, 0);
	put_u32(w, 0);
	if (w->oom)
		return -ENOMEM;
	total = (uint32_t)w->len;
	memcpy(w->buf + 4, &total, 4);
	memcpy(w->buf + w->len - 4, &total, 4);
	if (fwrite(w->buf, 1, w->len, w->out) != w->len)
		return errno ? -errno : -EIO;
	return 0;
}

struct pf_pcapng *pf_pcapng_new(FILE *out, const struct pf_resolver *names)
{
	static const char appl[] = "pktfilt";
	struct pf_pcapng *w = calloc(1, sizeof(*w));
	int64_t section_len = -1;	/* not given */
	int err;

	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	w->out = out;
	w->names = names;
	block_begin(w, BT_SHB);
	put_u32(w, SHB_MAGIC);
	put_u16(w, 1);		/* version 1.0 */
	put_u16(w, 0);
	put(w, &section_len, sizeof(section_len));
	put_opt(w, OPT_SHB_USERAPPL, appl, sizeof(appl) - 1);
	err = block_end(w);
	if (err) {
		pf_pcapng_free(w);
		errno = -err;
		return NULL;
	}
	return w;
}

/* The interface id of @pkt's (ifindex, netns), its IDB written first. */
static int64_t interface_of(struct pf_pcapng *w, const struct pf_packet *pkt)
{
	uint8_t tsresol = 9;	/* nanoseconds */
	char name[64], path[256], dev[64];
	size_t i;
	int err;

	for (i = 0; i < w->nifs; i++)
		if (w->ifs[i].ifindex == pkt->ifindex &&
		    w->ifs[i].netns == pkt->netns)
			return (int64_t)i;
	if (w->nifs == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 8;
		struct pf_pcapng_if *ifs = realloc(w->ifs, cap * sizeof(*ifs));

		if (!ifs)
			return -ENOMEM;
		w->ifs = ifs;
		w->cap = cap;
	}
	block_begin(w, BT_IDB);
	put_u16(w, LINKTYPE_RAW);
	put_u16(w, 0);
	put_u32(w, 0);		/* snap length: no limit */
	snprintf(name, sizeof(name), "ifindex %d netns %lu", pkt->ifindex,
		 pkt->netns);
	/* The device's name where the resolver finds its namespace. */
	if (w->names && pkt->ifindex > 0 && pkt->netns <= UINT32_MAX &&
	    !w->names->netns_path((__u32)pkt->netns, path, sizeof(path)) &&
	    !w->names->ifname((__u32)pkt->ifindex, path, dev, sizeof(dev))) {
		put_opt(w, OPT_IF_NAME, dev, strlen(dev));
		put_opt(w, OPT_IF_DESCRIPTION, name, strlen(name));
	} else {
		put_opt(w, OPT_IF_NAME, name, strlen(name));
	}
	put_opt(w, OPT_IF_TSRESOL, &tsresol, 1);
	err = block_end(w);
	if (err)
		return err;
	w->ifs[w->nifs].ifindex = pkt->ifindex;
	w->ifs[w->nifs].netns = pkt->netns;
	return (int64_t)w->nifs++;
}

int64_t pf_pcapng_interface(struct pf_pcapng *w, const char *name,
			    const char *description)
{
	uint8_t tsresol = 9;	/* nanoseconds */
	int err;

	block_begin(w, BT_IDB);
	put_u16(w, LINKTYPE_RAW);
	put_u16(w, 0);
	put_u32(w, 0);		/* snap length: no limit */
	put_opt(w, OPT_IF_NAME, name, strlen(name));
	if (description)
		put_opt(w, OPT_IF_DESCRIPTION, description,
			strlen(description));
	put_opt(w, OPT_IF_TSRESOL, &tsresol, 1);
	err = block_end(w);
	if (err)
		return err;
	return (int64_t)w->nifs_named++;
}

int pf_pcapng_frame(struct pf_pcapng *w, uint32_t ifid, uint64_t ts_ns,
		    const unsigned char *data, uint32_t caplen, uint32_t len,
		    bool outbound, uint64_t packet_id, const char *comment)
{
	uint32_t flags = outbound ? EPB_OUTBOUND : EPB_INBOUND;

	block_begin(w, BT_EPB);
	put_u32(w, ifid);
	put_u32(w, (uint32_t)(ts_ns >> 32));
	put_u32(w, (uint32_t)ts_ns);
	put_u32(w, caplen);
	put_u32(w, len);
	put(w, data, caplen);
	put_pad(w);
	put_opt(w, OPT_COMMENT, comment, strlen(comment));
	put_opt(w, OPT_EPB_FLAGS, &flags, sizeof(flags));
	put_opt(w, OPT_EPB_PACKETID, &packet_id, sizeof(packet_id));
	w->written++;
	return block_end(w);
}

int pf_pcapng_packet(struct pf_pcapng *w, const struct pf_packet *pkt)
{
	char comment[128 + PF_FATE_LEN], fate[PF_FATE_LEN];
	int64_t ifid;

	if (!pkt->has_data) {
		w->skipped++;
		return 0;
	}
	ifid = interface_of(w, pkt);
	if (ifid < 0)
		return (int)ifid;
	snprintf(comment, sizeof(comment),
		 "pktfilt id=%" PRIu64 " seq=%" PRIu64 " stage=%s cpu=%u%s%s",
		 pkt->id, pkt->seq, pkt->stage, pkt->cpu,
		 pkt->root[0] ? " root=" : "", pkt->root);
	if (format_fate(pkt, fate, sizeof(fate))) {
		size_t n = strlen(comment);

		snprintf(comment + n, sizeof(comment) - n, " %s", fate);
	}
	return pf_pcapng_frame(w, (uint32_t)ifid, pkt->rt_ns, pkt->data,
			       pkt->caplen, pkt->len,
			       !strcmp(pkt->stage, "tx"), pkt->id, comment);
}

uint64_t pf_pcapng_written(const struct pf_pcapng *w)
{
	return w->written;
}

uint64_t pf_pcapng_skipped(const struct pf_pcapng *w)
{
	return w->skipped;
}

void pf_pcapng_free(struct pf_pcapng *w)
{
	if (!w)
		return;
	free(w->ifs);
	free(w->buf);
	free(w);
}
