// SPDX-License-Identifier: GPL-2.0
/*
 * "pktfilt trace", step 7: the packets printed from the saved trace, as
 * --format, -o, --svg and --raw ask.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fgraph.h"
#include "render.h"
#include "trace_run.h"

/* One output: the --format one, or the SVG. */
struct trace_out {
	const char *path;		/* "-": standard output */
	FILE *file;			/* NULL: could not be opened */
	struct pf_render *r;
	int err;			/* the first error writing it */
};

static enum pf_format format_of(const char *format)
{
	if (!strcmp(format, "json"))
		return PF_FORMAT_JSON;
	if (!strcmp(format, "folded"))
		return PF_FORMAT_FOLDED;
	if (!strcmp(format, "chrome"))
		return PF_FORMAT_CHROME;
	if (!strcmp(format, "html"))
		return PF_FORMAT_HTML;
	return PF_FORMAT_TEXT;
}

/* EXIT_RUNTIME, said, if @path cannot be opened; o->file NULL then. */
static int out_open(struct trace_out *o, const char *path)
{
	o->path = path;
	o->file = strcmp(path, "-") ? fopen(path, "w") : stdout;
	o->r = NULL;
	o->err = 0;
	if (!o->file) {
		fprintf(stderr, "pktfilt: trace: cannot write %s: %s\n", path,
			strerror(errno));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* Flush or close @o, with @err the first error so far: EXIT_RUNTIME if any. */
static int out_close(struct trace_out *o, int err)
{
	bool std = !strcmp(o->path, "-");

	if (!o->file)
		return EXIT_RUNTIME;
	if (std) {
		if (fflush(o->file) && !err)
			err = errno ? -errno : -EIO;
	} else if (fclose(o->file) && !err) {
		err = errno ? -errno : -EIO;
	}
	o->file = NULL;
	if (err) {
		fprintf(stderr, "pktfilt: trace: writing %s: %s\n",
			std ? "standard output" : o->path, strerror(-err));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* The saved trace, as it was read, to --raw's @path. */
static int write_raw(struct trace_run *r, const char *path)
{
	struct trace_out o;
	int in = fileno(r->saved), out, err = 0;
	bool reading = false;

	if (out_open(&o, path))
		return EXIT_RUNTIME;
	if (fflush(o.file) || lseek(in, 0, SEEK_SET) < 0) {
		err = errno ? -errno : -EIO;
	} else {
		out = fileno(o.file);
		err = trace_read_chunks(in, out, NULL, &reading);
	}
	return out_close(&o, err);
}

/* One reading of the saved trace, rendered: trace_print_packets()'s state. */
struct trace_report {
	struct trace_out outs[4];	/* --format's, --svg's, --html's, --pcap's */
	enum pf_format fmts[4];
	size_t nouts;
	unsigned int *lost_cpus;	/* CPUs whose ring buffer lost events */
	size_t nlost;
	struct seq_check c;
	size_t bad;			/* packets incomplete, marks included */
};

/*
 * Packets on a CPU whose ring buffer lost events, by its counters, are
 * not to be trusted: find those CPUs, to mark their packets as they come.
 * Returns the events lost in all.
 */
static uint64_t mark_lost(struct trace_run *r, struct trace_report *rep)
{
	uint64_t sum = 0;
	size_t i;

	if (!r->lost_before || !r->lost_after)
		return 0;
	for (i = 0; i < r->tfs.ncpus; i++) {
		uint64_t d = r->lost_after[i] - r->lost_before[i];

		if (r->lost_after[i] <= r->lost_before[i])
			continue;
		sum += d;
		fprintf(stderr,
			"pktfilt: trace: CPU %u's ring buffer lost %" PRIu64 " event%s (per_cpu/cpu%u/stats)\n",
			r->tfs.cpus[i], d, d == 1 ? "" : "s", r->tfs.cpus[i]);
		rep->lost_cpus[rep->nlost++] = r->tfs.cpus[i];
	}
	return sum;
}

static int on_report(void *arg, const struct pf_packet *pkt)
{
	struct trace_report *rep = arg;
	struct pf_packet p = *pkt;	/* the renderers read it only */
	size_t i;

	for (i = 0; i < rep->nlost; i++) {
		if (p.cpu != rep->lost_cpus[i])
			continue;
		p.complete = false;
		p.incomplete |= PF_INC_LOST;
	}
	rep->bad += !p.complete;
	seq_check_packet(&rep->c, &p);
	for (i = 0; i < rep->nouts; i++) {
		struct trace_out *o = &rep->outs[i];

		if (o->r && !o->err)
			o->err = pf_render_packet(o->r, &p);
	}
	return 0;
}

/*
 * Read the saved trace once more, in chunks, through the streaming
 * parser, each packet rendered to every output as it completes. The
 * trace's counts, or NULL (said).
 */
static struct pf_trace *render_saved(struct trace_run *r,
				     struct trace_report *rep)
{
	int in = fileno(r->saved), err = 0;
	struct pf_fgraph *p;
	struct pf_trace *t = NULL;
	bool reading = false;

	p = pf_fgraph_new_stream(on_report, rep);
	if (!p) {
		err = -ENOMEM;
	} else if (lseek(in, 0, SEEK_SET) < 0) {
		err = -errno;
		reading = true;
		pf_fgraph_free(p);
	} else {
		err = trace_read_chunks(in, -1, p, &reading);
		if (err) {
			pf_fgraph_free(p);
		} else {
			t = pf_fgraph_finish(p);
			if (!t)
				err = errno ? -errno : -ENOMEM;
		}
	}
	if (err && reading)
		fprintf(stderr, "pktfilt: trace: reading the saved trace: %s\n",
			strerror(-err));
	else if (err)
		fprintf(stderr, "pktfilt: trace: out of memory\n");
	return t;
}

/*
 * The filter armed, as 'pktfilt show' words it, for the JSON and chrome
 * outputs: a new string, or NULL if out of memory (then null there).
 */
static char *filter_words(const struct pf_filter *f)
{
	int n = pf_format_filter(f, &pf_system_resolver, NULL, 0);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;

	if (s)
		pf_format_filter(f, &pf_system_resolver, s, (size_t)n + 1);
	return s;
}

int trace_print_packets(struct trace_run *r)
{
	struct trace_report rep = { .nouts = 0 };
	struct pf_render_opts ropts = {
		.filter = NULL,
		.names = &pf_system_resolver,	/* pcapng: this machine's */
	};
	char *filter;
	struct pf_trace *t;
	size_t i, n, missing = 0;
	uint64_t lost;
	int ret = EXIT_OK;

	if (r->o.raw && write_raw(r, r->o.raw))
		ret = EXIT_RUNTIME;
	rep.lost_cpus = calloc(r->tfs.ncpus ? r->tfs.ncpus : 1,
			       sizeof(*rep.lost_cpus));
	if (!rep.lost_cpus || seq_check_init(&rep.c, r)) {
		fprintf(stderr, "pktfilt: trace: out of memory\n");
		free(rep.lost_cpus);
		seq_check_free(&rep.c);
		return EXIT_RUNTIME;
	}
	lost = mark_lost(r, &rep);

	/* The --format output, the SVG, the page: each packet to all. */
	rep.fmts[rep.nouts] = format_of(r->o.format);
	if (out_open(&rep.outs[rep.nouts++],
		     r->o.output ? r->o.output : "-"))
		ret = EXIT_RUNTIME;
	rep.fmts[rep.nouts] = PF_FORMAT_SVG;
	if (r->o.svg && out_open(&rep.outs[rep.nouts++], r->o.svg))
		ret = EXIT_RUNTIME;
	rep.fmts[rep.nouts] = PF_FORMAT_HTML;
	if (r->o.html && out_open(&rep.outs[rep.nouts++], r->o.html))
		ret = EXIT_RUNTIME;
	rep.fmts[rep.nouts] = PF_FORMAT_PCAPNG;
	if (r->o.pcap && out_open(&rep.outs[rep.nouts++], r->o.pcap))
		ret = EXIT_RUNTIME;
	filter = filter_words(&r->o.filter);
	ropts.filter = filter;
	for (i = 0; i < rep.nouts; i++) {
		struct trace_out *o = &rep.outs[i];

		if (!o->file)
			continue;
		o->r = pf_render_new(rep.fmts[i], o->file, &ropts);
		if (!o->r)
			o->err = errno ? -errno : -ENOMEM;
	}
	free(filter);	/* the renderers have their copy */
	t = render_saved(r, &rep);
	for (i = 0; i < rep.nouts; i++) {
		struct trace_out *o = &rep.outs[i];
		int err = o->r ? pf_render_end(o->r) : 0;

		if (o->file && out_close(o, o->err ? o->err : err))
			ret = EXIT_RUNTIME;
	}
	if (!t) {
		free(rep.lost_cpus);
		seq_check_free(&rep.c);
		return EXIT_RUNTIME;
	}

	for (i = 0; i < r->nseen; i++) {
		if (rep.c.found[i] != SEQ_MISSING)
			continue;
		if (!missing)
			fprintf(stderr, "pktfilt: trace: traced but not in the trace (lost):");
		fprintf(stderr, " seq %" PRIu64, r->seqs[i]);
		missing++;
	}
	if (missing) {
		fprintf(stderr, "\n");
		ret = EXIT_RUNTIME;
	}
	/* The counts with the lost CPUs' packets marked, as rendered. */
	t->stats.streamed_incomplete = rep.bad;
	n = pf_trace_packets(t);
	if (rep.bad || pf_trace_lost(t) || lost) {
		fprintf(stderr, "pktfilt: trace: %zu of %zu packet%s incomplete%s\n",
			rep.bad, n, n == 1 ? "" : "s",
			pf_trace_lost(t) || lost ?
			" (the ring buffer lost events: a larger buffer_size_kb or fewer --functions may help)" : "");
		fprintf(stderr, "pktfilt: trace: ");
		pf_trace_summary(stderr, t);
		ret = EXIT_RUNTIME;
	}
	pf_trace_free(t);
	free(rep.lost_cpus);
	seq_check_free(&rep.c);
	return ret;
}
