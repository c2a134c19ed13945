// SPDX-License-Identifier: GPL-2.0
/*
 * "pktfilt merge": one packet across machines. See merge.h for the
 * matching, the clocks and the memory it takes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fgraph.h"
#include "merge.h"
#include "pcapng.h"
#include "render.h"

#define EXIT_OK		0
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

#define NONE		UINT32_MAX

/* --- the packet's bytes ------------------------------------------------------ */

struct pinfo {
	unsigned int ver;	/* 4 or 6; 0: not an IP header */
	unsigned int alen;	/* 4 or 16 */
	unsigned char saddr[16], daddr[16];
	unsigned int proto;
	bool has_id;		/* IPv4, or an IPv6 fragment header */
	uint32_t ipid;
	uint32_t frag;		/* offset in bytes */
	bool mf;
	uint32_t iplen;		/* from the header: the packet's length */
	uint32_t flow;
	unsigned int ttl;	/* IPv4 TTL, IPv6 hop limit */
	bool l4;		/* the transport header is in the bytes */
	bool tcp, udp, icmp;
	unsigned int sport, dport;
	uint32_t tseq, tack;
	unsigned int tflags;
	unsigned int itype, icode, iid, iseq;
	uint32_t plen;		/* the payload's length, from the headers */
	bool pay;		/* its first bytes hashed: */
	uint64_t phash;
};

static unsigned int be16(const unsigned char *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* FNV-1a, then a 64-bit finalizer (splitmix64's). */
struct hasher {
	uint64_t h;
};

static void h_bytes(struct hasher *h, const void *p, size_t n)
{
	const unsigned char *s = p;

	while (n--) {
		h->h ^= *s++;
		h->h *= 0x100000001b3ULL;
	}
}

static void h_u32(struct hasher *h, uint32_t v)
{
	unsigned char b[4] = { v >> 24, v >> 16, v >> 8, v };

	h_bytes(h, b, sizeof(b));
}

static uint64_t h_end(struct hasher *h)
{
	uint64_t z = h->h;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return z ? z : 1;
}

/* The transport header at @off of the @rest bytes after the IP headers. */
static void parse_l4(const unsigned char *d, uint32_t caplen, uint32_t off,
		     uint32_t rest, struct pinfo *pi)
{
	uint32_t hlen = 0, n;
	struct hasher h = { 0xcbf29ce484222325ULL };

	if (pi->frag) {
		hlen = 0;	/* a later fragment: data only */
	} else if (pi->proto == 6) {
		if (caplen < off || caplen - off < 20)
			return;
		pi->tcp = true;
		pi->sport = be16(d + off);
		pi->dport = be16(d + off + 2);
		pi->tseq = be32(d + off + 4);
		pi->tack = be32(d + off + 8);
		pi->tflags = d[off + 13] & 0x3f;
		hlen = (uint32_t)(d[off + 12] >> 4) * 4;
		if (hlen < 20)
			hlen = 20;
	} else if (pi->proto == 17 || pi->proto == 136) {
		if (caplen < off || caplen - off < 8)
			return;
		pi->udp = true;
		pi->sport = be16(d + off);
		pi->dport = be16(d + off + 2);
		hlen = 8;
	} else if ((pi->proto == 1 && pi->ver == 4) ||
		   (pi->proto == 58 && pi->ver == 6)) {
		if (caplen < off || caplen - off < 8)
			return;
		pi->icmp = true;
		pi->itype = d[off];
		pi->icode = d[off + 1];
		pi->iid = be16(d + off + 4);
		pi->iseq = be16(d + off + 6);
		hlen = 8;
	}
	pi->l4 = true;
	pi->plen = rest > hlen ? rest - hlen : 0;
	n = pi->plen < PF_MERGE_PAYLOAD ? pi->plen : PF_MERGE_PAYLOAD;
	off += hlen;
	if (caplen < off || caplen - off < n)
		return;
	h_bytes(&h, d + off, n);
	pi->phash = h_end(&h);
	pi->pay = true;
}

/* @d's IP header and what follows it: false if it is not one. */
static bool parse_ip(const unsigned char *d, uint32_t caplen,
		     struct pinfo *pi)
{
	uint32_t off, ihl;
	unsigned int nh, i;

	memset(pi, 0, sizeof(*pi));
	if (!caplen || !d)
		return false;
	if (d[0] >> 4 == 4) {
		ihl = (uint32_t)(d[0] & 15) * 4;
		if (ihl < 20 || caplen < ihl)
			return false;
		pi->ver = 4;
		pi->alen = 4;
		pi->iplen = be16(d + 2);
		pi->has_id = true;
		pi->ipid = be16(d + 4);
		pi->mf = d[6] & 0x20;
		pi->frag = (be16(d + 6) & 0x1fff) * 8;
		pi->ttl = d[8];
		pi->proto = d[9];
		memcpy(pi->saddr, d + 12, 4);
		memcpy(pi->daddr, d + 16, 4);
		parse_l4(d, caplen, ihl, pi->iplen > ihl ? pi->iplen - ihl : 0,
			 pi);
		return true;
	}
	if (d[0] >> 4 != 6 || caplen < 40)
		return false;
	pi->ver = 6;
	pi->alen = 16;
	pi->flow = be32(d) & 0xfffff;
	pi->iplen = 40 + be16(d + 4);
	nh = d[6];
	pi->ttl = d[7];
	memcpy(pi->saddr, d + 8, 16);
	memcpy(pi->daddr, d + 24, 16);
	off = 40;
	/* Hop-by-hop, routing, fragment, destination options. */
	for (i = 0; i < 8 && (nh == 0 || nh == 43 || nh == 44 || nh == 60);
	     i++) {
		if (caplen - off < 8) {
			pi->proto = nh;
			return true;	/* the rest is not in the bytes */
		}
		if (nh == 44) {
			pi->has_id = true;
			pi->frag = be16(d + off + 2) & 0xfff8;
			pi->mf = d[off + 3] & 1;
			pi->ipid = be32(d + off + 4);
			nh = d[off];
			off += 8;
		} else {
			uint32_t len = ((uint32_t)d[off + 1] + 1) * 8;

			nh = d[off];
			if (caplen - off < len) {
				pi->proto = nh;
				return true;
			}
			off += len;
		}
	}
	pi->proto = nh;
	parse_l4(d, caplen, off, pi->iplen > off ? pi->iplen - off : 0, pi);
	return true;
}

static void keys_of(const struct pinfo *pi, struct pf_merge_keys *k)
{
	struct hasher h;
	int t;

	memset(k, 0, sizeof(*k));
	if (!pi->ver)
		return;
	for (t = 0; t < PF_MERGE_TIERS; t++) {
		if (t != PF_MERGE_IP && !pi->pay)
			continue;
		h.h = 0xcbf29ce484222325ULL;
		h_u32(&h, (uint32_t)t);
		h_u32(&h, pi->ver);
		if (t != PF_MERGE_NAT) {
			h_bytes(&h, pi->saddr, pi->alen);
			h_bytes(&h, pi->daddr, pi->alen);
		}
		h_u32(&h, pi->proto);
		h_u32(&h, pi->has_id);
		h_u32(&h, pi->ipid);
		h_u32(&h, pi->frag);
		h_u32(&h, pi->mf);
		h_u32(&h, pi->iplen);
		h_u32(&h, pi->flow);
		if (t != PF_MERGE_IP) {
			if (t == PF_MERGE_BYTES) {
				h_u32(&h, pi->sport);
				h_u32(&h, pi->dport);
				h_u32(&h, pi->iid);
			}
			h_u32(&h, pi->tseq);
			h_u32(&h, pi->tack);
			h_u32(&h, pi->tflags);
			h_u32(&h, pi->itype);
			h_u32(&h, pi->icode);
			h_u32(&h, pi->iseq);
			h_u32(&h, pi->plen);
			h_bytes(&h, &pi->phash, sizeof(pi->phash));
		}
		k->k[t] = h_end(&h);
		k->have[t] = true;
	}
}

void pf_merge_keys(const unsigned char *data, uint32_t caplen,
		   struct pf_merge_keys *keys)
{
	struct pinfo pi;

	parse_ip(data, caplen, &pi);
	keys_of(&pi, keys);
}

static const char *proto_name(const struct pinfo *pi)
{
	switch (pi->proto) {
	case 6:
		return "tcp";
	case 17:
		return "udp";
	case 136:
		return "udplite";
	case 1:
		return pi->ver == 4 ? "icmp" : NULL;
	case 58:
		return pi->ver == 6 ? "icmpv6" : NULL;
	}
	return NULL;
}

static void print_addr(FILE *out, const struct pinfo *pi,
		       const unsigned char *a, bool port, unsigned int p)
{
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(pi->ver == 4 ? AF_INET : AF_INET6, a, buf, sizeof(buf));
	if (!port)
		fputs(buf, out);
	else if (pi->ver == 4)
		fprintf(out, "%s:%u", buf, p);
	else
		fprintf(out, "[%s]:%u", buf, p);
}

static void tcp_flags(char *buf, unsigned int f)
{
	static const char names[] = "FSRPAU";
	size_t i, n = 0;

	for (i = 0; i < 6; i++)
		if (f & (1U << i))
			buf[n++] = names[i];
	if (!n)
		buf[n++] = '-';
	buf[n] = '\0';
}

/* "udp 10.9.0.1:4000 -> 10.9.0.2:9000 ip id 1 length 41" */
static void summary_text(FILE *out, const struct pinfo *pi)
{
	const char *name = proto_name(pi);
	bool ports = pi->tcp || pi->udp;
	char flags[8];

	if (name)
		fprintf(out, "%s ", name);
	else
		fprintf(out, "proto %u ", pi->proto);
	print_addr(out, pi, pi->saddr, ports, pi->sport);
	fputs(" -> ", out);
	print_addr(out, pi, pi->daddr, ports, pi->dport);
	if (pi->tcp) {
		tcp_flags(flags, pi->tflags);
		fprintf(out, " flags %s seq %" PRIu32 " ack %" PRIu32, flags,
			pi->tseq, pi->tack);
	}
	if (pi->icmp)
		fprintf(out, " type %u code %u id %u seq %u", pi->itype,
			pi->icode, pi->iid, pi->iseq);
	if (pi->has_id)
		fprintf(out, " ip id %" PRIu32, pi->ipid);
	if (pi->ver == 6 && pi->flow)
		fprintf(out, " flow label 0x%05" PRIx32, pi->flow);
	if (pi->frag || pi->mf)
		fprintf(out, " fragment at %" PRIu32 "%s", pi->frag,
			pi->mf ? " (more)" : " (last)");
	fprintf(out, " length %" PRIu32, pi->iplen);
	if (pi->l4)
		fprintf(out, " payload %" PRIu32, pi->plen);
}

static void json_num_or_null(FILE *out, const char *key, bool have,
			     uint64_t v)
{
	if (have)
		fprintf(out, ", \"%s\": %" PRIu64, key, v);
	else
		fprintf(out, ", \"%s\": null", key);
}

static void summary_json(FILE *out, const struct pinfo *pi)
{
	const char *name = proto_name(pi);
	char flags[8];

	fprintf(out, "{\"version\": %u, \"proto\": ", pi->ver);
	if (name)
		fprintf(out, "\"%s\"", name);
	else
		fprintf(out, "%u", pi->proto);
	fputs(", \"saddr\": \"", out);
	print_addr(out, pi, pi->saddr, false, 0);
	fputs("\", \"daddr\": \"", out);
	print_addr(out, pi, pi->daddr, false, 0);
	fputc('"', out);
	json_num_or_null(out, "sport", pi->tcp || pi->udp, pi->sport);
	json_num_or_null(out, "dport", pi->tcp || pi->udp, pi->dport);
	json_num_or_null(out, "ip_id", pi->has_id, pi->ipid);
	json_num_or_null(out, "flow_label", pi->ver == 6, pi->flow);
	fprintf(out, ", \"frag_offset\": %" PRIu32 ", \"more_fragments\": %s",
		pi->frag, pi->mf ? "true" : "false");
	fprintf(out, ", \"length\": %" PRIu32, pi->iplen);
	json_num_or_null(out, "payload_length", pi->l4, pi->plen);
	json_num_or_null(out, "tcp_seq", pi->tcp, pi->tseq);
	json_num_or_null(out, "tcp_ack", pi->tcp, pi->tack);
	if (pi->tcp) {
		tcp_flags(flags, pi->tflags);
		fprintf(out, ", \"tcp_flags\": \"%s\"", flags);
	} else {
		fputs(", \"tcp_flags\": null", out);
	}
	json_num_or_null(out, "icmp_type", pi->icmp, pi->itype);
	json_num_or_null(out, "icmp_code", pi->icmp, pi->icode);
	json_num_or_null(out, "icmp_id", pi->icmp, pi->iid);
	json_num_or_null(out, "icmp_seq", pi->icmp, pi->iseq);
	fputc('}', out);
}

/* --- the state --------------------------------------------------------------- */

enum { ST_L4, ST_RX, ST_TX, ST_OTHER };

/* One packet graph (one stage of a machine's packet): what matching needs. */
struct mrec {
	uint64_t id, seq, rt;
	uint64_t held;		/* held_ns: the event came that much after
				 * the packet reached the stage */
	uint64_t k[PF_MERGE_TIERS];
	uint64_t off;		/* its summary, then its rendering, spilled */
	uint32_t sum_len, body_len;	/* pcapng: no summary, its bytes */
	uint32_t len;		/* the packet's length (len=) */
	uint8_t have;		/* bit t: k[t] is a key */
	uint8_t stage;
	bool fwd;		/* an rx graph that forwarded the packet */
	uint8_t ttl;		/* its TTL or hop limit, if have */
};

/* A machine's packet: its graphs (one id). */
struct mlp {
	uint32_t machine;
	uint32_t first, n;	/* its records, by seq */
	uint32_t in, out;	/* the records matched on, or NONE */
	uint32_t parent;	/* union-find: its journey */
	uint32_t pos;		/* in the journey order */
};

struct mlink {
	uint32_t from, to;	/* packets: from's out -> to's in */
	uint8_t tier;
	bool sure;
};

struct machine {
	char *name;
	uint32_t first, n;	/* its records */
	uint32_t lp_first, lp_n;
	bool lost;
};

struct pf_merge {
	enum pf_merge_format fmt;
	/* The renderings: a temporary file or memory. */
	bool in_memory;
	FILE *spill;
	char *mem;
	uint64_t mem_len, mem_cap, spill_len;

	struct machine machines[PF_MERGE_MAX_MACHINES];
	size_t nmachines;
	struct pf_fgraph *parser;	/* the machine being read */
	int err;

	struct mrec *recs;
	size_t nrecs, rec_cap;
	struct mlp *lps;
	size_t nlps;
	struct mlink *links;
	size_t nlinks, link_cap;
	struct pf_merge_clock *clocks;	/* [a * n + b], a < b */
	/* pcapng: the writer, its interfaces (machine, stage), the clocks */
	struct pf_pcapng *pw;
	int64_t ifid[PF_MERGE_MAX_MACHINES][4];
	int64_t corr[PF_MERGE_MAX_MACHINES];
	bool corrected[PF_MERGE_MAX_MACHINES];
	struct pf_merge_stats stats;
	bool matched;
};

/* Room for @n more of @size in *@p (of *@cap): 0 or -ENOMEM. */
static int grow(void *pp, size_t *cap, size_t len, size_t n, size_t size)
{
	void **p = pp;
	size_t c = *cap ? *cap : 64;
	void *q;

	if (len + n <= *cap)
		return 0;
	while (c < len + n) {
		if (c > SIZE_MAX / 2 / size)
			return -ENOMEM;
		c *= 2;
	}
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int spill_put(struct pf_merge *m, const char *s, size_t n,
		     uint64_t *off)
{
	*off = m->spill_len;
	if (m->in_memory) {
		size_t cap = (size_t)m->mem_cap;
		int err = grow(&m->mem, &cap, (size_t)m->mem_len, n, 1);

		if (err)
			return err;
		m->mem_cap = cap;
		if (n)
			memcpy(m->mem + m->mem_len, s, n);
		m->mem_len += n;
	} else if (n && fwrite(s, 1, n, m->spill) != n) {
		return errno ? -errno : -EIO;
	}
	m->spill_len += n;
	return 0;
}

/* The @n spilled bytes at @off, copied to @out. */
static int spill_copy(struct pf_merge *m, uint64_t off, size_t n, FILE *out)
{
	char buf[65536];
	size_t k;

	if (m->in_memory) {
		if (n && fwrite(m->mem + off, 1, n, out) != n)
			return -EIO;
		return 0;
	}
	if (fseeko(m->spill, (off_t)off, SEEK_SET))
		return -errno;
	while (n) {
		k = n < sizeof(buf) ? n : sizeof(buf);
		if (fread(buf, 1, k, m->spill) != k)
			return ferror(m->spill) ? -EIO : -ENODATA;
		if (fwrite(buf, 1, k, out) != k)
			return -EIO;
		n -= k;
	}
	return 0;
}

/* The @n spilled bytes at @off into @buf. */
static int spill_read(struct pf_merge *m, uint64_t off, size_t n, void *buf)
{
	if (m->in_memory) {
		if (n)
			memcpy(buf, m->mem + off, n);
		return 0;
	}
	if (fseeko(m->spill, (off_t)off, SEEK_SET))
		return -errno;
	if (fread(buf, 1, n, m->spill) != n)
		return ferror(m->spill) ? -EIO : -ENODATA;
	return 0;
}

struct pf_merge *pf_merge_new(enum pf_merge_format fmt, bool in_memory)
{
	struct pf_merge *m = calloc(1, sizeof(*m));
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!m)
		return NULL;
	m->fmt = fmt;
	m->in_memory = in_memory;
	if (in_memory)
		return m;
	/* tmpfile() ignores TMPDIR; the spill may be big: honour it. */
	snprintf(path, sizeof(path), "%s/pktfilt-merge.XXXXXX",
		 dir && dir[0] ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0) {
		free(m);
		return NULL;
	}
	unlink(path);
	m->spill = fdopen(fd, "w+");
	if (!m->spill) {
		close(fd);
		free(m);
		return NULL;
	}
	return m;
}

void pf_merge_free(struct pf_merge *m)
{
	size_t i;

	if (!m)
		return;
	pf_fgraph_free(m->parser);
	for (i = 0; i < m->nmachines; i++)
		free(m->machines[i].name);
	if (m->spill)
		fclose(m->spill);
	free(m->mem);
	free(m->recs);
	free(m->lps);
	free(m->links);
	free(m->clocks);
	free(m);
}

static uint8_t stage_of(const char *s)
{
	if (!strcmp(s, "rx"))
		return ST_RX;
	if (!strcmp(s, "tx"))
		return ST_TX;
	if (!strcmp(s, "l4"))
		return ST_L4;
	return ST_OTHER;
}

static const char *const stage_names[] = { "l4", "rx", "tx", "?" };

/*
 * Does the graph below @n call ip_forward() or ip6_forward()? A router's
 * rx graph holds the forwarding and the output to the next device: no
 * tx graph follows (tx is LOCAL_OUT's, which a forwarded packet does not
 * pass), so that rx graph is what it sent.
 */
static bool forwards(const struct pf_node *n, unsigned int depth)
{
	size_t i;

	if (!n || depth > 512)
		return false;
	if (n->func && (!strcmp(n->func, "ip_forward") ||
			!strcmp(n->func, "ip6_forward")))
		return true;
	for (i = 0; i < n->nchildren; i++)
		if (forwards(n->children[i], depth + 1))
			return true;
	return false;
}

/* A graph, streamed: its record, its rendering spilled. */
static int on_packet(void *arg, const struct pf_packet *pkt)
{
	struct pf_merge *m = arg;
	struct machine *mc = &m->machines[m->nmachines - 1];
	struct pf_merge_keys k;
	struct pinfo pi;
	struct mrec *r;
	char *buf = NULL;
	size_t len = 0, sum;
	FILE *f;
	int err, t;

	err = grow(&m->recs, &m->rec_cap, m->nrecs, 1, sizeof(*m->recs));
	if (err)
		return err;
	if (m->nrecs >= NONE - 1)
		return -E2BIG;
	r = &m->recs[m->nrecs];
	memset(r, 0, sizeof(*r));
	r->id = pkt->id;
	r->seq = pkt->seq;
	r->rt = pkt->rt_ns;
	r->held = pkt->held_ns;
	r->stage = stage_of(pkt->stage);
	r->fwd = r->stage == ST_RX && forwards(pkt->graph, 0);
	r->len = pkt->len;
	memset(&pi, 0, sizeof(pi));
	if (pkt->has_data && parse_ip(pkt->data, pkt->caplen, &pi)) {
		r->ttl = (uint8_t)pi.ttl;
		keys_of(&pi, &k);
		for (t = 0; t < PF_MERGE_TIERS; t++) {
			r->k[t] = k.k[t];
			if (k.have[t])
				r->have |= 1U << t;
		}
	}

	if (!pkt->complete)
		m->stats.incomplete++;
	m->stats.graphs++;
	if (m->fmt == PF_MERGE_PCAPNG) {
		/* The bytes only (none from a module before version 6). */
		err = spill_put(m, (const char *)pkt->data,
				pkt->has_data ? pkt->caplen : 0, &r->off);
		if (err)
			return err;
		r->body_len = pkt->has_data ? pkt->caplen : 0;
		m->nrecs++;
		mc->n++;
		return 0;
	}
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	if (pi.ver) {
		if (m->fmt == PF_MERGE_JSON)
			summary_json(f, &pi);
		else
			summary_text(f, &pi);
	}
	fflush(f);
	sum = len;
	err = m->fmt == PF_MERGE_JSON ? pf_render_json_packet(f, pkt) :
					pf_render_text_packet(f, pkt);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (!err && m->fmt == PF_MERGE_JSON && len > sum &&
	    buf[len - 1] == '\n')
		len--;	/* one line per journey: the packet's line inside */
	if (!err && (sum > UINT32_MAX || len - sum > UINT32_MAX))
		err = -EFBIG;
	if (!err)
		err = spill_put(m, buf, len, &r->off);
	free(buf);
	if (err)
		return err;
	r->sum_len = (uint32_t)sum;
	r->body_len = (uint32_t)(len - sum);
	m->nrecs++;
	mc->n++;
	return 0;
}

int pf_merge_begin(struct pf_merge *m, const char *name)
{
	struct machine *mc;

	if (m->parser || m->matched || m->err)
		return -EINVAL;
	if (m->nmachines >= PF_MERGE_MAX_MACHINES)
		return -E2BIG;
	mc = &m->machines[m->nmachines];
	memset(mc, 0, sizeof(*mc));
	mc->name = strdup(name);
	if (!mc->name)
		return -ENOMEM;
	mc->first = (uint32_t)m->nrecs;
	m->nmachines++;
	m->parser = pf_fgraph_new_stream(on_packet, m);
	if (!m->parser)
		return -ENOMEM;
	return 0;
}

int pf_merge_feed(struct pf_merge *m, const char *buf, size_t len)
{
	int err;

	if (!m->parser)
		return -EINVAL;
	err = pf_fgraph_feed(m->parser, buf, len);
	if (err)
		m->err = err;
	return err;
}

int pf_merge_end(struct pf_merge *m)
{
	struct pf_trace *t;
	struct pf_fgraph *p = m->parser;

	if (!p)
		return -EINVAL;
	m->parser = NULL;
	if (m->err) {
		pf_fgraph_free(p);
		return m->err;
	}
	t = pf_fgraph_finish(p);
	if (!t) {
		m->err = errno ? -errno : -ENOMEM;
		return m->err;
	}
	m->machines[m->nmachines - 1].lost = pf_trace_lost(t);
	if (pf_trace_lost(t))
		m->stats.lost = true;
	pf_trace_free(t);
	return 0;
}

/* --- matching ---------------------------------------------------------------- */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_rec(const void *pa, const void *pb)
{
	const struct mrec *a = pa, *b = pb;

	return cmp_u64(a->id, b->id) ?: cmp_u64(a->seq, b->seq) ?:
	       cmp_u64(a->off, b->off);
}

static uint32_t find(struct pf_merge *m, uint32_t i)
{
	uint32_t r = i, next;

	while (m->lps[r].parent != r)
		r = m->lps[r].parent;
	while (m->lps[i].parent != r) {
		next = m->lps[i].parent;
		m->lps[i].parent = r;
		i = next;
	}
	return r;
}

/* b - a, saturated to int64_t. */
static int64_t sdiff(uint64_t b, uint64_t a)
{
	uint64_t d;

	if (b >= a) {
		d = b - a;
		return d > INT64_MAX ? INT64_MAX : (int64_t)d;
	}
	d = a - b;
	return d > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)d;
}

static int64_t ssub(int64_t a, int64_t b)
{
	if (b < 0 && a > INT64_MAX + b)
		return INT64_MAX;
	if (b > 0 && a < INT64_MIN + b)
		return INT64_MIN;
	return a - b;
}

static int64_t sneg(int64_t a)
{
	return a == INT64_MIN ? INT64_MAX : -a;
}

/* Machine @a's packets into packets (by id), each its in and out graph. */
static int group_packets(struct pf_merge *m)
{
	size_t i, j, total = 0;
	int err;

	for (i = 0; i < m->nmachines; i++) {
		struct machine *mc = &m->machines[i];

		if (mc->n)
			qsort(m->recs + mc->first, mc->n, sizeof(*m->recs),
			      cmp_rec);
		total += mc->n;
	}
	m->lps = calloc(total ? total : 1, sizeof(*m->lps));
	if (!m->lps)
		return -ENOMEM;
	for (i = 0; i < m->nmachines; i++) {
		struct machine *mc = &m->machines[i];

		mc->lp_first = (uint32_t)m->nlps;
		for (j = mc->first; j < mc->first + mc->n;) {
			struct mlp *lp = &m->lps[m->nlps];
			size_t k = j;

			lp->machine = (uint32_t)i;
			lp->first = (uint32_t)j;
			lp->in = lp->out = NONE;
			lp->parent = (uint32_t)m->nlps;
			for (; k < mc->first + mc->n &&
			       m->recs[k].id == m->recs[j].id; k++) {
				const struct mrec *r = &m->recs[k];

				if (!r->have)
					continue;
				if ((r->stage == ST_RX || r->stage == ST_L4) &&
				    lp->in == NONE)
					lp->in = (uint32_t)k;
				/* Sent: its last tx graph, or forwarded. */
				if (r->stage == ST_TX || r->fwd)
					lp->out = (uint32_t)k;
			}
			lp->n = (uint32_t)(k - j);
			if (lp->in == NONE && lp->out == NONE)
				m->stats.keyless++;
			if (lp->out != NONE)
				m->stats.tx++;
			m->nlps++;
			j = k;
		}
		mc->lp_n = (uint32_t)(m->nlps - mc->lp_first);
	}
	m->stats.packets = m->nlps;
	err = 0;
	m->clocks = calloc(m->nmachines * m->nmachines + 1,
			   sizeof(*m->clocks));
	if (!m->clocks)
		err = -ENOMEM;
	return err;
}

struct ment {
	uint64_t key, t;
	uint32_t lp;
	uint8_t side;		/* 0 sender, 1 receiver */
	int ttl;		/* as it left the sender, as it came */
};

/*
 * Can a packet that left a machine with TTL (hop limit) @s have come to
 * another with @r? Routers only lower it. This tells the way of a link
 * between two machines that both forward the packet (their rx graphs
 * are sender and receiver at once, with the same bytes): A -> R -> B
 * with B forwarding on to a namespace matches R -> B and, as bytes go,
 * B -> R too.
 */
static bool ttl_ok(const struct ment *s, const struct ment *r)
{
	return r->ttl <= s->ttl;
}

static int cmp_ment(const void *pa, const void *pb)
{
	const struct ment *a = pa, *b = pb;

	return cmp_u64(a->key, b->key) ?: (a->side > b->side) -
	       (a->side < b->side) ?: cmp_u64(a->t, b->t) ?:
	       cmp_u64(a->lp, b->lp);
}

/* The matching of one direction, sender S -> receiver R. */
struct dir {
	uint32_t s, r;		/* machines */
	bool *s_used, *r_used;	/* by packet, from each one's lp_first */
	bool has_lo, has_hi;	/* clock_R - clock_S, as known */
	int64_t lo, hi;
};

static int add_link(struct pf_merge *m, struct dir *d, const struct ment *s,
		    const struct ment *r, int tier, bool sure)
{
	struct mlink *l;
	struct pf_merge_clock *c;
	uint32_t a = d->s < d->r ? d->s : d->r, b = d->s ^ d->r ^ a;
	int64_t raw = sdiff(r->t, s->t);
	uint32_t x, y;
	int err;

	err = grow(&m->links, &m->link_cap, m->nlinks, 1, sizeof(*m->links));
	if (err)
		return err;
	l = &m->links[m->nlinks++];
	l->from = s->lp;
	l->to = r->lp;
	l->tier = (uint8_t)tier;
	l->sure = sure;
	d->s_used[s->lp - m->machines[d->s].lp_first] = true;
	d->r_used[r->lp - m->machines[d->r].lp_first] = true;
	x = find(m, s->lp);
	y = find(m, r->lp);
	if (x != y)
		m->lps[y].parent = x;
	c = &m->clocks[a * m->nmachines + b];
	c->links++;
	m->stats.links++;
	if (!sure)
		return 0;
	if (d->s == a) {	/* a -> b: o <= t_b - t_a */
		if (!c->has_hi || raw < c->hi)
			c->hi = raw;
		c->has_hi = true;
		c->n_ab++;
	} else {		/* b -> a: o >= t_b - t_a */
		raw = sneg(raw);
		if (!c->has_lo || raw > c->lo)
			c->lo = raw;
		c->has_lo = true;
		c->n_ba++;
	}
	return 0;
}

/* This direction's clock_R - clock_S bounds from the pair's clock. */
static void dir_clock(const struct pf_merge *m, struct dir *d)
{
	uint32_t a = d->s < d->r ? d->s : d->r, b = d->s ^ d->r ^ a;
	const struct pf_merge_clock *c = &m->clocks[a * m->nmachines + b];

	if (d->s == a) {
		d->has_lo = c->has_lo;
		d->lo = c->lo;
		d->has_hi = c->has_hi;
		d->hi = c->hi;
	} else {
		d->has_lo = c->has_hi;
		d->lo = sneg(c->hi);
		d->has_hi = c->has_lo;
		d->hi = sneg(c->lo);
	}
}

/*
 * When a received graph's packet reached the machine: its event's time
 * less how long a lazy filter held the packet there (the event is
 * written when the held packet is replayed). A sent graph's time is its
 * event's: a packet held at tx leaves after its replay.
 */
static uint64_t rx_time(const struct mrec *r)
{
	return r->held < r->rt ? r->rt - r->held : r->rt;
}

/*
 * Appends to @e (holding @n) the packets of machine @mc not @used that have
 * tier @tier's key on their last sent record (@side 0, a sender) or their
 * first received one (@side 1); with @lacking, only those without the
 * bytes key. Returns the new count.
 */
static size_t tier_entries(const struct pf_merge *m, const struct machine *mc,
			   const bool *used, uint8_t side, int tier,
			   bool lacking, struct ment *e, size_t n)
{
	size_t i;

	for (i = 0; i < mc->lp_n; i++) {
		const struct mlp *lp = &m->lps[mc->lp_first + i];
		uint32_t r = side ? lp->in : lp->out;
		const struct mrec *rec;

		if (used[i] || r == NONE)
			continue;
		rec = &m->recs[r];
		if (!(rec->have & (1U << tier)) || (lacking && (rec->have & 1)))
			continue;
		/*
		 * The TTL it left with: a forwarded packet's rx graph has
		 * its bytes from before the forwarding lowered it.
		 */
		e[n++] = (struct ment){ rec->k[tier],
					side ? rx_time(rec) : rec->rt,
					mc->lp_first + (uint32_t)i, side,
					!side && rec->stage == ST_RX ?
					rec->ttl - 1 : rec->ttl };
	}
	return n;
}

/*
 * One tier of one direction: in @sure mode, the keys on exactly one
 * packet of each side; else the rest, by time. Tier ip links only where
 * one side lacks the bytes key: @lacking 1 takes the senders without it
 * (and any receiver), 2 the receivers without it; 0 for the others.
 */
static int match_tier(struct pf_merge *m, struct dir *d, int tier, bool sure,
		      int lacking)
{
	const struct machine *ms = &m->machines[d->s], *mr = &m->machines[d->r];
	struct ment *e;
	size_t n = 0, i, j, k;
	int err = 0;

	e = malloc(((size_t)ms->lp_n + mr->lp_n + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	n = tier_entries(m, ms, d->s_used, 0, tier, lacking == 1, e, n);
	n = tier_entries(m, mr, d->r_used, 1, tier, lacking == 2, e, n);
	qsort(e, n, sizeof(*e), cmp_ment);
	for (i = 0; i < n && !err; i = k) {
		size_t ns, nr, next;

		for (k = i; k < n && e[k].key == e[i].key; k++)
			;
		for (j = i; j < k && e[j].side == 0; j++)
			;
		ns = j - i;
		nr = k - j;
		if (!ns || !nr)
			continue;
		if (sure) {
			if (ns == 1 && nr == 1 && ttl_ok(&e[i], &e[j]))
				err = add_link(m, d, &e[i], &e[j], tier, true);
			continue;
		}
		/*
		 * Each received copy, in time order, with the latest copy
		 * sent before it (o >= lo: t_R - t_S >= lo), after the one
		 * linked before; without a lower bound, in order.
		 */
		next = i;
		for (size_t q = j; q < k && next < j && !err; q++) {
			size_t best = SIZE_MAX, p;

			if (!d->has_lo) {
				if (ttl_ok(&e[next], &e[q]))
					best = next;
			} else {
				for (p = next; p < j; p++)
					if (sdiff(e[q].t, e[p].t) < d->lo)
						break;
					else if (ttl_ok(&e[p], &e[q]))
						best = p;
			}
			if (best == SIZE_MAX)
				continue;	/* nothing sent before it */
			err = add_link(m, d, &e[best], &e[q], tier, false);
			next = best + 1;
		}
	}
	free(e);
	return err;
}

static int match_pair(struct pf_merge *m, uint32_t a, uint32_t b)
{
	const struct machine *ma = &m->machines[a], *mb = &m->machines[b];
	bool *used = calloc((size_t)2 * (ma->lp_n + mb->lp_n) + 1,
			    sizeof(bool));
	struct dir d[2];
	int err = 0, t, i, p, l;

	if (!used)
		return -ENOMEM;
	/* Each packet's out and in used once per direction. */
	d[0] = (struct dir){ .s = a, .r = b, .s_used = used,
			     .r_used = used + ma->lp_n };
	d[1] = (struct dir){ .s = b, .r = a,
			     .s_used = used + ma->lp_n + mb->lp_n,
			     .r_used = used + ma->lp_n + 2 * mb->lp_n };
	for (p = 0; p < 2 && !err; p++) {
		if (p)	/* the clocks of the sure links: pair the rest */
			for (i = 0; i < 2; i++)
				dir_clock(m, &d[i]);
		for (t = 0; t < PF_MERGE_TIERS && !err; t++) {
			bool ip = t == PF_MERGE_IP;

			for (i = 0; i < 2 && !err; i++)
				for (l = ip; l <= (ip ? 2 : 0) && !err; l++)
					err = match_tier(m, &d[i], t, !p, l);
		}
	}
	free(used);
	return err;
}

static int match(struct pf_merge *m)
{
	uint32_t a, b;
	int err;

	if (m->matched)
		return 0;
	if (m->parser)
		return -EINVAL;
	m->matched = true;
	err = group_packets(m);
	for (a = 0; a < m->nmachines && !err; a++)
		for (b = a + 1; b < m->nmachines && !err; b++)
			err = match_pair(m, a, b);
	return err;
}

const struct pf_merge_clock *pf_merge_clock(const struct pf_merge *m,
					    size_t a, size_t b)
{
	if (!m->clocks || a >= b || b >= m->nmachines)
		return NULL;
	return &m->clocks[a * m->nmachines + b];
}

const struct pf_merge_stats *pf_merge_stats(const struct pf_merge *m)
{
	return &m->stats;
}

/* --- output ------------------------------------------------------------------ */

static const char *const tier_names[] = { "bytes", "nat", "ip" };

/* "+1234.567 us" */
static void print_sus(FILE *out, int64_t ns)
{
	uint64_t v = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	fprintf(out, "%c%" PRIu64 ".%03" PRIu64 " us", ns < 0 ? '-' : '+',
		v / 1000, v % 1000);
}

static void print_ns_us(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

/* A link's one-way time, from the pair's clock. */
struct oneway {
	bool has_min, has_max;
	uint64_t min, max;
	bool consistent;
	struct dir d;
};

static void one_way(const struct pf_merge *m, const struct mlink *l,
		    struct oneway *o)
{
	const struct mrec *s = &m->recs[m->lps[l->from].out];
	const struct mrec *r = &m->recs[m->lps[l->to].in];
	int64_t raw = sdiff(rx_time(r), s->rt), x;

	memset(o, 0, sizeof(*o));
	o->d.s = m->lps[l->from].machine;
	o->d.r = m->lps[l->to].machine;
	dir_clock(m, &o->d);
	o->consistent = !(o->d.has_lo && o->d.has_hi && o->d.lo > o->d.hi);
	/* d = raw - o, o in [lo, hi]: d in [raw - hi, raw - lo], d >= 0 */
	if (o->d.has_hi) {
		x = ssub(raw, o->d.hi);
		o->min = x > 0 ? (uint64_t)x : 0;
		o->has_min = true;
	}
	if (o->d.has_lo) {
		x = ssub(raw, o->d.lo);
		o->max = x > 0 ? (uint64_t)x : 0;
		if (o->max < o->min)
			o->max = o->min;
		o->has_max = true;
	}
}

static void print_clocks(struct pf_merge *m, FILE *out)
{
	size_t a, b;

	fprintf(out, "# merge: %zu machines:", m->nmachines);
	for (a = 0; a < m->nmachines; a++)
		fprintf(out, "%s %s", a ? "," : "", m->machines[a].name);
	fputc('\n', out);
	for (a = 0; a < m->nmachines; a++) {
		for (b = a + 1; b < m->nmachines; b++) {
			const struct pf_merge_clock *c =
				&m->clocks[a * m->nmachines + b];
			const char *na = m->machines[a].name;
			const char *nb = m->machines[b].name;

			fprintf(out, "# clock %s - clock %s: ", nb, na);
			if (c->has_lo && c->has_hi) {
				print_sus(out, c->lo / 2 + c->hi / 2 +
					  (c->lo % 2 + c->hi % 2) / 2);
				fputs(" (in ", out);
				print_sus(out, c->lo);
				fputs(" .. ", out);
				print_sus(out, c->hi);
				fputc(')', out);
				if (c->lo > c->hi)
					fputs(" INCONSISTENT: the bounds cross (clock drift, or a wrong match)",
					      out);
			} else if (c->has_hi) {
				fputs("at most ", out);
				print_sus(out, c->hi);
				fprintf(out, ": only a bound, no packet %s -> %s",
					nb, na);
			} else if (c->has_lo) {
				fputs("at least ", out);
				print_sus(out, c->lo);
				fprintf(out, ": only a bound, no packet %s -> %s",
					na, nb);
			} else {
				fputs("unknown: no packet matched one to one",
				      out);
			}
			fprintf(out, " [%" PRIu64 " %s -> %s, %" PRIu64
				" %s -> %s]\n", c->n_ab, na, nb, c->n_ba, nb,
				na);
		}
	}
}

static struct pf_merge *sort_m;

static int cmp_lp_by_root(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct mlp *x = &sort_m->lps[a], *y = &sort_m->lps[b];

	return cmp_u64(x->parent, y->parent) ?:
	       cmp_u64(x->machine, y->machine) ?:
	       cmp_u64(sort_m->recs[x->first].seq,
		       sort_m->recs[y->first].seq) ?: cmp_u64(a, b);
}

static int cmp_link_from(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return cmp_u64(sort_m->links[a].from, sort_m->links[b].from) ?:
	       cmp_u64(a, b);
}

static int cmp_lp_first(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct mlp *x = &sort_m->lps[a], *y = &sort_m->lps[b];

	return cmp_u64(x->machine, y->machine) ?:
	       cmp_u64(sort_m->recs[x->first].seq,
		       sort_m->recs[y->first].seq) ?: cmp_u64(a, b);
}

/* The range of links from packet @lp in lorder. */
static size_t links_from(const struct pf_merge *m, const uint32_t *lorder,
			 uint32_t lp, size_t *end)
{
	size_t lo = 0, hi = m->nlinks, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->links[lorder[mid]].from < lp)
			lo = mid + 1;
		else
			hi = mid;
	}
	*end = lo;
	while (*end < m->nlinks && m->links[lorder[*end]].from == lp)
		(*end)++;
	return lo;
}

/*
 * The journey's packets @j[0..n) in the order of its hops (Kahn's, the
 * first sender first); what a cycle leaves, in (machine, seq) order.
 */
static int order_journey(struct pf_merge *m, const uint32_t *lorder,
			 uint32_t *j, size_t n)
{
	uint32_t *indeg = calloc(n + 1, sizeof(*indeg));
	uint32_t *out = malloc((n + 1) * sizeof(*out));
	bool *done = calloc(n + 1, sizeof(*done));
	size_t i, head = 0, tail = 0, e, end, src, cyc;

	if (!indeg || !out || !done) {
		free(indeg);
		free(out);
		free(done);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		m->lps[j[i]].pos = (uint32_t)i;
	for (i = 0; i < n; i++)
		for (e = links_from(m, lorder, j[i], &end); e < end; e++)
			indeg[m->lps[m->links[lorder[e]].to].pos]++;
	/*
	 * A packet's indegree reaches 0 only when it is queued: the sources
	 * are those of the start, found by one pointer moving forward, and
	 * so is the first packet not done (a cycle's).
	 */
	for (src = 0, cyc = 0;;) {
		while (src < n && (done[src] || indeg[src]))
			src++;
		if (src < n) {
			done[src] = true;
			out[tail++] = j[src];
		} else {
			while (cyc < n && done[cyc])
				cyc++;
			if (cyc == n)
				break;
			done[cyc] = true;	/* a cycle: its first packet */
			out[tail++] = j[cyc];
		}
		while (head < tail) {
			uint32_t lp = out[head++];

			for (e = links_from(m, lorder, lp, &end); e < end;
			     e++) {
				uint32_t p = m->lps[m->links[lorder[e]].to].pos;

				if (indeg[p] && !--indeg[p] && !done[p]) {
					done[p] = true;
					out[tail++] = j[p];
				}
			}
		}
	}
	memcpy(j, out, n * sizeof(*j));
	for (i = 0; i < n; i++)
		m->lps[j[i]].pos = (uint32_t)i;
	free(indeg);
	free(out);
	free(done);
	return 0;
}

static void json_name(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), k;

	fputc('"', out);
	while (n) {
		if (*p == '"' || *p == '\\') {
			fprintf(out, "\\%c", *p);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(out, "\\u%04x", *p);
		} else if (*p < 0x80) {
			fputc(*p, out);
		} else {
			k = pf_utf8_len(p, n);
			if (!k) {
				fputs("\\ufffd", out);
				k = 1;
			} else {
				fwrite(p, 1, k, out);
			}
			p += k;
			n -= k;
			continue;
		}
		p++;
		n--;
	}
	fputc('"', out);
}

/* The first record of the journey that has a summary. */
static const struct mrec *journey_summary(const struct pf_merge *m,
					  const uint32_t *j, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		const struct mlp *lp = &m->lps[j[i]];

		for (k = lp->first; k < lp->first + lp->n; k++)
			if (m->recs[k].sum_len)
				return &m->recs[k];
	}
	return NULL;
}

static void print_hop_text(struct pf_merge *m, FILE *out,
			   const struct mlink *l)
{
	struct oneway o;
	const char *from = m->machines[m->lps[l->from].machine].name;
	const char *to = m->machines[m->lps[l->to].machine].name;

	one_way(m, l, &o);
	fprintf(out, "# %s %s -> %s %s: ", from,
		stage_names[m->recs[m->lps[l->from].out].stage], to,
		stage_names[m->recs[m->lps[l->to].in].stage]);
	if (o.has_min && o.has_max) {
		print_ns_us(out, o.min / 2 + o.max / 2 +
			    (o.min % 2 + o.max % 2) / 2);
		fputs(" us one way (", out);
		print_ns_us(out, o.min);
		fputs(" .. ", out);
		print_ns_us(out, o.max);
		fputs(" us)", out);
	} else if (o.has_min) {
		fputs("at least ", out);
		print_ns_us(out, o.min);
		fprintf(out, " us one way (clocks only bounded: no packet %s -> %s)",
			to, from);
	} else if (o.has_max) {
		fputs("at most ", out);
		print_ns_us(out, o.max);
		fprintf(out, " us one way (clocks only bounded: no packet %s -> %s)",
			from, to);
	} else {
		fputs("one-way time unknown (no packet matched one to one to set the clocks)",
		      out);
	}
	fprintf(out, ", matched by %s%s%s\n", tier_names[l->tier],
		l->sure ? "" : ", one of copies paired by time",
		o.consistent ? "" : ", CLOCKS INCONSISTENT");
}

static void json_opt(FILE *out, const char *key, bool have, uint64_t v)
{
	if (have)
		fprintf(out, "\"%s\": %" PRIu64, key, v);
	else
		fprintf(out, "\"%s\": null", key);
}

static void json_sopt(FILE *out, const char *key, bool have, int64_t v)
{
	if (have)
		fprintf(out, "\"%s\": %" PRId64, key, v);
	else
		fprintf(out, "\"%s\": null", key);
}

static void print_hop_json(struct pf_merge *m, FILE *out,
			   const struct mlink *l)
{
	const struct mlp *f = &m->lps[l->from], *t = &m->lps[l->to];
	struct oneway o;

	one_way(m, l, &o);
	fputs("{\"from\": ", out);
	json_name(out, m->machines[f->machine].name);
	fprintf(out, ", \"from_id\": %" PRIu64 ", \"from_stage\": \"%s\", \"to\": ",
		m->recs[f->out].id, stage_names[m->recs[f->out].stage]);
	json_name(out, m->machines[t->machine].name);
	fprintf(out, ", \"to_id\": %" PRIu64 ", \"to_stage\": \"%s\", \"match\": \"%s\", \"sure\": %s, ",
		m->recs[t->in].id, stage_names[m->recs[t->in].stage],
		tier_names[l->tier], l->sure ? "true" : "false");
	json_opt(out, "one_way_ns", o.has_min && o.has_max,
		 o.min / 2 + o.max / 2 + (o.min % 2 + o.max % 2) / 2);
	fputs(", ", out);
	json_opt(out, "one_way_min_ns", o.has_min, o.min);
	fputs(", ", out);
	json_opt(out, "one_way_max_ns", o.has_max, o.max);
	fputs(", ", out);
	json_sopt(out, "offset_ns", o.d.has_lo && o.d.has_hi,
		  o.d.lo / 2 + o.d.hi / 2 + (o.d.lo % 2 + o.d.hi % 2) / 2);
	fputs(", ", out);
	json_sopt(out, "offset_min_ns", o.d.has_lo, o.d.lo);
	fputs(", ", out);
	json_sopt(out, "offset_max_ns", o.d.has_hi, o.d.hi);
	fprintf(out, ", \"clocks_consistent\": %s}",
		o.consistent ? "true" : "false");
}

static int write_journey_hops(struct pf_merge *m, FILE *out,
			      const uint32_t *j, size_t n,
			      const uint32_t *hops, size_t nh, uint64_t num);

static const char *alone_why(const struct pf_merge *m, const struct mlp *lp)
{
	if (lp->in == NONE && lp->out == NONE)
		return m->recs[lp->first].have ? "neither sent nor received (no rx, l4 or tx graph)" :
		       "its events carry no bytes to match (a module older than version 6) or no IP header";
	return "seen on no other machine";
}

static int cmp_hop(const void *pa, const void *pb)
{
	const struct mlink *a = &sort_m->links[*(const uint32_t *)pa];
	const struct mlink *b = &sort_m->links[*(const uint32_t *)pb];
	uint32_t af = sort_m->lps[a->from].pos, at = sort_m->lps[a->to].pos;
	uint32_t bf = sort_m->lps[b->from].pos, bt = sort_m->lps[b->to].pos;
	/* The hops between neighbours first, then the longer ones. */
	uint32_t as = at > af ? at - af : af - at + 1000000;
	uint32_t bs = bt > bf ? bt - bf : bf - bt + 1000000;

	return cmp_u64(as, bs) ?: cmp_u64(af, bf) ?: cmp_u64(at, bt);
}

/* The journey's links, into *@hops (by cmp_hop): how many, or -ENOMEM. */
static ssize_t journey_hops(struct pf_merge *m, const uint32_t *lorder,
			    const uint32_t *j, size_t n, uint32_t **hops)
{
	size_t i, e, end, nh = 0;

	for (i = 0; i < n; i++) {
		links_from(m, lorder, j[i], &end);
		nh += end - links_from(m, lorder, j[i], &end);
	}
	*hops = malloc((nh + 1) * sizeof(**hops));
	if (!*hops)
		return -ENOMEM;
	nh = 0;
	for (i = 0; i < n; i++)
		for (e = links_from(m, lorder, j[i], &end); e < end; e++)
			(*hops)[nh++] = lorder[e];
	qsort(*hops, nh, sizeof(**hops), cmp_hop);
	return (ssize_t)nh;
}

static int write_journey(struct pf_merge *m, FILE *out, const uint32_t *lorder,
			 uint32_t *j, size_t n, uint64_t num)
{
	uint32_t *hops;
	ssize_t nh;
	int err;

	err = order_journey(m, lorder, j, n);
	if (err)
		return err;
	nh = journey_hops(m, lorder, j, n, &hops);
	if (nh < 0)
		return (int)nh;
	err = write_journey_hops(m, out, j, n, hops, (size_t)nh, num);
	free(hops);
	return err;
}

/*
 * pcapng: each graph's bytes a frame on its machine's and stage's
 * interface, its time on the first machine's clock where the offset to
 * it is known both ways, its packet_id the journey's number.
 */
static int write_journey_pcapng(struct pf_merge *m, const uint32_t *j,
				size_t n, uint64_t num)
{
	unsigned char *buf = NULL;
	char name[320], comment[512];
	size_t i, k;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		const struct mlp *lp = &m->lps[j[i]];
		uint32_t mi = lp->machine;

		for (k = lp->first; k < lp->first + lp->n && !err; k++) {
			const struct mrec *r = &m->recs[k];
			int64_t *ifid = &m->ifid[mi][r->stage];
			uint64_t ts = r->rt;

			if (!r->body_len)
				continue;
			if (*ifid < 0) {
				snprintf(name, sizeof(name), "%s %s",
					 m->machines[mi].name,
					 stage_names[r->stage]);
				*ifid = pf_pcapng_interface(m->pw, name,
					m->corrected[mi] ?
					"times on the first machine's clock" :
					"times on this machine's own clock");
				if (*ifid < 0) {
					err = (int)*ifid;
					break;
				}
			}
			free(buf);
			buf = malloc(r->body_len);
			if (!buf) {
				err = -ENOMEM;
				break;
			}
			err = spill_read(m, r->off, r->body_len, buf);
			if (err)
				break;
			if (m->corrected[mi])
				ts = m->corr[mi] < 0 ?
				     ts + (uint64_t)0 - (uint64_t)m->corr[mi] :
				     ts - (uint64_t)m->corr[mi];
			snprintf(comment, sizeof(comment),
				 "pktfilt journey=%" PRIu64 " machine=%s id=%"
				 PRIu64 " seq=%" PRIu64 " stage=%s%s", num,
				 m->machines[mi].name, r->id, r->seq,
				 stage_names[r->stage],
				 n == 1 ? " alone" : "");
			err = pf_pcapng_frame(m->pw, (uint32_t)*ifid, ts, buf,
					      r->body_len,
					      r->len > r->body_len ? r->len :
					      r->body_len,
					      r->stage == ST_TX, num, comment);
		}
	}
	free(buf);
	return err;
}

/* @n bytes of text, HTML-escaped (invalid UTF-8 as U+FFFD). */
static void html_text(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t k;

	while (n) {
		switch (*p) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			if (*p < 0x80) {
				if (*p >= 0x20 || *p == '\n' || *p == '\t')
					fputc(*p, out);
				break;
			}
			k = pf_utf8_len(p, n);
			if (!k) {
				fputs("\xef\xbf\xbd", out);
				break;
			}
			fwrite(p, 1, k, out);
			p += k;
			n -= k;
			continue;
		}
		p++;
		n--;
	}
}

static void html_str(FILE *out, const char *s)
{
	html_text(out, s, strlen(s));
}

static void print_hop_html(struct pf_merge *m, FILE *out,
			   const struct mlink *l)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	print_hop_text(m, f, l);
	fclose(f);
	/* "# A tx -> B rx: ...\n" without its "# " and newline */
	if (buf && len > 3)
		html_text(out, buf + 2, len - 3);
	free(buf);
}

static const char html_head[] =
"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
"<title>pktfilt merge</title>\n<style>\n"
"body { font-family: sans-serif; margin: 1em; }\n"
"table { border-collapse: collapse; }\n"
"td, th { border: 1px solid #ccc; vertical-align: top; padding: 4px; }\n"
"th { background: #eee; position: sticky; top: 0; }\n"
"td.j { max-width: 28em; font-size: 90%; }\n"
"td.alone { background: #fff6e0; }\n"
"pre { font-size: 80%; margin: 0; max-height: 40em; overflow: auto; }\n"
"summary { cursor: pointer; font-family: monospace; font-size: 85%; }\n"
"span.n { font-weight: bold; color: #06c; }\n"
"ul { margin: 0; padding-left: 1.2em; }\n"
"</style></head><body>\n<h1>pktfilt merge</h1>\n";

static void html_begin(struct pf_merge *m, FILE *out)
{
	size_t a;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fputs(html_head, out);
	if (f) {
		print_clocks(m, f);
		fclose(f);
		fputs("<pre>", out);
		if (buf)
			html_text(out, buf, len);
		fputs("</pre>\n", out);
		free(buf);
	}
	fputs("<table>\n<tr><th>journey</th>", out);
	for (a = 0; a < m->nmachines; a++) {
		fputs("<th>", out);
		html_str(out, m->machines[a].name);
		fputs("</th>", out);
	}
	fputs("</tr>\n", out);
}

static void html_end(FILE *out)
{
	fputs("</table>\n</body></html>\n", out);
}

/*
 * A row: the journey (its packet, its hops), then a lane per machine
 * with its graphs of the packet, numbered in the order it crossed them.
 */
static int write_journey_html(struct pf_merge *m, FILE *out,
			      const uint32_t *j, size_t n,
			      const uint32_t *hops, size_t nh, uint64_t num,
			      const struct mrec *sum)
{
	char *buf = NULL;
	size_t i, k, e, a;
	int err = 0;

	fprintf(out, "<tr id=\"j%" PRIu64 "\"><td class=\"j%s\"><b>journey %"
		PRIu64 "</b><br>", num, n == 1 ? " alone" : "", num);
	if (sum) {
		buf = malloc(sum->sum_len + 1);
		if (!buf)
			return -ENOMEM;
		err = spill_read(m, sum->off, sum->sum_len, buf);
		if (err) {
			free(buf);
			return err;
		}
		html_text(out, buf, sum->sum_len);
		free(buf);
		buf = NULL;
	}
	if (n == 1) {
		fputs("<br><i>", out);
		html_str(out, alone_why(m, &m->lps[j[0]]));
		fputs("</i>", out);
	}
	fputs("<ul>", out);
	for (e = 0; e < nh; e++) {
		fputs("<li>", out);
		print_hop_html(m, out, &m->links[hops[e]]);
		fputs("</li>", out);
	}
	fputs("</ul></td>", out);
	for (a = 0; a < m->nmachines && !err; a++) {
		fputs("<td>", out);
		for (i = 0; i < n && !err; i++) {
			const struct mlp *lp = &m->lps[j[i]];

			if (lp->machine != a)
				continue;
			for (k = lp->first; k < lp->first + lp->n && !err;
			     k++) {
				const struct mrec *r = &m->recs[k];
				const char *nl;

				free(buf);
				buf = malloc((size_t)r->body_len + 1);
				if (!buf) {
					err = -ENOMEM;
					break;
				}
				err = spill_read(m, r->off + r->sum_len,
						 r->body_len, buf);
				if (err)
					break;
				buf[r->body_len] = '\0';
				/* Its header line the summary, the rest inside. */
				nl = memchr(buf, '\n', r->body_len);
				if (!nl)
					nl = buf + r->body_len;
				fprintf(out, "<details><summary><span class=\"n\">%zu.</span> ",
					i + 1);
				html_text(out, buf, (size_t)(nl - buf));
				fputs("</summary><pre>", out);
				if (nl < buf + r->body_len)
					html_text(out, nl + 1, (size_t)(buf +
						  r->body_len - nl - 1));
				fputs("</pre></details>", out);
			}
		}
		fputs("</td>", out);
	}
	free(buf);
	fputs("</tr>\n", out);
	return err ? err : ferror(out) ? -EIO : 0;
}

static int write_journey_hops(struct pf_merge *m, FILE *out,
			      const uint32_t *j, size_t n,
			      const uint32_t *hops, size_t nh, uint64_t num)
{
	const struct mrec *sum;
	size_t i, k, e;
	int err = 0;

	if (m->fmt == PF_MERGE_PCAPNG) {
		m->stats.journeys++;
		if (n == 1)
			m->stats.alone++;
		return write_journey_pcapng(m, j, n, num);
	}
	sum = journey_summary(m, j, n);
	m->stats.journeys++;
	if (n == 1)
		m->stats.alone++;
	if (m->fmt == PF_MERGE_HTML)
		return write_journey_html(m, out, j, n, hops, nh, num, sum);
	if (m->fmt == PF_MERGE_TEXT) {
		fprintf(out, "\n# journey %" PRIu64 ": ", num);
		if (sum)
			err = spill_copy(m, sum->off, sum->sum_len, out);
		else
			fputs("no IP header", out);
		if (err)
			return err;
		fputs("\n# ", out);
		for (i = 0; i < n; i++)
			fprintf(out, "%s%s", i ? " -> " : "",
				m->machines[m->lps[j[i]].machine].name);
		if (n == 1)
			fprintf(out, " only: %s", alone_why(m, &m->lps[j[0]]));
		fputc('\n', out);
		for (e = 0; e < nh; e++)
			print_hop_text(m, out, &m->links[hops[e]]);
		for (i = 0; i < n; i++) {
			const struct mlp *lp = &m->lps[j[i]];

			fprintf(out, "## %s: packet id %" PRIu64 "\n",
				m->machines[lp->machine].name,
				m->recs[lp->first].id);
			for (k = lp->first; k < lp->first + lp->n; k++) {
				err = spill_copy(m, m->recs[k].off +
						 m->recs[k].sum_len,
						 m->recs[k].body_len, out);
				if (err)
					return err;
			}
		}
		return ferror(out) ? -EIO : 0;
	}
	fprintf(out, "{\"journey\": %" PRIu64 ", \"packet\": ", num);
	if (sum)
		err = spill_copy(m, sum->off, sum->sum_len, out);
	else
		fputs("null", out);
	if (err)
		return err;
	fputs(", \"machines\": [", out);
	for (i = 0; i < n; i++) {
		fputs(i ? ", " : "", out);
		json_name(out, m->machines[m->lps[j[i]].machine].name);
	}
	fprintf(out, "], \"alone\": %s, \"why_alone\": ",
		n == 1 ? "true" : "false");
	if (n == 1)
		json_name(out, alone_why(m, &m->lps[j[0]]));
	else
		fputs("null", out);
	fputs(", \"hops\": [", out);
	for (e = 0; e < nh; e++) {
		fputs(e ? ", " : "", out);
		print_hop_json(m, out, &m->links[hops[e]]);
	}
	fputs("], \"packets\": [", out);
	for (i = 0; i < n; i++) {
		const struct mlp *lp = &m->lps[j[i]];

		fputs(i ? ", {\"machine\": " : "{\"machine\": ", out);
		json_name(out, m->machines[lp->machine].name);
		fprintf(out, ", \"id\": %" PRIu64 ", \"graphs\": [",
			m->recs[lp->first].id);
		for (k = lp->first; k < lp->first + lp->n; k++) {
			fputs(k > lp->first ? ", " : "", out);
			err = spill_copy(m, m->recs[k].off + m->recs[k].sum_len,
					 m->recs[k].body_len, out);
			if (err)
				return err;
		}
		fputs("]}", out);
	}
	fputs("]}\n", out);
	return ferror(out) ? -EIO : 0;
}

int pf_merge_write(struct pf_merge *m, FILE *out)
{
	uint32_t *order = NULL, *lorder = NULL, *rank = NULL;
	uint64_t num = 0;
	size_t i, k;
	int err;

	err = match(m);
	if (err)
		return err;
	if (m->spill && fflush(m->spill))
		return -errno;
	order = malloc((m->nlps + 1) * sizeof(*order));
	lorder = malloc((m->nlinks + 1) * sizeof(*lorder));
	rank = malloc((m->nlps + 1) * sizeof(*rank));
	if (!order || !lorder || !rank) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < m->nlps; i++) {
		m->lps[i].parent = find(m, (uint32_t)i);
		order[i] = (uint32_t)i;
	}
	for (i = 0; i < m->nlinks; i++)
		lorder[i] = (uint32_t)i;
	sort_m = m;
	qsort(order, m->nlps, sizeof(*order), cmp_lp_by_root);
	qsort(lorder, m->nlinks, sizeof(*lorder), cmp_link_from);
	/* rank[root]: where its journey's packets start in order. */
	for (i = 0; i < m->nlps; i++)
		if (!i || m->lps[order[i]].parent !=
			  m->lps[order[i - 1]].parent)
			rank[m->lps[order[i]].parent] = (uint32_t)i;
	if (m->fmt == PF_MERGE_TEXT)
		print_clocks(m, out);
	if (m->fmt == PF_MERGE_HTML)
		html_begin(m, out);
	if (m->fmt == PF_MERGE_PCAPNG) {
		m->pw = pf_pcapng_new(out, NULL);
		if (!m->pw) {
			err = -errno;
			goto out;
		}
		memset(m->ifid, 0xff, sizeof(m->ifid));	/* -1: none yet */
		m->corrected[0] = true;		/* the reference */
		for (i = 1; i < m->nmachines; i++) {
			const struct pf_merge_clock *c = &m->clocks[i];

			/* t_0 = t_i - (clock i - clock 0) */
			m->corrected[i] = c->has_lo && c->has_hi;
			m->corr[i] = c->lo / 2 + c->hi / 2 +
				     (c->lo % 2 + c->hi % 2) / 2;
		}
	}
	/*
	 * The journeys in the order of their packets' first graphs, machine
	 * by machine: each when its first packet comes (lps are by machine
	 * and id; by seq below).
	 */
	{
		uint32_t *by_seq = malloc((m->nlps + 1) * sizeof(*by_seq));
		uint32_t *buf = malloc((m->nlps + 1) * sizeof(*buf));
		bool *done = calloc(m->nlps + 1, sizeof(*done));

		if (!by_seq || !buf || !done) {
			free(by_seq);
			free(buf);
			free(done);
			err = -ENOMEM;
			goto out;
		}
		for (i = 0; i < m->nlps; i++)
			by_seq[i] = (uint32_t)i;
		qsort(by_seq, m->nlps, sizeof(*by_seq), cmp_lp_first);
		for (i = 0; i < m->nlps && !err; i++) {
			uint32_t root = m->lps[by_seq[i]].parent;
			size_t start = rank[root], n;

			if (done[root])
				continue;
			done[root] = true;
			for (k = start; k < m->nlps &&
			     m->lps[order[k]].parent == root; k++)
				;
			n = k - start;
			memcpy(buf, order + start, n * sizeof(*buf));
			err = write_journey(m, out, lorder, buf, n, ++num);
		}
		free(by_seq);
		free(buf);
		free(done);
	}
	if (!err && m->fmt == PF_MERGE_HTML)
		html_end(out);
	if (!err && (fflush(out) || ferror(out)))
		err = errno ? -errno : -EIO;
out:
	pf_pcapng_free(m->pw);
	m->pw = NULL;
	free(order);
	free(lorder);
	free(rank);
	return err;
}

/* --- pktfilt merge ------------------------------------------------------------ */

const char pf_merge_synopsis[] =
"pktfilt merge [--format text|json|html|pcapng] [--name FILE=NAME]...\n"
"                  [-o FILE] TRACEFILE TRACEFILE...";

const char pf_merge_help[] =
"    pktfilt merge [--format text|json|html|pcapng] [--name FILE=NAME]...\n"
"                  [-o FILE] TRACEFILE TRACEFILE...\n"
"        Follow packets across machines: join the traces of several\n"
"        machines (each saved as for report, one a machine: a client, a\n"
"        router, a server) into journeys. A journey is one packet: each\n"
"        machine's graphs of it (all its stages there, under that\n"
"        machine's packet id), the machines in the order it crossed\n"
"        them, and the one-way time of each hop. Needs events with the\n"
"        packet's bytes and wall-clock time (module version 6): trace\n"
"        the sending machine at tx and the receiving one at rx (e.g.\n"
"        trace with --at rx,tx on every machine). Works offline, as\n"
"        report.\n"
"\n"
"        Matching. A packet sent by one machine (its last tx graph, or a\n"
"        router's rx graph that forwarded it, one that calls ip_forward\n"
"        or ip6_forward: a forwarded packet passes no tx stage) is the\n"
"        packet received (its first rx, else l4 graph) by another when\n"
"        their first bytes agree on what survives the wire: IP version,\n"
"        addresses, protocol, IPv4 identification or IPv6 fragment id,\n"
"        fragment offset and more-fragments flag, length, IPv6 flow\n"
"        label, TCP ports, sequence and acknowledgment numbers and flags,\n"
"        UDP ports, ICMP type, code, id and sequence, the payload's\n"
"        length and its first 16 bytes (match \"bytes\"); else through NAT,\n"
"        on the same without addresses, ports and ICMP id (match \"nat\");\n"
"        else, where one side's bytes end before the transport header (a\n"
"        short --snaplen), on the IP header alone (match \"ip\"). TTL,\n"
"        checksums and TOS are not compared, but a link only goes the way\n"
"        the TTL (hop limit) falls: it must come with at most the TTL it\n"
"        left with (a router's, its rx graph's less one), which tells the\n"
"        way between two machines that both forward the packet. A request\n"
"        and its reply, SYN, SYN-ACK and ACK, and each fragment are\n"
"        distinct packets. One packet is linked to at most one packet of\n"
"        each other machine each way; where several packets of a machine\n"
"        share the same bytes (a retransmission, a duplicate), each copy\n"
"        received is linked to the latest copy sent before it, in order,\n"
"        and a copy left over is a journey of its own. A packet seen on\n"
"        one machine only is a journey of one, which says so. A packet a\n"
"        machine sends while it receives a traced one (an ACK, an echo\n"
"        reply or a SYN-ACK sent from the receive) is part of that\n"
"        packet's graph there, not a packet of its own (no event, no\n"
"        bytes): on the machine that receives it, it is such a journey.\n"
"        Segments that GSO or GRO merged or split (TSO, GRO on virtio or\n"
"        veth) do not match: turn the offloads off (ethtool -K DEV tso\n"
"        off gso off gro off) to follow TCP segment by segment.\n"
"\n"
"        Clocks. Each event carries its machine's wall clock (rt_ns). A\n"
"        received packet that a lazy trace held while it armed counts\n"
"        from when it came: rt_ns less held_ns (its event is written at\n"
"        the replay). For each pair of machines A, B the offset\n"
"        clock B - clock A is estimated from the packets matched one to\n"
"        one: a packet A -> B took t_B - t_A - offset >= 0, so the offset\n"
"        is at most the least t_B - t_A; a packet B -> A bounds it from\n"
"        below by the greatest t_B - t_A (the convex-hull method of Trace\n"
"        Compass, with a constant offset). The estimate is the middle of\n"
"        that interval; each hop's one-way time is shown as its estimate\n"
"        and interval, never negative. With packets one way only the\n"
"        offset has one bound, and one-way times only a lower bound (or\n"
"        upper): said so. Bounds that cross (clocks drifting apart over a\n"
"        long trace, or a wrong match) are flagged INCONSISTENT.\n"
"\n"
"        Memory. Of each graph only its ids, time and match keys stay\n"
"        in memory (about 160 bytes at the peak, while matching); its\n"
"        rendering is written to a temporary file (in $TMPDIR, else\n"
"        /tmp, deleted at once; as big as the output) and read back,\n"
"        one graph at a time, when its journey is written. So memory\n"
"        grows with the number of graphs, not their size: 400,000\n"
"        graphs (480 MB of traces) take 65 MB.\n"
"\n"
"        --format text|json|html|pcapng\n"
"            text (the default): a line naming the machines, one per\n"
"            pair of machines with its clock offset,\n"
"              # clock B - clock A: +OFFSET us (in +LO us .. +HI us)\n"
"                [N A -> B, M B -> A]\n"
"            (on one line), then for each journey, after an empty line,\n"
"              # journey N: PACKET\n"
"              # MACHINE -> MACHINE ...\n"
"            (PACKET: protocol, addresses and ports, TCP flags, sequence\n"
"            and ack, ICMP type, code, id and seq, IP id, length; a\n"
"            journey of one says \"MACHINE only: WHY\"), one line per hop,\n"
"              # A tx -> B rx: T us one way (MIN .. MAX us), matched by\n"
"                bytes|nat|ip\n"
"            and for each machine \"## MACHINE: packet id ID\" and its\n"
"            graphs as report prints them.\n"
"            json: JSON Lines, one object per journey: journey (its\n"
"            number), packet (the fields matched: version, proto, saddr,\n"
"            daddr, sport, dport, ip_id, flow_label, frag_offset,\n"
"            more_fragments, length, payload_length, tcp_seq, tcp_ack,\n"
"            tcp_flags, icmp_type, icmp_code, icmp_id, icmp_seq; null\n"
"            where not), machines (in order), alone, why_alone, hops\n"
"            ([{from, from_id, from_stage, to, to_id, to_stage, match,\n"
"            sure, one_way_ns, one_way_min_ns, one_way_max_ns, offset_ns,\n"
"            offset_min_ns, offset_max_ns, clocks_consistent}, ...]: null\n"
"            where not known) and packets ([{machine, id, graphs: [the\n"
"            objects of report --format json, ...]}, ...]).\n"
"            html: one self-contained page (no script, nothing fetched),\n"
"            the clocks, then a table with a row per journey and a lane\n"
"            (column) per machine: the journey's packet and hops, then\n"
"            in each machine's lane its graphs of the packet, numbered in\n"
"            the order the packet crossed the machines, each opening to\n"
"            its lines as text prints them.\n"
"            pcapng: the graphs' bytes, for Wireshark (binary: with -o\n"
"            FILE, or standard output redirected), as report's pcapng but\n"
"            one interface per machine and stage (named \"MACHINE STAGE\"),\n"
"            the frames journey by journey, frame.packet_id the journey's\n"
"            number, frame.comment \"pktfilt journey=N machine=MACHINE\n"
"            id=ID seq=SEQ stage=STAGE\" (and \"alone\"), the times on\n"
"            the first machine's clock where the offset to it is known\n"
"            both ways (the interface's description says which clock).\n"
"\n"
"        --name FILE=NAME\n"
"            Call the machine of TRACEFILE FILE NAME (its file name as\n"
"            given otherwise; the last = splits). Names are distinct.\n"
"\n"
"        -o FILE, --output FILE\n"
"            Write to FILE, not standard output.\n"
"\n"
"        Exit status 1 also when any graph is incomplete or a trace\n"
"        lost events (as report); the counts go to standard error.\n";

const char pf_merge_examples[] =
"    One packet from a client through a router to a server: trace each\n"
"    machine (the same filter on all three), then merge:\n"
"        pktfilt trace -q --at rx,tx --proto udp --dport 9000 --raw client.trace\n"
"        pktfilt merge --name client.trace=client --name router.trace=router \\\n"
"            --name server.trace=server client.trace router.trace server.trace\n"
"        pktfilt merge --format json client.trace server.trace | jq '.hops[]'\n"
"        pktfilt merge --format pcapng -o journeys.pcapng client.trace server.trace\n";

struct merge_opts {
	const char *format, *output;
	const char *files[PF_MERGE_MAX_MACHINES];
	const char *names[PF_MERGE_MAX_MACHINES];
	size_t nfiles;
	const char *name_args[PF_MERGE_MAX_MACHINES];
	size_t nname_args;
};

static int merge_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "pktfilt: merge: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\ntry 'pktfilt merge --help'\n");
	return EXIT_USAGE;
}

/* --NAME VALUE, --NAME=VALUE (or @shortname VALUE): 1, 0, or usage. */
static int merge_opt(const char *name, const char *shortname, int argc,
		     char **argv, int *i, const char **val)
{
	const char *arg = argv[*i];
	size_t len = strlen(name);

	if (!strncmp(arg, name, len) && arg[len] == '=') {
		*val = arg + len + 1;
		return 1;
	}
	if (strcmp(arg, name) && (!shortname || strcmp(arg, shortname)))
		return 0;
	if (*i + 1 >= argc)
		return merge_usage("%s needs a value", arg);
	*val = argv[++*i];
	return 1;
}

static int merge_args(int argc, char **argv, struct merge_opts *o)
{
	bool dashdash = false, std = false;
	const char *v;
	size_t a, b;
	int i, r;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < argc; i++) {
		const char *arg = argv[i];

		if (!dashdash && arg[0] == '-' && arg[1]) {
			if (!strcmp(arg, "--")) {
				dashdash = true;
				continue;
			}
			v = NULL;
			r = merge_opt("--format", NULL, argc, argv, &i, &v);
			if (r == 1) {
				if (o->format)
					return merge_usage("%s given twice",
							   "--format");
				o->format = v;
				continue;
			}
			if (!r)
				r = merge_opt("--output", "-o", argc, argv, &i,
					      &v);
			if (r == 1 && v && !o->output) {
				o->output = v;
				continue;
			}
			if (r == 1)
				return merge_usage("%s given twice", "--output");
			if (!r)
				r = merge_opt("--name", NULL, argc, argv, &i,
					      &v);
			if (r == 1) {
				if (o->nname_args == PF_MERGE_MAX_MACHINES)
					return merge_usage("%s", "too many --name");
				o->name_args[o->nname_args++] = v;
				continue;
			}
			if (r)
				return r;
			return merge_usage("unknown option '%s'", arg);
		}
		if (o->nfiles == PF_MERGE_MAX_MACHINES)
			return merge_usage("more than %s TRACEFILEs", "64");
		if (!strcmp(arg, "-")) {
			if (std)
				return merge_usage("%s", "- (standard input) given twice");
			std = true;
		}
		o->files[o->nfiles] = arg;
		o->names[o->nfiles++] = arg;
	}
	if (o->nfiles < 2)
		return merge_usage("%s", "give two TRACEFILEs or more, one a machine");
	if (o->format && strcmp(o->format, "text") &&
	    strcmp(o->format, "json") && strcmp(o->format, "pcapng") &&
	    strcmp(o->format, "html"))
		return merge_usage("unknown --format '%s': text, json, html or pcapng",
				   o->format);
	if (o->format && !strcmp(o->format, "pcapng") &&
	    (!o->output || !strcmp(o->output, "-")) && isatty(STDOUT_FILENO))
		return merge_usage("%s", "--format pcapng is binary: give -o FILE or redirect standard output");
	if (o->output && !o->output[0])
		return merge_usage("%s", "--output needs a file name");
	for (a = 0; a < o->nname_args; a++) {
		const char *s = o->name_args[a], *eq = strrchr(s, '=');
		bool found = false;

		if (!eq || eq == s || !eq[1])
			return merge_usage("--name '%s': FILE=NAME", s);
		for (b = 0; b < o->nfiles; b++) {
			if (strlen(o->files[b]) == (size_t)(eq - s) &&
			    !strncmp(o->files[b], s, (size_t)(eq - s))) {
				o->names[b] = eq + 1;
				found = true;
			}
		}
		if (!found)
			return merge_usage("--name '%s': no such TRACEFILE given",
					   s);
	}
	for (a = 0; a < o->nfiles; a++)
		for (b = a + 1; b < o->nfiles; b++)
			if (!strcmp(o->names[a], o->names[b]))
				return merge_usage("two machines named '%s': give --name FILE=NAME",
						   o->names[a]);
	return EXIT_OK;
}

static int merge_read(struct pf_merge *m, const char *path, const char *name)
{
	static char buf[1 << 20];
	bool std = !strcmp(path, "-");
	FILE *in = std ? stdin : fopen(path, "r");
	size_t n;
	int err;

	if (!in) {
		fprintf(stderr, "pktfilt: merge: cannot read %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	err = pf_merge_begin(m, name);
	while (!err && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		err = pf_merge_feed(m, buf, n);
	if (!err && ferror(in))
		err = errno ? -errno : -EIO;
	if (m->parser) {
		int e = pf_merge_end(m);

		if (!err)
			err = e;
	}
	if (!std)
		fclose(in);
	if (err)
		fprintf(stderr, "pktfilt: merge: reading %s: %s\n",
			std ? "standard input" : path, strerror(-err));
	return err ? -1 : 0;
}

int pf_merge_run(const struct pf_cmd *cmd, int argc, char **argv)
{
	struct merge_opts o;
	const struct pf_merge_stats *st;
	struct pf_merge *m;
	FILE *out;
	size_t i;
	int ret, err;

	(void)cmd;
	ret = merge_args(argc, argv, &o);
	if (ret)
		return ret;
	m = pf_merge_new(!o.format || !strcmp(o.format, "text") ?
			 PF_MERGE_TEXT : !strcmp(o.format, "json") ?
			 PF_MERGE_JSON : !strcmp(o.format, "html") ?
			 PF_MERGE_HTML : PF_MERGE_PCAPNG, false);
	if (!m) {
		fprintf(stderr, "pktfilt: merge: temporary file: %s\n",
			strerror(errno));
		return EXIT_RUNTIME;
	}
	for (i = 0; i < o.nfiles; i++) {
		if (merge_read(m, o.files[i], o.names[i])) {
			pf_merge_free(m);
			return EXIT_RUNTIME;
		}
	}
	out = o.output && strcmp(o.output, "-") ? fopen(o.output, "w") : stdout;
	if (!out) {
		fprintf(stderr, "pktfilt: merge: cannot write %s: %s\n",
			o.output, strerror(errno));
		pf_merge_free(m);
		return EXIT_RUNTIME;
	}
	err = pf_merge_write(m, out);
	if (out != stdout && fclose(out) && !err)
		err = errno ? -errno : -EIO;
	if (err) {
		fprintf(stderr, "pktfilt: merge: %s\n", strerror(-err));
		ret = EXIT_RUNTIME;
	}
	st = pf_merge_stats(m);
	fprintf(stderr, "pktfilt: merge: %" PRIu64 " packets of %zu machines in %"
		PRIu64 " journeys, %" PRIu64 " across machines, %" PRIu64
		" on one machine only", st->packets, o.nfiles, st->journeys,
		st->journeys - st->alone, st->alone);
	if (st->keyless)
		fprintf(stderr, " (%" PRIu64 " without bytes to match)",
			st->keyless);
	fputc('\n', stderr);
	if (st->packets && st->keyless == st->packets)
		fprintf(stderr, "pktfilt: merge: no event carries the packet's bytes: trace with a module of version 6 or later\n");
	else if (st->packets && !st->links && !st->tx)
		fprintf(stderr, "pktfilt: merge: no packet was traced at tx: trace the sending machine with --at tx (--at rx,tx both ways)\n");
	if (st->incomplete || st->lost) {
		fprintf(stderr, "pktfilt: merge: %" PRIu64 " of %" PRIu64
			" graphs incomplete%s\n", st->incomplete, st->graphs,
			st->lost ? ", events lost" : "");
		ret = EXIT_RUNTIME;
	}
	pf_merge_free(m);
	return ret;
}
