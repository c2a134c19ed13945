// SPDX-License-Identifier: GPL-2.0
/*
 * "pktfilt trace", steps 5 and 6: the graphs closed, the trace read into a
 * temporary file, the packets the module announced checked off in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "fgraph.h"
#include "nft_rules.h"
#include "tracefs.h"
#include "trace_run.h"

#define PF_CLOSE_WAIT_MS	2000	/* for graphs to close */

static int seq_key_cmp(const void *a, const void *b)
{
	const struct seq_key *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int seq_check_init(struct seq_check *c, const struct trace_run *r)
{
	size_t i;

	c->n = r->nseen;
	c->keys = malloc((c->n ? c->n : 1) * sizeof(*c->keys));
	c->found = calloc(c->n ? c->n : 1, 1);
	if (!c->keys || !c->found)
		return -ENOMEM;
	for (i = 0; i < c->n; i++) {
		c->keys[i].seq = r->seqs[i];
		c->keys[i].i = i;
	}
	qsort(c->keys, c->n, sizeof(*c->keys), seq_key_cmp);
	return 0;
}

void seq_check_free(struct seq_check *c)
{
	free(c->keys);
	free(c->found);
}

void seq_check_packet(struct seq_check *c, const struct pf_packet *pkt)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->keys[mid].seq < pkt->seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < c->n && c->keys[lo].seq == pkt->seq; lo++)
		if (c->found[c->keys[lo].i] == SEQ_MISSING)
			c->found[c->keys[lo].i] = pkt->complete ?
						  SEQ_COMPLETE : SEQ_INCOMPLETE;
}

/* Is every packet the module announced in the trace, its graph closed? */
static bool all_closed(const struct seq_check *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->found[i] != SEQ_COMPLETE)
			return false;
	return true;
}

static int on_collect(void *arg, const struct pf_packet *pkt)
{
	seq_check_packet(arg, pkt);
	return 0;
}

/* The chunks the trace is read in: memory does not grow with the trace. */
#define PF_READ_CHUNK	(1U << 16)

/*
 * Read all of @fd in chunks, each copied to @copy (if not -1) and fed to
 * @p (if not NULL). 0, or -errno: *@reading tells whether reading @fd
 * failed (else writing @copy, or the parser).
 */
int trace_read_chunks(int fd, int copy, struct pf_fgraph *p, bool *reading)
{
	static char buf[PF_READ_CHUNK];
	int err;

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		*reading = true;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		*reading = false;
		if (copy >= 0) {
			err = pf_write_full(copy, buf, (size_t)n);
			if (err)
				return err;
		}
		if (p) {
			err = pf_fgraph_feed(p, buf, (size_t)n);
			if (err)
				return err;
		}
	}
}

/*
 * Read tracefs's trace once, in chunks, into r->saved (emptied first) and,
 * if @c, through the streaming parser, which tells @c which announced
 * packets are there and complete. Memory holds a chunk and the packets
 * still open, not the trace. 0, or -errno with r->tfs.err set.
 */
static int read_trace(struct trace_run *r, struct seq_check *c)
{
	int save = fileno(r->saved), fd, err = 0, n;
	struct pf_fgraph *p = NULL;
	struct pf_trace *t;
	char path[sizeof(r->tfs.root) + 16];
	bool reading = false;

	if (ftruncate(save, 0) || lseek(save, 0, SEEK_SET) < 0) {
		err = -errno;
		snprintf(r->tfs.err, sizeof(r->tfs.err),
			 "cannot save the trace: %s", strerror(-err));
		return err;
	}
	if (c) {
		memset(c->found, 0, c->n);
		p = pf_fgraph_new_stream(on_collect, c);
		if (!p) {
			snprintf(r->tfs.err, sizeof(r->tfs.err), "out of memory");
			return -ENOMEM;
		}
	}
	n = snprintf(path, sizeof(path), "%s/trace", r->tfs.root);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		err = -ENAMETOOLONG;
		reading = true;
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			reading = true;
		} else {
			err = trace_read_chunks(fd, save, p, &reading);
			close(fd);
		}
	}
	if (p && !err) {
		t = pf_fgraph_finish(p);
		if (!t)
			err = errno ? -errno : -ENOMEM;
		pf_trace_free(t);
	} else {
		pf_fgraph_free(p);
	}
	if (err && reading)
		snprintf(r->tfs.err, sizeof(r->tfs.err), "cannot read %s: %s",
			 path, strerror(-err));
	else if (err == -ENOMEM)
		snprintf(r->tfs.err, sizeof(r->tfs.err), "out of memory");
	else if (err)
		snprintf(r->tfs.err, sizeof(r->tfs.err),
			 "cannot save the trace: %s", strerror(-err));
	return err;
}

/*
 * Where the trace is kept between its reading and trace_print_packets(): a file in
 * /tmp, or in memory (memfd) if /tmp will not do, as in a bare VM.
 */
static FILE *save_file(void)
{
	FILE *f = tmpfile();
	int fd, err;

	if (f)
		return f;
	err = errno;
	fd = memfd_create("pktfilt-trace", MFD_CLOEXEC);
	if (fd < 0) {
		errno = err;
		return NULL;
	}
	f = fdopen(fd, "w+");
	if (!f) {
		err = errno;
		close(fd);
		errno = err;
	}
	return f;
}

/*
 * The rules' text into the saved trace's nftables verdicts, while the
 * ruleset is the one the packets met (handles are reused). On failure
 * the trace stays as it was read, without the text.
 */
static void nft_rules_add(struct trace_run *r)
{
	FILE *out = save_file();

	if (!out)
		return;
	if (fseek(r->saved, 0, SEEK_SET) || pf_nft_annotate(r->saved, out) ||
	    fflush(out)) {
		fclose(out);
		return;
	}
	fclose(r->saved);
	r->saved = out;
}

/*
 * The filter is disarmed: read the trace until every announced packet's
 * graph is closed, for PF_CLOSE_WAIT_MS at most. Then tracing off. The
 * last reading stays in r->saved (a temporary file) for trace_print_packets().
 */
int trace_collect(struct trace_run *r)
{
	long long until = trace_now_ms() + PF_CLOSE_WAIT_MS;
	struct seq_check c = { 0 };
	int err = 0;

	r->saved = save_file();
	if (!r->saved) {
		err = errno ? -errno : -EIO;
		snprintf(r->tfs.err, sizeof(r->tfs.err),
			 "cannot save the trace: %s", strerror(-err));
	}
	if (!err && seq_check_init(&c, r)) {
		err = -ENOMEM;
		snprintf(r->tfs.err, sizeof(r->tfs.err), "out of memory");
	}
	while (!err) {
		err = read_trace(r, r->nseen ? &c : NULL);
		if (err)
			break;
		if (!r->nseen)
			break;
		if (all_closed(&c) || trace_now_ms() >= until)
			break;
		trace_sleep_ms(50);
	}
	seq_check_free(&c);
	if (pf_tracefs_stop(&r->tfs) && !err)
		err = -EIO;
	if (!err && r->lost_after && pf_tracefs_lost(&r->tfs, r->lost_after))
		err = -EIO;
	if (!err)
		nft_rules_add(r);
	if (err)
		fprintf(stderr, "pktfilt: trace: %s\n", r->tfs.err);
	return err;
}
