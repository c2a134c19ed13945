// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of tool/tracefs.c (save, set up, restore) and
 * tool/tracefs_funcs.c (globs, function numbers) on a fake tracefs:
 * a directory tree with the files pktfilt trace touches, and a small
 * model of the kernel that turns what was written into what tracefs reads
 * back once the file is closed (the hooks of struct pf_tfs_hooks):
 *
 *   set_ftrace_pid      sorted PIDs, or "no pid"
 *   set_event_pid       sorted PIDs, or nothing
 *   set_ftrace_filter   "f [veth]" for f:mod:veth and for veth_poll,
 *                       "glob:mod:nfoo" kept (module not loaded), sorted,
 *                       or "#### all functions enabled ####"; then the
 *                       function probes, which O_TRUNC leaves alone
 *   set_graph_function  "veth_poll [veth]", sorted, or the header
 *   *_notrace           "#### no functions disabled ####" when empty
 *   buffer_size_kb      sets every CPU's; "X" when they differ
 *   events/G/enable     sets its events'; "X" when they differ
 *   an event's filter   "0" clears: "none"
 *
 * and can refuse writes: a glob no function matches, a root that is not
 * traceable, a failure injected on any file.
 *
 * With available_filter_functions (fake_avail, in record order, with a
 * name twice, a module's functions and a record no symbol owns), the
 * function lists model the kernel better: a number N is record N, a name
 * all the records of that name, and they read in record order; --shift
 * (f->shift) makes numbers select the next record, as a module loaded
 * between the read and the write would.
 *
 * Also the pure helpers of tool/trace_scope.c: which handlers a filter reaches,
 * and the ring buffer size.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "funcs_cache.h"
#include "tracefs.h"
#include "pktfilt.h"
#include "tracecmd.h"

#define NCPUS	2

/* ---- the fake tree ---- */

struct fake {
	char root[64];
	char probes[256];	/* set_ftrace_filter's function probes */
	char fail_rel[64];	/* inject: writes to this file fail */
	int fail_err;
	char log[16384];	/* "rel=value;" for each write */
	int writes;
	int shift;		/* numbers select record N + shift */
	size_t nrec;		/* records: NAVAIL, or NAVAIL_MAX (the anchor) */
};

/* The records, in their order: line N is number N + 1. */
static const char *const fake_avail[] = {
	"ip_rcv", "udp_rcv", "__ftrace_invalid_address___84", "ip_output",
	"tcp_v4_rcv", "nf_hook_slow", "skb_put", "dup_fn", "ip_finish_output",
	"dup_fn", "veth_poll [veth]", "veth_xmit [veth]", "ip_local_deliver",
	"udpv6_rcv",
	/* Only with fake_with_anchor(): pktfilt.ko loaded last. */
	"pktfilt_anchor [pktfilt]",
};

#define NAVAIL_MAX	(sizeof(fake_avail) / sizeof(fake_avail[0]))
#define NAVAIL		(NAVAIL_MAX - 1)

static char *path_of(struct fake *f, const char *rel)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s/%s", f->root, rel);
	return buf;
}

static void put(struct fake *f, const char *rel, const char *content)
{
	char dir[512], *slash;
	FILE *fp;

	snprintf(dir, sizeof(dir), "%s", path_of(f, rel));
	for (slash = strchr(dir + strlen(f->root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	fp = fopen(path_of(f, rel), "w");
	if (!fp)
		abort();
	fputs(content, fp);
	fclose(fp);
}

static char *get(struct fake *f, const char *rel)
{
	static char buf[8192];
	FILE *fp = fopen(path_of(f, rel), "r");
	size_t n = 0;

	buf[0] = '\0';
	if (fp) {
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
	}
	buf[n] = '\0';
	return buf;
}

/* The files pktfilt trace reads, with a user's non-default values. */
static const char *const user_state[][2] = {
	{ "tracing_on", "1\n" },
	{ "current_tracer", "function\n" },
	{ "set_ftrace_pid", "no pid\n" },
	{ "set_ftrace_notrace_pid", "77\n" },
	{ "set_event_pid", "" },
	{ "set_event_notrace_pid", "" },
	{ "set_graph_function", "#### all functions enabled ####\n" },
	{ "set_graph_notrace", "ip_rcv\n" },
	{ "set_ftrace_filter",
	  "ip_rcv\nudp_rcv\nveth_poll [veth]\nfoo*:mod:nfoo\n" },
	{ "set_ftrace_notrace", "#### no functions disabled ####\n" },
	{ "max_graph_depth", "3\n" },
	{ "tracing_thresh", "0\n" },
	{ "options/funcgraph-irqs", "1\n" },
	{ "options/funcgraph-proc", "1\n" },
	{ "options/funcgraph-cpu", "1\n" },
	{ "options/funcgraph-duration", "1\n" },
	{ "options/funcgraph-overhead", "1\n" },
	{ "options/funcgraph-abstime", "0\n" },
	{ "options/funcgraph-tail", "0\n" },
	{ "options/context-info", "1\n" },
	{ "options/sym-offset", "0\n" },
	{ "buffer_size_kb", "X\n" },
	{ "per_cpu/cpu0/buffer_size_kb", "2051\n" },
	{ "per_cpu/cpu1/buffer_size_kb", "1408\n" },
	{ "per_cpu/cpu0/stats", "entries: 0\noverrun: 5\ncommit overrun: 0\nbytes: 0\ndropped events: 0\n" },
	{ "per_cpu/cpu1/stats", "entries: 0\noverrun: 0\ncommit overrun: 1\nbytes: 0\ndropped events: 2\n" },
	{ "events/pktfilt/enable", "0\n" },
	{ "events/pktfilt/pktfilt_packet/enable", "0\n" },
	{ "events/pktfilt/pktfilt_packet/filter", "seq > 3\n" },
	{ "trace", "# tracer: function\nold lines\n" },
};

#define NSTATE	(sizeof(user_state) / sizeof(user_state[0]))

static void fake_init(struct fake *f)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	snprintf(f->root, sizeof(f->root), "/tmp/tracefs_test.XXXXXX");
	if (!mkdtemp(f->root))
		abort();
	for (i = 0; i < NSTATE; i++)
		put(f, user_state[i][0], user_state[i][1]);
	snprintf(f->probes, sizeof(f->probes), "udp_rcv:traceoff:unlimited\n");
	/* The probe reads in the filter too. */
	put(f, "set_ftrace_filter",
	    "ip_rcv\nudp_rcv\nveth_poll [veth]\nfoo*:mod:nfoo\nudp_rcv:traceoff:unlimited\n");
	f->nrec = NAVAIL;
	{
		char buf[1024] = "";
		size_t i;

		for (i = 0; i < NAVAIL; i++) {
			strcat(buf, fake_avail[i]);
			strcat(buf, "\n");
		}
		put(f, "available_filter_functions", buf);
	}
	/* What the kept list's segments are keyed on (funcs_cache.h). */
	put(f, "proc/version", "Linux version 6.1.0-test\n");
	put(f, "sys/kernel/notes", "GNU build id of the kernel");
	put(f, "proc/modules", "veth 40960 0 - Live 0xffffffffc0a00000\n");
	put(f, "sys/module/veth/notes/.note.gnu.build-id", "GNU build id of veth");
}

static void rm_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	char sub[512];

	if (!d) {
		unlink(path);
		return;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		rm_tree(sub);
	}
	closedir(d);
	rmdir(path);
}

/* ---- the kernel model ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_num(const void *a, const void *b)
{
	long x = atol(*(char *const *)a), y = atol(*(char *const *)b);

	return (x > y) - (x < y);
}

/* Tokens of @s (whitespace separated) into @tok; returns how many. */
static int tokens(char *s, char **tok, int max)
{
	int n = 0;
	char *save = NULL, *t;

	for (t = strtok_r(s, " \t\n", &save); t && n < max;
	     t = strtok_r(NULL, " \t\n", &save))
		tok[n++] = t;
	return n;
}

static void join(char *out, size_t len, char **tok, int n, const char *empty,
		 const char *tail)
{
	int i;

	out[0] = '\0';
	if (!n)
		snprintf(out, len, "%s", empty);
	for (i = 0; i < n; i++) {
		strncat(out, tok[i], len - strlen(out) - 2);
		strcat(out, "\n");
	}
	strncat(out, tail, len - strlen(out) - 1);
}

/* What each function-list entry reads as. */
static void func_readback(char **tok, int n, char *store, bool graph)
{
	int i;

	for (i = 0; i < n; i++) {
		char *mod = strstr(tok[i], ":mod:");

		if (mod && !strcmp(mod + 5, "veth")) {
			*mod = '\0';
			sprintf(store, "%s [veth]", tok[i]);
		} else if (!graph && !mod && !strcmp(tok[i], "veth_poll")) {
			sprintf(store, "veth_poll [veth]");
		} else if (graph && !strcmp(tok[i], "veth_poll")) {
			sprintf(store, "veth_poll [veth]");
		} else {
			continue;
		}
		tok[i] = store;
		store += strlen(store) + 1;
	}
}

/* pktfilt.ko loaded after veth: its anchor is the last record. */
static void fake_with_anchor(struct fake *f)
{
	char buf[1024] = "";
	size_t i;

	f->nrec = NAVAIL_MAX;
	for (i = 0; i < NAVAIL_MAX; i++) {
		strcat(buf, fake_avail[i]);
		strcat(buf, "\n");
	}
	put(f, "available_filter_functions", buf);
	put(f, "proc/modules",
	    "pktfilt 90112 0 - Live 0xffffffffc0c00000\nveth 40960 0 - Live 0xffffffffc0a00000\n");
}

/* Does record @i bear the name @name ("f", any module)? */
static bool rec_named(size_t i, const char *name)
{
	size_t l = strlen(name);

	return !strncmp(fake_avail[i], name, l) &&
	       (!fake_avail[i][l] || fake_avail[i][l] == ' ');
}

/*
 * set_ftrace_filter and set_ftrace_notrace when available_filter_functions
 * exists: the records selected in record order, then what names no
 * record ("ip_*": the fake does not glob), sorted, then the caches for
 * modules to come, then (filter) the probes.
 */
static void fake_filter(struct fake *f, char **tok, int n, char *out,
			size_t len, bool notrace)
{
	bool sel[NAVAIL_MAX] = { false };
	char *other[256], *mods[64], one[256];
	int no = 0, nm = 0, i;
	size_t r;
	bool any = false;

	for (i = 0; i < n; i++) {
		char *mod = strstr(tok[i], ":mod:"), *end;
		unsigned long num = strtoul(tok[i], &end, 10);

		if (tok[i][0] >= '0' && tok[i][0] <= '9' && !*end) {
			num += (unsigned long)f->shift;
			if (num >= 1 && num <= f->nrec)
				sel[num - 1] = true;
			continue;
		}
		if (mod) {
			bool found = false;

			snprintf(one, sizeof(one), "%.*s [%s]",
				 (int)(mod - tok[i]), tok[i], mod + 5);
			for (r = 0; r < f->nrec; r++)
				if (!strcmp(fake_avail[r], one))
					sel[r] = found = true;
			if (!found)
				mods[nm++] = tok[i];
			continue;
		}
		{
			bool found = false;

			for (r = 0; r < f->nrec; r++)
				if (rec_named(r, tok[i]))
					sel[r] = found = true;
			if (!found)
				other[no++] = tok[i];
		}
	}
	out[0] = '\0';
	for (r = 0; r < f->nrec; r++) {
		if (!sel[r])
			continue;
		strncat(out, fake_avail[r], len - strlen(out) - 2);
		strcat(out, "\n");
		any = true;
	}
	qsort(other, no, sizeof(*other), cmp_str);
	for (i = 0; i < no; i++) {
		strncat(out, other[i], len - strlen(out) - 2);
		strcat(out, "\n");
		any = true;
	}
	for (i = 0; i < nm; i++) {
		strncat(out, mods[i], len - strlen(out) - 2);
		strcat(out, "\n");
		any = true;
	}
	if (!any)
		snprintf(out, len, "%s", notrace ?
			 "#### no functions disabled ####\n" :
			 "#### all functions enabled ####\n");
	if (!notrace)
		strncat(out, f->probes, len - strlen(out) - 1);
}

static bool has_avail(struct fake *f)
{
	return !access(path_of(f, "available_filter_functions"), F_OK);
}

static void fake_closed(void *ctx, const char *rel)
{
	struct fake *f = ctx;
	char in[8192], out[8192], store[4096], *tok[256];
	int n, i;

	snprintf(in, sizeof(in), "%s", get(f, rel));
	n = tokens(in, tok, 256);
	if (!strcmp(rel, "set_ftrace_pid") ||
	    !strcmp(rel, "set_ftrace_notrace_pid")) {
		qsort(tok, n, sizeof(*tok), cmp_num);
		join(out, sizeof(out), tok, n, "no pid\n", "");
	} else if (!strcmp(rel, "set_event_pid") ||
		   !strcmp(rel, "set_event_notrace_pid")) {
		qsort(tok, n, sizeof(*tok), cmp_num);
		join(out, sizeof(out), tok, n, "", "");
	} else if ((!strcmp(rel, "set_ftrace_filter") ||
		    !strcmp(rel, "set_ftrace_notrace")) && has_avail(f)) {
		fake_filter(f, tok, n, out, sizeof(out),
			    !strcmp(rel, "set_ftrace_notrace"));
	} else if (!strcmp(rel, "set_ftrace_filter")) {
		char *mods[64];
		int nf = 0, nm = 0;

		/* Functions in order, then the entries for modules to come. */
		func_readback(tok, n, store, false);
		for (i = 0; i < n; i++) {
			if (strstr(tok[i], ":mod:"))
				mods[nm++] = tok[i];
			else
				tok[nf++] = tok[i];
		}
		qsort(tok, nf, sizeof(*tok), cmp_str);
		for (i = 0; i < nm; i++)
			tok[nf + i] = mods[i];
		join(out, sizeof(out), tok, n,
		     "#### all functions enabled ####\n", f->probes);
	} else if (!strcmp(rel, "set_graph_function")) {
		func_readback(tok, n, store, true);
		qsort(tok, n, sizeof(*tok), cmp_str);
		join(out, sizeof(out), tok, n,
		     "#### all functions enabled ####\n", "");
	} else if (!strcmp(rel, "set_ftrace_notrace") ||
		   !strcmp(rel, "set_graph_notrace")) {
		qsort(tok, n, sizeof(*tok), cmp_str);
		join(out, sizeof(out), tok, n,
		     "#### no functions disabled ####\n", "");
	} else if (!strcmp(rel, "buffer_size_kb")) {
		for (i = 0; i < NCPUS; i++) {
			char cpu[64];

			snprintf(cpu, sizeof(cpu), "per_cpu/cpu%d/buffer_size_kb", i);
			put(f, cpu, get(f, rel));
		}
		return;
	} else if (strstr(rel, "per_cpu/") && strstr(rel, "/buffer_size_kb")) {
		char a[64], b[64];

		snprintf(a, sizeof(a), "%s", get(f, "per_cpu/cpu0/buffer_size_kb"));
		snprintf(b, sizeof(b), "%s", get(f, "per_cpu/cpu1/buffer_size_kb"));
		put(f, "buffer_size_kb", strcmp(a, b) ? "X\n" : a);
		return;
	} else if (!strcmp(rel, "events/pktfilt/enable")) {
		put(f, "events/pktfilt/pktfilt_packet/enable", get(f, rel));
		return;
	} else if (strstr(rel, "/filter")) {
		if (n == 1 && !strcmp(tok[0], "0"))
			snprintf(out, sizeof(out), "none\n");
		else
			return;
	} else {
		return;		/* values read as written */
	}
	put(f, rel, out);
}

static int fake_write(void *ctx, const char *rel, const char *buf, size_t len)
{
	struct fake *f = ctx;
	size_t off = strlen(f->log);

	f->writes++;
	snprintf(f->log + off, sizeof(f->log) - off, "%s=%.*s;", rel,
		 (int)(len && buf[len - 1] == '\n' ? len - 1 : len), buf);
	if (f->fail_rel[0] && !strcmp(rel, f->fail_rel))
		return f->fail_err;
	/* No function matches "nosuch*"; tcp_v6_rcv is not traceable. */
	if (!strcmp(rel, "set_ftrace_filter") && !strncmp(buf, "nosuch", 6))
		return -EINVAL;
	if (!strcmp(rel, "set_graph_function") && !strncmp(buf, "tcp_v6_rcv", 10))
		return -EINVAL;
	if (!strcmp(rel, "set_graph_function") && !strncmp(buf, "bad_", 4))
		return -EINVAL;
	return 0;
}

static void expect_user_state(struct __test_metadata *_metadata, struct fake *f)
{
	size_t i;

	for (i = 0; i < NSTATE; i++) {
		const char *rel = user_state[i][0];
		const char *want = user_state[i][1];

		if (!strcmp(rel, "trace") || strstr(rel, "/stats"))
			continue;
		if (!strcmp(rel, "set_ftrace_filter"))
			want = "ip_rcv\nudp_rcv\nveth_poll [veth]\nfoo*:mod:nfoo\nudp_rcv:traceoff:unlimited\n";
		EXPECT_STREQ(want, get(f, rel)) {
			TH_LOG("%s differs", rel);
		}
	}
}

static const char *const roots4[] = { "udp_rcv", "tcp_v4_rcv" };

FIXTURE(tfs) {
	struct fake f;
	struct pf_tfs_hooks hooks;
	struct pf_tracefs t;
	struct pf_tfs_config c;
};

FIXTURE_SETUP(tfs)
{
	fake_init(&self->f);
	self->hooks.write = fake_write;
	self->hooks.closed = fake_closed;
	self->hooks.ctx = &self->f;
	ASSERT_EQ(0, pf_tracefs_open(&self->t, self->f.root, "pktfilt"));
	self->t.hooks = &self->hooks;
	self->t.numbers_min = 1;	/* the fake's lists are short */
	memset(&self->c, 0, sizeof(self->c));
	self->c.idle_pid = 32768;
	self->c.roots = roots4;
	self->c.nroots = 2;
	self->c.buffer_kb = 1024;
	/* The list kept between runs: only where a test says so. */
	setenv(PF_FCACHE_ENV, "none", 1);
}

FIXTURE_TEARDOWN(tfs)
{
	pf_tracefs_close(&self->t);
	rm_tree(self->f.root);
}

/* Saving reads, writes nothing; restoring untouched settings neither. */
TEST_F(tfs, save_writes_nothing)
{
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	EXPECT_EQ(2, self->t.ncpus);
	EXPECT_EQ(0, self->f.writes);
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	EXPECT_EQ(0, self->f.writes);
	expect_user_state(_metadata, &self->f);
}

/* What setup and start write, as the kernel then reads it. */
TEST_F(tfs, setup_values)
{
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_STREQ("0\n", get(&self->f, "tracing_on"));
	EXPECT_STREQ("nop\n", get(&self->f, "current_tracer"));
	EXPECT_STREQ("32768\n", get(&self->f, "set_ftrace_pid"));
	EXPECT_STREQ("no pid\n", get(&self->f, "set_ftrace_notrace_pid"));
	EXPECT_STREQ("#### no functions disabled ####\n",
		     get(&self->f, "set_graph_notrace"));
	EXPECT_STREQ("tcp_v4_rcv\nudp_rcv\n", get(&self->f, "set_graph_function"));
	/* No --functions: all functions (the probe stays). */
	EXPECT_STREQ("#### all functions enabled ####\nudp_rcv:traceoff:unlimited\n",
		     get(&self->f, "set_ftrace_filter"));
	EXPECT_STREQ("0\n", get(&self->f, "options/funcgraph-irqs"));
	EXPECT_STREQ("0\n", get(&self->f, "options/funcgraph-proc"));
	EXPECT_STREQ("0\n", get(&self->f, "max_graph_depth"));
	/* cpu1 had 1408 < 1024? no: 1024 wanted, both have more: as is. */
	EXPECT_STREQ("X\n", get(&self->f, "buffer_size_kb"));
	EXPECT_STREQ("none\n", get(&self->f, "events/pktfilt/pktfilt_packet/filter"));
	EXPECT_STREQ("1\n", get(&self->f, "events/pktfilt/enable"));
	EXPECT_STREQ("1\n", get(&self->f, "events/pktfilt/pktfilt_packet/enable"));
	EXPECT_STREQ("", get(&self->f, "trace"));
	/* Settings already right are not written. */
	EXPECT_EQ(NULL, strstr(self->f.log, "options/funcgraph-cpu="));
	EXPECT_EQ(NULL, strstr(self->f.log, "tracing_thresh="));
	EXPECT_EQ(NULL, strstr(self->f.log, "set_ftrace_notrace="));
	/* The tracer goes to nop right after tracing_on. */
	EXPECT_EQ((char *)self->f.log, strstr(self->f.log, "tracing_on=0;current_tracer=nop;"));

	ASSERT_EQ(0, pf_tracefs_start(&self->t));
	EXPECT_STREQ("function_graph\n", get(&self->f, "current_tracer"));
	EXPECT_STREQ("1\n", get(&self->f, "tracing_on"));
	ASSERT_EQ(0, pf_tracefs_stop(&self->t));
	EXPECT_STREQ("0\n", get(&self->f, "tracing_on"));
}

/* The whole cycle gives back the user's state, byte for byte. */
TEST_F(tfs, round_trip)
{
	const char *end;

	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->c.buffer_kb = 4096;	/* bigger than both CPUs' */
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_STREQ("4096\n", get(&self->f, "buffer_size_kb"));
	EXPECT_STREQ("4096\n", get(&self->f, "per_cpu/cpu1/buffer_size_kb"));
	ASSERT_EQ(0, pf_tracefs_start(&self->t));
	ASSERT_EQ(0, pf_tracefs_stop(&self->t));
	self->f.log[0] = '\0';
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);

	/* Off and nop first; the tracer, then tracing_on, last. */
	EXPECT_EQ((char *)self->f.log, strstr(self->f.log, "tracing_on=0;current_tracer=nop;"));
	end = self->f.log + strlen(self->f.log) -
	      strlen("current_tracer=function;tracing_on=1;");
	EXPECT_STREQ("current_tracer=function;tracing_on=1;", end);
	/*
	 * The functions by number, in one write; the cache for a module to
	 * come by name; no probe.
	 */
	EXPECT_NE(NULL, strstr(self->f.log,
			       "set_ftrace_filter=1 2 11;set_ftrace_filter=foo*:mod:nfoo;"));
	EXPECT_EQ(NULL, strstr(self->f.log, "traceoff"));
	/* Mixed CPU sizes come back per CPU, not through "X". */
	EXPECT_NE(NULL, strstr(self->f.log, "per_cpu/cpu0/buffer_size_kb=2051;"));
	EXPECT_NE(NULL, strstr(self->f.log, "per_cpu/cpu1/buffer_size_kb=1408;"));
	EXPECT_EQ(NULL, strstr(self->f.log, "buffer_size_kb=X"));
	/* "no pid" is an empty list: nothing written. */
	EXPECT_EQ(NULL, strstr(self->f.log, "no pid"));
	/* The event filter as it was; the graph list as names only. */
	EXPECT_NE(NULL, strstr(self->f.log, "events/pktfilt/pktfilt_packet/filter=seq > 3;"));
	/* A second restore has nothing to do. */
	self->f.writes = 0;
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	EXPECT_EQ(0, self->f.writes);
}

/* A short list is restored by name: cheaper than reading the numbers. */
TEST_F(tfs, restore_few_by_name)
{
	self->t.numbers_min = PF_TFS_NUMBERS_MIN;
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	self->f.log[0] = '\0';
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	EXPECT_NE(NULL, strstr(self->f.log,
			       "set_ftrace_filter=ip_rcv;set_ftrace_filter=udp_rcv;set_ftrace_filter=veth_poll:mod:veth;set_ftrace_filter=foo*:mod:nfoo;"));
	expect_user_state(_metadata, &self->f);
}

/* --functions: the handlers and the globs, matched here, by number. */
TEST_F(tfs, functions)
{
	const char *const globs[] = { "ip_*", "nf_hook_slow", "veth_*:mod:veth" };

	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->c.globs = globs;
	self->c.nglobs = 3;
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_NE(NULL, strstr(self->f.log, "set_ftrace_filter=1 2 4 5 6 9 11 12 13;"));
	EXPECT_EQ(NULL, strstr(self->f.log, "set_ftrace_filter=ip_*"));
	EXPECT_STREQ("ip_rcv\nudp_rcv\nip_output\ntcp_v4_rcv\nnf_hook_slow\nip_finish_output\nveth_poll [veth]\nveth_xmit [veth]\nip_local_deliver\nudp_rcv:traceoff:unlimited\n",
		     get(&self->f, "set_ftrace_filter"));
	EXPECT_EQ(1, self->t.by_index);
	EXPECT_EQ(9, self->t.nfuncs);
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
}

/*
 * Lazy: the scope written by number and checked as eager, but the tracer
 * stays nop (nothing patched) until pf_tracefs_scope() starts
 * function_graph, once.
 */
TEST_F(tfs, lazy)
{
	const char *const globs[] = { "ip_*", "nf_hook_slow", "veth_*:mod:veth" };

	fake_with_anchor(&self->f);
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->c.globs = globs;
	self->c.nglobs = 3;
	self->c.lazy = true;
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	ASSERT_EQ(0, pf_tracefs_start(&self->t));
	EXPECT_EQ(1, self->t.lazy);
	EXPECT_EQ(0, self->t.scope_on);
	EXPECT_NE(NULL, strstr(self->f.log, "set_ftrace_filter=1 2 4 5 6 9 11 12 13;"));
	EXPECT_STREQ("nop\n", get(&self->f, "current_tracer"));
	EXPECT_STREQ("1\n", get(&self->f, "tracing_on"));
	/* No event on while waiting: no task names recorded at switches. */
	EXPECT_EQ(NULL, strstr(self->f.log, "events/pktfilt/enable=1"));
	self->f.log[0] = '\0';
	ASSERT_EQ(0, pf_tracefs_scope(&self->t));
	EXPECT_EQ(1, self->t.scope_on);
	/* The events, the tracer; the filter was right since setup. */
	EXPECT_STREQ("events/pktfilt/enable=1;current_tracer=function_graph;", self->f.log);
	EXPECT_STREQ("ip_rcv\nudp_rcv\nip_output\ntcp_v4_rcv\nnf_hook_slow\nip_finish_output\nveth_poll [veth]\nveth_xmit [veth]\nip_local_deliver\nudp_rcv:traceoff:unlimited\n",
		     get(&self->f, "set_ftrace_filter"));
	/* Once is enough. */
	self->f.log[0] = '\0';
	ASSERT_EQ(0, pf_tracefs_scope(&self->t));
	EXPECT_STREQ("", self->f.log);
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
}

/* Lazy: set_ftrace_pid emptied while the filter waits, set before the scope. */
static void lazy_pid(struct __test_metadata *_metadata, struct pf_tracefs *t,
		     struct fake *f, const struct pf_tfs_config *c)
{
	ASSERT_EQ(0, pf_tracefs_save(t));
	ASSERT_EQ(0, pf_tracefs_setup(t, c));
	EXPECT_STREQ("32768\n", get(f, "set_ftrace_pid"));
	/* Setting what is set writes nothing. */
	f->log[0] = '\0';
	ASSERT_EQ(0, pf_tracefs_pid(t, true));
	EXPECT_STREQ("", f->log);
	ASSERT_EQ(0, pf_tracefs_pid(t, false));
	EXPECT_STREQ("no pid\n", get(f, "set_ftrace_pid"));
	EXPECT_EQ(1, t->pid_off);
	ASSERT_EQ(0, pf_tracefs_pid(t, false));
	ASSERT_EQ(0, pf_tracefs_pid(t, true));
	EXPECT_STREQ("32768\n", get(f, "set_ftrace_pid"));
	ASSERT_EQ(0, pf_tracefs_pid(t, false));
	EXPECT_EQ(0, pf_tracefs_restore(t, stderr));
}

TEST_F(tfs, lazy_pid)
{
	self->c.lazy = true;
	lazy_pid(_metadata, &self->t, &self->f, &self->c);
	EXPECT_STREQ("no pid\n", get(&self->f, "set_ftrace_pid"));
	expect_user_state(_metadata, &self->f);
}

/* The idle PID was set before: restored too, though setup wrote nothing. */
TEST_F(tfs, lazy_pid_was_set)
{
	put(&self->f, "set_ftrace_pid", "32768\n");
	self->c.lazy = true;
	lazy_pid(_metadata, &self->t, &self->f, &self->c);
	EXPECT_STREQ("32768\n", get(&self->f, "set_ftrace_pid"));
}

/* Lazy, every function: the filter emptied, patched when started. */
TEST_F(tfs, lazy_all)
{
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->c.lazy = true;
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	ASSERT_EQ(0, pf_tracefs_start(&self->t));
	EXPECT_EQ(1, self->t.lazy);
	EXPECT_STREQ("#### all functions enabled ####\nudp_rcv:traceoff:unlimited\n",
		     get(&self->f, "set_ftrace_filter"));
	EXPECT_STREQ("nop\n", get(&self->f, "current_tracer"));
	ASSERT_EQ(0, pf_tracefs_scope(&self->t));
	EXPECT_STREQ("function_graph\n", get(&self->f, "current_tracer"));
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
}

/* Started before saving: the same result. */
TEST_F(tfs, functions_prefetched)
{
	const char *const globs[] = { "ip_*", "nf_hook_slow", "veth_*:mod:veth" };

	self->c.globs = globs;
	self->c.nglobs = 3;
	ASSERT_EQ(0, pf_tracefs_prefetch(&self->t, &self->c));
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_NE(NULL, strstr(self->f.log, "set_ftrace_filter=1 2 4 5 6 9 11 12 13;"));
	EXPECT_EQ(1, self->t.by_index);
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
	/* Never joined by a setup: closing waits for it. */
	ASSERT_EQ(0, pf_tracefs_prefetch(&self->t, &self->c));
}

/* Without available_filter_functions: each entry its own write. */
TEST_F(tfs, functions_by_name)
{
	const char *const globs[] = { "ip_*", "nf_hook_slow", "veth_*:mod:veth" };

	unlink(path_of(&self->f, "available_filter_functions"));
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->c.globs = globs;
	self->c.nglobs = 3;
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_NE(NULL, strstr(self->f.log,
			       "set_ftrace_filter=udp_rcv;set_ftrace_filter=tcp_v4_rcv;set_ftrace_filter=ip_*;set_ftrace_filter=nf_hook_slow;set_ftrace_filter=veth_*:mod:veth;"));
	EXPECT_EQ(0, self->t.by_index);
	self->f.log[0] = '\0';
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	EXPECT_NE(NULL, strstr(self->f.log,
			       "set_ftrace_filter=ip_rcv;set_ftrace_filter=udp_rcv;set_ftrace_filter=veth_poll:mod:veth;set_ftrace_filter=foo*:mod:nfoo;"));
	expect_user_state(_metadata, &self->f);
}

/*
 * The numbers moved between the read and the write (a module came): what
 * ftrace then lists is not what was meant, read again, still not: the
 * globs are written as they are.
 */
TEST_F(tfs, numbers_moved)
{
	const char *const globs[] = { "ip_*", "!ip_output" };

	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->f.shift = 1;
	self->c.globs = globs;
	self->c.nglobs = 2;
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_NE(NULL, strstr(self->f.log,
			       "set_ftrace_filter=udp_rcv;set_ftrace_filter=tcp_v4_rcv;set_ftrace_filter=ip_*;set_ftrace_filter=!ip_output;"));
	EXPECT_EQ(0, self->t.by_index);
	self->f.shift = 0;
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
}

/* ---- the list kept between runs (tool/funcs_cache.c) ---- */

static const char *const kept_globs[] = { "ip_*", "nf_hook_slow",
					  "veth_*:mod:veth" };
#define KEPT_NUMBERS	"set_ftrace_filter=1 2 4 5 6 9 11 12 13;"
#define KEPT_FILTER	"ip_rcv\nudp_rcv\nip_output\ntcp_v4_rcv\nnf_hook_slow\nip_finish_output\nveth_poll [veth]\nveth_xmit [veth]\nip_local_deliver\nudp_rcv:traceoff:unlimited\n"

/*
 * One arming with the kept list at @cache, checked, and its restore; then
 * the tracefs opened anew for the next. Whether it took the kept copy.
 */
static int kept_run(struct __test_metadata *_metadata,
		    FIXTURE_DATA(tfs) *self, const char *cache)
{
	int used;

	setenv(PF_FCACHE_ENV, cache, 1);
	self->c.globs = kept_globs;
	self->c.nglobs = 3;
	self->f.log[0] = '\0';
	EXPECT_EQ(0, pf_tracefs_save(&self->t));
	EXPECT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_EQ(1, self->t.by_index);
	EXPECT_NE(NULL, strstr(self->f.log, KEPT_NUMBERS));
	EXPECT_STREQ(KEPT_FILTER, get(&self->f, "set_ftrace_filter"));
	used = self->t.by_kept_copy;
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
	pf_tracefs_close(&self->t);
	EXPECT_EQ(0, pf_tracefs_open(&self->t, self->f.root, "pktfilt"));
	self->t.hooks = &self->hooks;
	self->t.numbers_min = 1;
	return used;
}

static char *kept_path(FIXTURE_DATA(tfs) *self)
{
	static char buf[600];

	snprintf(buf, sizeof(buf), "%s/kept.functions", self->f.root);
	return buf;
}

/* @list kept under what the fake tracefs holds now. */
static void kept_store_list(FIXTURE_DATA(tfs) *self, const char *list)
{
	struct pf_fcache_state st;

	if (pf_fcache_state(self->f.root, self->f.root, &st) ||
	    pf_fcache_store(kept_path(self), &st, list, strlen(list)))
		abort();
	pf_fcache_state_free(&st);
}

/* The kernel's list with @skip left out, kept under today's key. */
static void kept_store(FIXTURE_DATA(tfs) *self, const char *skip)
{
	char buf[1024] = "";
	size_t i;

	for (i = 0; i < NAVAIL; i++) {
		if (skip && !strcmp(fake_avail[i], skip))
			continue;
		strcat(buf, fake_avail[i]);
		strcat(buf, "\n");
	}
	kept_store_list(self, buf);
}

/* Kept by the first arming (mode 0600), taken by the second. */
TEST_F(tfs, kept_list)
{
	struct stat st;

	EXPECT_EQ(0, kept_run(_metadata, self, kept_path(self)));
	ASSERT_EQ(0, stat(kept_path(self), &st));
	EXPECT_EQ(0600, st.st_mode & 0777);
	EXPECT_EQ(1, kept_run(_metadata, self, kept_path(self)));
	/* Written once: the copy's numbers were right. */
	EXPECT_EQ(NULL, strstr(strstr(self->f.log, KEPT_NUMBERS) + 1,
			       KEPT_NUMBERS));
}

/*
 * A copy under today's key whose numbers are wrong (a record missing: a
 * module went without changing what the key sees): the read-back tells,
 * the kernel's list is read and the right numbers written; kept anew.
 */
TEST_F(tfs, kept_list_stale)
{
	kept_store(self, "ip_output");
	EXPECT_EQ(0, kept_run(_metadata, self, kept_path(self)));
	/* The copy's numbers first, one off from the fourth on. */
	EXPECT_NE(NULL, strstr(self->f.log, "set_ftrace_filter=1 2 4 5 8 10 11 12;"));
	EXPECT_EQ(1, kept_run(_metadata, self, kept_path(self)));
}

/* Optional globs (the default scope's) that match nothing: the copy used. */
TEST_F(tfs, kept_list_optional)
{
	const char *const globs[] = { "ip_*", "nosuch_*", "nf_hook_slow",
				      "veth_*:mod:veth" };

	kept_store(self, NULL);
	setenv(PF_FCACHE_ENV, kept_path(self), 1);
	self->c.globs = globs;
	self->c.nglobs = 4;
	self->c.globs_optional = true;
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_EQ(1, self->t.by_index);
	EXPECT_EQ(1, self->t.by_kept_copy);
	EXPECT_STREQ(KEPT_FILTER, get(&self->f, "set_ftrace_filter"));
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
}

/* A copy that lacks what a glob names: the kernel's list decides. */
TEST_F(tfs, kept_list_glob_missing)
{
	kept_store(self, "nf_hook_slow");
	EXPECT_EQ(0, kept_run(_metadata, self, kept_path(self)));
	EXPECT_EQ(NULL, strstr(self->t.err, "refuses"));
}

/* Not used: another key, a damaged header, writable by others. */
TEST_F(tfs, kept_list_refused)
{
	struct pf_fcache_state st;
	char *buf;
	size_t len;
	FILE *fp;

	kept_store(self, NULL);
	ASSERT_EQ(0, pf_fcache_state(self->f.root, self->f.root, &st));
	ASSERT_EQ(2, st.nseg);
	ASSERT_EQ(0, pf_fcache_load(kept_path(self), &st, &buf, &len));
	EXPECT_EQ(strlen(buf), len);
	free(buf);
	st.seg[1].key++;	/* veth rebuilt */
	EXPECT_EQ(-ESTALE, pf_fcache_load(kept_path(self), &st, &buf, &len));
	st.seg[1].key--;
	st.total = NAVAIL + 1;	/* ftrace counts another record */
	EXPECT_EQ(-ESTALE, pf_fcache_load(kept_path(self), &st, &buf, &len));
	st.total = NAVAIL;
	ASSERT_EQ(0, pf_fcache_load(kept_path(self), &st, &buf, &len));
	free(buf);

	ASSERT_EQ(0, chmod(kept_path(self), 0622));
	EXPECT_EQ(-EINVAL, pf_fcache_load(kept_path(self), &st, &buf, &len));
	EXPECT_EQ(0, kept_run(_metadata, self, kept_path(self)));
	EXPECT_EQ(1, kept_run(_metadata, self, kept_path(self)));	/* kept anew, 0600 */

	/* The old format, and a segment's length past the end. */
	fp = fopen(kept_path(self), "w");
	ASSERT_NE(NULL, fp);
	fputs("pktfilt-functions 1 0 99999999999999999999\nip_rcv\n", fp);
	fclose(fp);
	ASSERT_EQ(0, chmod(kept_path(self), 0600));
	EXPECT_EQ(-EINVAL, pf_fcache_load(kept_path(self), &st, &buf, &len));
	EXPECT_EQ(0, kept_run(_metadata, self, kept_path(self)));

	fp = fopen(kept_path(self), "w");
	ASSERT_NE(NULL, fp);
	fprintf(fp, "pktfilt-functions 2\nsegment %016llx 1 100 vmlinux\nip_rcv\n",
		(unsigned long long)st.seg[0].key);
	fclose(fp);
	EXPECT_EQ(-EINVAL, pf_fcache_load(kept_path(self), &st, &buf, &len));
	EXPECT_EQ(0, kept_run(_metadata, self, kept_path(self)));
	pf_fcache_state_free(&st);
}

/* Keys of build IDs: not of the boot, nor of where a module was loaded. */
TEST_F(tfs, kept_list_key)
{
	struct pf_fcache_state a, b;

	put(&self->f, "proc/sys/kernel/random/boot_id", "one\n");
	ASSERT_EQ(0, pf_fcache_state(self->f.root, self->f.root, &a));
	put(&self->f, "proc/sys/kernel/random/boot_id", "two\n");
	put(&self->f, "proc/modules", "veth 40960 0 - Live 0xffffffffc0b00000\n");
	ASSERT_EQ(0, pf_fcache_state(self->f.root, self->f.root, &b));
	EXPECT_EQ(1, pf_fcache_state_eq(&a, &b));
	pf_fcache_state_free(&b);
	/* Without its build ID, a module's key is this boot's. */
	ASSERT_EQ(0, unlink(path_of(&self->f, "sys/module/veth/notes/.note.gnu.build-id")));
	ASSERT_EQ(0, pf_fcache_state(self->f.root, self->f.root, &b));
	EXPECT_EQ(a.seg[0].key, b.seg[0].key);
	EXPECT_NE(a.seg[1].key, b.seg[1].key);
	pf_fcache_state_free(&b);
	put(&self->f, "proc/modules", "veth 40960 0 - Loading 0xffffffffc0b00000\n");
	EXPECT_EQ(-EAGAIN, pf_fcache_state(self->f.root, self->f.root, &b));
	pf_fcache_state_free(&a);
}

/*
 * Segments: put in today's order of the modules (one reloaded comes
 * last), a line with no module stays with the one before it, and what
 * is not loaded now stays kept.
 */
TEST(kept_list_segments)
{
	struct pf_fcache_seg s3[] = { { "vmlinux", 1 }, { "m1", 2 }, { "m2", 3 } };
	struct pf_fcache_seg s2[] = { { "vmlinux", 1 }, { "m2", 3 }, { "m1", 2 } };
	struct pf_fcache_seg s1[] = { { "vmlinux", 1 }, { "m2", 3 } };
	struct pf_fcache_state st3 = { s3, 3, 5 }, st2 = { s2, 3, 5 };
	struct pf_fcache_state st1 = { s1, 2, 3 };
	const char *list = "a\nb\nx [m1]\ny [m2]\n__ftrace_invalid_address___9\n";
	char dir[] = "/tmp/kept_segments.XXXXXX", path[64], *buf;
	size_t len;

	ASSERT_NE(NULL, mkdtemp(dir));
	/* Its directories made as needed. */
	snprintf(path, sizeof(path), "%s/a/b/functions", dir);
	ASSERT_EQ(0, pf_fcache_store(path, &st3, list, strlen(list)));
	ASSERT_EQ(0, pf_fcache_load(path, &st3, &buf, &len));
	EXPECT_STREQ(list, buf);
	free(buf);
	ASSERT_EQ(0, pf_fcache_load(path, &st2, &buf, &len));
	EXPECT_STREQ("a\nb\ny [m2]\n__ftrace_invalid_address___9\nx [m1]\n", buf);
	free(buf);
	/*
	 * Loaded at once, m1 and m2 took their places in ftrace's list and
	 * /proc/modules in different orders: the list's order is kept, and
	 * used while /proc/modules reads the same.
	 */
	ASSERT_EQ(0, pf_fcache_store(path, &st2, list, strlen(list)));
	ASSERT_EQ(0, pf_fcache_load(path, &st2, &buf, &len));
	EXPECT_STREQ(list, buf);
	free(buf);
	ASSERT_EQ(0, pf_fcache_load(path, &st3, &buf, &len));
	EXPECT_STREQ(list, buf);
	free(buf);
	/* A module named twice apart, or one not loaded: not kept. */
	list = "a\nx [m1]\ny [m2]\nw [m1]\nv\n";
	EXPECT_EQ(-ESTALE, pf_fcache_store(path, &st2, list, strlen(list)));
	list = "a\nb\nx [m1]\ny [m3]\nv\n";
	EXPECT_EQ(-ESTALE, pf_fcache_store(path, &st2, list, strlen(list)));
	/* m1 gone: its segment stays for later. */
	ASSERT_EQ(0, pf_fcache_store(path, &st1, "a\nb\nz [m2]\n", 11));
	ASSERT_EQ(0, pf_fcache_load(path, &st1, &buf, &len));
	EXPECT_STREQ("a\nb\nz [m2]\n", buf);
	free(buf);
	st2.total = 4;
	ASSERT_EQ(0, pf_fcache_load(path, &st2, &buf, &len));
	EXPECT_STREQ("a\nb\nz [m2]\nx [m1]\n", buf);
	free(buf);
	/* A line that does not end: not kept. */
	EXPECT_EQ(-EINVAL, pf_fcache_store(path, &st1, "a\nb\nz [m2]", 10));
	unlink(path);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/a", dir);
	rmdir(path);
	rmdir(dir);
}

/* PKTFILT_CACHE=none: nothing kept. */
TEST_F(tfs, kept_list_off)
{
	kept_run(_metadata, self, "none");
	EXPECT_NE(0, access(kept_path(self), F_OK));
}

/* Negation, a record no symbol owns, a module's functions, duplicates. */
TEST_F(tfs, functions_forms)
{
	const char *const globs[] = { "ip_*", "!ip_output", "*_xmit:mod:veth",
				      "dup_fn", "__*" };

	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->c.globs = globs;
	self->c.nglobs = 5;
	self->c.globs_optional = true;	/* "__*" matches nothing */
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_NE(NULL, strstr(self->f.log, "set_ftrace_filter=1 2 5 8 9 10 12 13;"));
	EXPECT_EQ(8, self->t.nfuncs);
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);

	self->c.globs_optional = false;
	EXPECT_EQ(PF_TFS_EGLOB, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_NE(NULL, strstr(self->t.err, "'__*'"));
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
}

/* Entries apply in order: the last that matches a function decides. */
TEST_F(tfs, functions_order)
{
	const char *const globs[] = { "ip_rcv", "!ip_*", "ip_output", "dup_fn",
				      "!dup_*", "dup_fn", "skb_put", "!skb_put" };

	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->c.globs = globs;
	self->c.nglobs = 8;
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_NE(NULL, strstr(self->f.log, "set_ftrace_filter=2 4 5 8 10;"));
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
}

/*
 * What the matcher cannot decide goes to ftrace as it is: a number, a
 * probe command, a :mod: glob no loaded module has (ftrace keeps it for
 * the module).
 */
TEST_F(tfs, functions_for_ftrace)
{
	const char *const cases[][2] = {
		{ "ip_rcv", "7" },
		{ "ip_rcv", "nf_hook_slow:traceoff" },
		{ "ip_rcv", "foo_*:mod:nfoo" },
	};
	char want[256];
	size_t i;

	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		self->c.globs = cases[i];
		self->c.nglobs = 2;
		self->f.log[0] = '\0';
		ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
		snprintf(want, sizeof(want), "set_ftrace_filter=ip_rcv;set_ftrace_filter=%s;",
			 cases[i][1]);
		EXPECT_NE(NULL, strstr(self->f.log, want)) {
			TH_LOG("%s: %s", cases[i][1], self->f.log);
		}
		EXPECT_EQ(0, self->t.by_index);
		EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
		expect_user_state(_metadata, &self->f);
	}
}

/*
 * Functions named alike: restored by number, exactly those that were set
 * (by name, ftrace would set every one of that name); which of them, the
 * order tells.
 */
TEST_F(tfs, restore_duplicates)
{
	put(&self->f, "set_ftrace_filter",
	    "udp_rcv\ndup_fn\nveth_xmit [veth]\nudp_rcv:traceoff:unlimited\n");
	/* The second dup_fn (10), after ip_finish_output (9). */
	put(&self->f, "set_ftrace_notrace", "ip_finish_output\ndup_fn\n");
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	self->t.set[pf_tfs_find(&self->t, "set_ftrace_filter")].touched = true;
	self->f.log[0] = '\0';
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	EXPECT_NE(NULL, strstr(self->f.log, "set_ftrace_filter=2 8 12;"));
	EXPECT_NE(NULL, strstr(self->f.log, "set_ftrace_notrace=9 10;"));
	EXPECT_STREQ("udp_rcv\ndup_fn\nveth_xmit [veth]\nudp_rcv:traceoff:unlimited\n",
		     get(&self->f, "set_ftrace_filter"));
	EXPECT_STREQ("ip_finish_output\ndup_fn\n", get(&self->f, "set_ftrace_notrace"));
}

/* A glob the kernel refuses is named, and everything goes back. */
TEST_F(tfs, bad_glob)
{
	const char *const globs[] = { "ip_*", "nosuch_fn*", "nf_*" };

	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->c.globs = globs;
	self->c.nglobs = 3;
	EXPECT_EQ(PF_TFS_EGLOB, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_NE(NULL, strstr(self->t.err, "'nosuch_fn*'"));
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
}

/* The default scope: a glob nothing matches is left out, not refused. */
TEST_F(tfs, optional_globs)
{
	const char *const globs[] = { "ip_*", "nosuch_fn*", "nf_*" };

	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->c.globs = globs;
	self->c.nglobs = 3;
	self->c.globs_optional = true;
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_NE(NULL, strstr(self->f.log, "set_ftrace_filter=1 2 4 5 6 9 13;"));
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
}

/* A handler ftrace cannot trace is noted; none at all is an error. */
TEST_F(tfs, roots)
{
	const char *const some[] = { "udp_rcv", "tcp_v6_rcv" };
	const char *const none[] = { "bad_one", "bad_two" };

	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->c.roots = some;
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_STREQ("tcp_v6_rcv", self->t.note);
	EXPECT_STREQ("udp_rcv\n", get(&self->f, "set_graph_function"));
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));

	self->c.roots = none;
	EXPECT_EQ(PF_TFS_ENOROOT, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_NE(NULL, strstr(self->t.err, "bad_one"));
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
}

/* A write failing in the middle of setup: what was done is undone. */
TEST_F(tfs, failure_midway)
{
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	snprintf(self->f.fail_rel, sizeof(self->f.fail_rel), "buffer_size_kb");
	self->f.fail_err = -ENOMEM;
	self->c.buffer_kb = 8192;
	EXPECT_EQ(-ENOMEM, pf_tracefs_setup(&self->t, &self->c));
	self->f.fail_rel[0] = '\0';
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
}

/*
 * --args, --retval on a kernel without the option (Debian's 6.12 has no
 * funcgraph-args, its 7.2 no funcgraph-retval): refused before anything
 * is written, the config option named.
 */
TEST_F(tfs, args_retval_absent)
{
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->c.args = true;
	EXPECT_EQ(PF_TFS_ENOARGS, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_NE(NULL, strstr(self->t.err, "--args: "));
	EXPECT_NE(NULL, strstr(self->t.err, "this kernel lacks CONFIG_FUNCTION_TRACE_ARGS"));
	EXPECT_EQ(0, self->f.writes);
	self->c.args = false;
	self->c.retval = true;
	EXPECT_EQ(PF_TFS_ENORETVAL, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_NE(NULL, strstr(self->t.err, "--retval: "));
	EXPECT_NE(NULL, strstr(self->t.err, "this kernel lacks CONFIG_FUNCTION_GRAPH_RETVAL"));
	EXPECT_EQ(0, self->f.writes);
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
}

/*
 * With the options: on at setup, while the tracer is nop (turning
 * funcgraph-args on under function_graph registers it again),
 * funcgraph-retval-hex off (errors in decimal); all back afterwards.
 */
TEST_F(tfs, args_retval_set)
{
	const char *tracer;

	put(&self->f, "options/funcgraph-args", "0\n");
	put(&self->f, "options/funcgraph-retval", "0\n");
	put(&self->f, "options/funcgraph-retval-hex", "1\n");
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->c.args = true;
	self->c.retval = true;
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_STREQ("1\n", get(&self->f, "options/funcgraph-args"));
	EXPECT_STREQ("1\n", get(&self->f, "options/funcgraph-retval"));
	EXPECT_STREQ("0\n", get(&self->f, "options/funcgraph-retval-hex"));
	ASSERT_EQ(0, pf_tracefs_start(&self->t));
	tracer = strstr(self->f.log, "current_tracer=function_graph");
	ASSERT_NE(NULL, tracer);
	ASSERT_NE(NULL, strstr(self->f.log, "options/funcgraph-args=1"));
	EXPECT_LT(strstr(self->f.log, "options/funcgraph-args=1"), tracer);
	EXPECT_LT(strstr(self->f.log, "options/funcgraph-retval=1"), tracer);
	ASSERT_EQ(0, pf_tracefs_stop(&self->t));
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	EXPECT_STREQ("0\n", get(&self->f, "options/funcgraph-args"));
	EXPECT_STREQ("0\n", get(&self->f, "options/funcgraph-retval"));
	EXPECT_STREQ("1\n", get(&self->f, "options/funcgraph-retval-hex"));
	expect_user_state(_metadata, &self->f);
}

/* Without --args, an option left on by the user is turned off. */
TEST_F(tfs, args_off_by_default)
{
	put(&self->f, "options/funcgraph-args", "1\n");
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_STREQ("0\n", get(&self->f, "options/funcgraph-args"));
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	EXPECT_STREQ("1\n", get(&self->f, "options/funcgraph-args"));
}

/* Someone changes a setting meanwhile: the check says so. */
TEST_F(tfs, verify_detects_change)
{
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	put(&self->f, "tracing_thresh", "100\n");
	EXPECT_EQ(1, pf_tracefs_restore(&self->t, NULL));
}

/* An unused ring buffer: "7 (expanded: 1408)" reads 1408 after use. */
TEST_F(tfs, unexpanded_buffer)
{
	put(&self->f, "buffer_size_kb", "7 (expanded: 1408)\n");
	put(&self->f, "per_cpu/cpu0/buffer_size_kb", "7\n");
	put(&self->f, "per_cpu/cpu1/buffer_size_kb", "7\n");
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->c.buffer_kb = 4096;
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_STREQ("4096\n", get(&self->f, "buffer_size_kb"));
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	EXPECT_STREQ("1408\n", get(&self->f, "buffer_size_kb"));
	EXPECT_STREQ("1408\n", get(&self->f, "per_cpu/cpu0/buffer_size_kb"));
	/* The kernel reads 1408 KiB back as whole pages: 1410. */
	put(&self->f, "buffer_size_kb", "1410\n");
	put(&self->f, "per_cpu/cpu0/buffer_size_kb", "1410\n");
	put(&self->f, "per_cpu/cpu1/buffer_size_kb", "1410\n");
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	/* But not any size. */
	put(&self->f, "per_cpu/cpu1/buffer_size_kb", "4096\n");
	EXPECT_EQ(1, pf_tracefs_restore(&self->t, NULL));
}

/* An empty filter is written only if it names functions now. */
TEST_F(tfs, untouched_when_already_right)
{
	put(&self->f, "set_ftrace_filter",
	    "#### all functions enabled ####\nudp_rcv:traceoff:unlimited\n");
	put(&self->f, "set_ftrace_pid", "32768\n");
	put(&self->f, "options/funcgraph-irqs", "0\n");
	put(&self->f, "events/pktfilt/enable", "1\n");
	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_EQ(NULL, strstr(self->f.log, "set_ftrace_filter"));
	EXPECT_EQ(NULL, strstr(self->f.log, "set_ftrace_pid"));
	EXPECT_EQ(NULL, strstr(self->f.log, "funcgraph-irqs"));
	EXPECT_EQ(NULL, strstr(self->f.log, "events/pktfilt/enable"));
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
}

/* The lost-event counters of per_cpu/cpuN/stats. */
TEST_F(tfs, lost_counters)
{
	uint64_t lost[NCPUS];

	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	ASSERT_EQ(0, pf_tracefs_lost(&self->t, lost));
	EXPECT_EQ(5, lost[0]);
	EXPECT_EQ(3, lost[1]);
}

/* Without the module's events there is nothing to do: said so. */
TEST_F(tfs, no_module)
{
	rm_tree(path_of(&self->f, "events"));
	EXPECT_EQ(-ENOENT, pf_tracefs_save(&self->t));
	EXPECT_NE(NULL, strstr(self->t.err, "module loaded"));
}

/* ---- the glob matcher against the kernel's own code ---- */

/*
 * The reference: Linux 6.1's code as it is, on NUL-terminated strings
 * (filter_parse_regex() of kernel/trace/trace_events_filter.c; ftrace_match(),
 * ftrace_match_record(), match_records() and ftrace_process_regex() of
 * kernel/trace/ftrace.c; glob_match() of lib/glob.c), with kallsyms_lookup()
 * made "name [mod]" split and lookup_ip()'s failure an invalid address.
 */
enum { K_FULL, K_FRONT, K_MIDDLE, K_END, K_GLOB, K_INDEX };

static int k_parse_regex(char *buff, int len, char **search, int *not)
{
	int type = K_FULL;
	int i;

	if (buff[0] == '!') {
		*not = 1;
		buff++;
		len--;
	} else
		*not = 0;
	*search = buff;
	if (isdigit((unsigned char)buff[0]))
		return K_INDEX;
	for (i = 0; i < len; i++) {
		if (buff[i] == '*') {
			if (!i) {
				type = K_END;
			} else if (i == len - 1) {
				if (type == K_END)
					type = K_MIDDLE;
				else
					type = K_FRONT;
				buff[i] = 0;
				break;
			} else {
				return K_GLOB;
			}
		} else if (strchr("[?\\", buff[i])) {
			return K_GLOB;
		}
	}
	if (buff[0] == '*')
		*search = buff + 1;
	return type;
}

static bool k_glob_match(char const *pat, char const *str)
{
	char const *back_pat = NULL, *back_str = NULL;

	for (;;) {
		unsigned char c = *str++;
		unsigned char d = *pat++;

		switch (d) {
		case '?':
			if (c == '\0')
				return false;
			break;
		case '*':
			if (*pat == '\0')
				return true;
			back_pat = pat;
			back_str = --str;
			break;
		case '[': {
			bool match = false, inverted = (*pat == '!');
			char const *class = pat + inverted;
			unsigned char a = *class++;

			do {
				unsigned char b = a;

				if (a == '\0')
					goto literal;
				if (class[0] == '-' && class[1] != ']') {
					b = class[1];
					if (b == '\0')
						goto literal;
					class += 2;
				}
				match |= (a <= c && c <= b);
			} while ((a = *class++) != ']');
			if (match == inverted)
				goto backtrack;
			pat = class;
			}
			break;
		case '\\':
			d = *pat++;
			/* fall through */
		default:
literal:
			if (c == d) {
				if (d == '\0')
					return true;
				break;
			}
backtrack:
			if (c == '\0' || !back_pat)
				return false;
			pat = back_pat;
			str = ++back_str;
			break;
		}
	}
}

struct k_glob {
	char *search;
	int len;
	int type;
};

static int k_match(char *str, struct k_glob *g)
{
	int slen;

	switch (g->type) {
	case K_FULL:
		return strcmp(str, g->search) == 0;
	case K_FRONT:
		return strncmp(str, g->search, g->len) == 0;
	case K_MIDDLE:
		return strstr(str, g->search) != NULL;
	case K_END:
		slen = strlen(str);
		return slen >= g->len &&
		       memcmp(str + slen - g->len, g->search, g->len) == 0;
	case K_GLOB:
		return k_glob_match(g->search, str);
	}
	return 0;
}

static int k_match_record(const char *line, struct k_glob *func_g,
			  struct k_glob *mod_g, int exclude_mod)
{
	char str[256], modbuf[256], *modname = NULL, *sp;

	if (!strncmp(line, "__ftrace_invalid_address__", 26))
		return 0;	/* lookup_ip() fails */
	snprintf(str, sizeof(str), "%s", line);
	sp = strchr(str, ' ');
	if (sp) {
		*sp = '\0';
		snprintf(modbuf, sizeof(modbuf), "%s", sp + 2);
		modbuf[strlen(modbuf) - 1] = '\0';
		modname = modbuf;
	}
	if (mod_g) {
		int mod_matches = (modname) ? k_match(modname, mod_g) : 0;

		if (!mod_g->len) {
			if (!exclude_mod != !modname)
				goto func_match;
			return 0;
		}
		if (!mod_matches == !exclude_mod)
			return 0;
func_match:
		if (!func_g->len)
			return 1;
	}
	return k_match(str, func_g);
}

/*
 * What writing @text alone to set_ftrace_filter does to @line: 1 adds
 * it, -1 removes it, 0 neither; *@refused when ftrace refuses @text, *@other
 * when it is not a function glob (a number, a probe).
 */
static int k_entry(const char *text, const char *line, bool *other)
{
	char buf[256], *func, *next = buf, *command, *mod = NULL;
	struct k_glob func_g = { .type = K_FULL }, mod_g = { .type = K_FULL };
	int clear_filter = 0, exclude_mod = 0;

	/*
	 * glob_match() lets "[!...]" match the name's NUL and reads on past
	 * it, into what the buffer held before: not decidable.
	 */
	*other = strstr(text, "[!") != NULL;
	if (*other)
		return 0;
	snprintf(buf, sizeof(buf), "%s", text);
	func = strsep(&next, ":");
	if (next) {
		command = strsep(&next, ":");
		if (strcmp(command, "mod") || !next) {
			*other = true;
			return 0;
		}
		mod = next;
	}
	func_g.type = k_parse_regex(func, strlen(func), &func_g.search,
				    &clear_filter);
	func_g.len = strlen(func_g.search);
	if (mod) {
		mod_g.type = k_parse_regex(mod, strlen(mod), &mod_g.search,
					   &exclude_mod);
		mod_g.len = strlen(mod_g.search);
	}
	if (func_g.type == K_INDEX) {
		*other = true;
		return 0;
	}
	if (!k_match_record(line, &func_g, mod ? &mod_g : NULL, exclude_mod))
		return 0;
	return clear_filter ? -1 : 1;
}

static unsigned int rnd_state = 12345;

static unsigned int rnd(unsigned int n)
{
	rnd_state = rnd_state * 1103515245 + 12345;
	return (rnd_state >> 16) % n;
}

/* Globs and names of the same few letters, so that many match. */
static void rnd_str(char *out, const char *alphabet, unsigned int maxlen)
{
	unsigned int len = rnd(maxlen + 1), i, n = strlen(alphabet);

	for (i = 0; i < len; i++)
		out[i] = alphabet[rnd(n)];
	out[len] = '\0';
}

static void expect_same(struct __test_metadata *_metadata, const char *glob,
			const char *line)
{
	struct pf_tfs_glob g;
	bool other;
	int want = k_entry(glob, line, &other);
	int err = pf_tfs_glob_parse(&g, glob);

	if (other) {
		EXPECT_EQ(-EINVAL, err) {
			TH_LOG("'%s': ftrace does not take it as a glob", glob);
		}
		return;
	}
	ASSERT_EQ(0, err) {
		TH_LOG("'%s' refused", glob);
	}
	EXPECT_EQ(want != 0, pf_tfs_glob_match(&g, line)) {
		TH_LOG("'%s' against '%s': ftrace says %d", glob, line, want);
	}
	EXPECT_EQ(want < 0 || (!want && g.clear), g.clear) {
		TH_LOG("'%s': removes?", glob);
	}
	pf_tfs_glob_free(&g);
}

/* Every form of entry against every kind of line, as ftrace decides. */
TEST(glob_matches_ftrace)
{
	static const char *const lines[] = {
		"ip_rcv", "ip_rcv_finish", "__ip_rcv", "udp_rcv", "udpv6_rcv",
		"tcp_v4_rcv", "tcp_v6_rcv", "tcp_v4_do_rcv", "a", "ab*c",
		"a[b]c", "a?c", "a\\b", "veth_poll [veth]", "veth_xmit [veth]",
		"udp_tunnel_xmit_skb [udp_tunnel]", "nf_conntrack_in [nf_conntrack]",
		"vlan_dev_hard_start_xmit [8021q]", "__ftrace_invalid_address___84",
		"_raw_spin_lock", "_raw_spin_lock_bh", "kfree", "kfree_skb_reason",
	};
	static const char *const globs[] = {
		"ip_rcv", "ip_*", "*_rcv", "*rcv*", "*", "**", "***", "ip_*_finish",
		"ip_rcv*", "*ip*rcv", "?dp_rcv", "udp?6_rcv", "tcp_v[46]_rcv",
		"tcp_v[!4]_*", "tcp_v[4-6]_*", "[]x]*", "[!]*", "a\\?c", "a\\\\b",
		"a[b]c", "a\\[b]c", "ab\\*c", "ab*c", "[", "[a", "a[", "\\", "!ip_*",
		"!*", "!", "!!ip_rcv", ":mod:veth", "*:mod:veth", "*:mod:v*",
		"*:mod:!veth", ":mod:", ":mod:!", "*_xmit*:mod:*", "!*:mod:veth",
		"veth_*:mod:veth", "*:mod:8021q", "*:mod:[8]021q", "ip_rcv:mod:",
		"*:mod:*conn*", "*:mod:udp_tunnel", "*:mod:udp_tun*", "_raw_spin_lock*",
		"kfree", "kfree*", "*free", "kfree_skb*", "7", "!7", "ip_rcv:traceoff",
		"ip_rcv:traceoff:5", "ip_rcv:mod", "__ftrace_invalid*", "__*",
		"*[", "*a[", "*?", "?*", "*\\*", "a*b*c",
	};
	char g[16], l[16];
	size_t i, j;
	int k;

	for (i = 0; i < sizeof(globs) / sizeof(globs[0]); i++)
		for (j = 0; j < sizeof(lines) / sizeof(lines[0]); j++)
			expect_same(_metadata, globs[i], lines[j]);
	/* Random ones, of letters that make every form. */
	for (k = 0; k < 200000; k++) {
		rnd_str(g, "ab*?[]!-\\", 6);
		rnd_str(l, "ab-]![", 5);
		if (!l[0])
			strcpy(l, "a");	/* no symbol is "" */
		if (rnd(4) == 0)
			strcat(l, rnd(2) ? " [ab]" : " [b]");
		if (rnd(8) == 0)
			strcat(g, rnd(2) ? ":mod:a*" : ":mod:!b");
		expect_same(_metadata, g, l);
	}
}

/* ---- tool/trace_scope.c's helpers ---- */

static size_t roots_at(struct pf_spec *s, __u32 stages, char *out,
		       size_t len)
{
	const char *r[16];
	size_t n = pf_trace_roots(s, stages, PKTFILT_GENL_VERSION, r, 16), i;

	out[0] = '\0';
	for (i = 0; i < n; i++) {
		strncat(out, r[i], len - strlen(out) - 2);
		strcat(out, " ");
	}
	return n;
}

/* At l4, as a version 1 module traces (stages 0). */
static size_t roots_of(struct pf_spec *s, char *out, size_t len)
{
	char again[256];
	size_t n = roots_at(s, 0, out, len);

	/* 0 is l4. */
	roots_at(s, 1U << PKTFILT_STAGE_L4, again, sizeof(again));
	if (strcmp(out, again))
		return (size_t)-1;
	return n;
}

TEST(roots_by_predicates)
{
	struct pf_spec s;
	char buf[256];

	memset(&s, 0, sizeof(s));
	EXPECT_EQ(6, roots_of(&s, buf, sizeof(buf)));
	EXPECT_STREQ("tcp_v4_rcv udp_rcv icmp_rcv tcp_v6_rcv udpv6_rcv icmpv6_rcv ", buf);

	s.proto = 17;
	roots_of(&s, buf, sizeof(buf));
	EXPECT_STREQ("udp_rcv udpv6_rcv ", buf);

	s.daddr.family = PF_FAMILY_IPV4;
	roots_of(&s, buf, sizeof(buf));
	EXPECT_STREQ("udp_rcv ", buf);

	memset(&s, 0, sizeof(s));
	s.saddr.family = PF_FAMILY_IPV6;
	roots_of(&s, buf, sizeof(buf));
	EXPECT_STREQ("tcp_v6_rcv udpv6_rcv icmpv6_rcv ", buf);

	memset(&s, 0, sizeof(s));
	s.dport.set = 1;
	roots_of(&s, buf, sizeof(buf));
	EXPECT_STREQ("tcp_v4_rcv udp_rcv tcp_v6_rcv udpv6_rcv ", buf);

	memset(&s, 0, sizeof(s));
	s.proto = 1;
	roots_of(&s, buf, sizeof(buf));
	EXPECT_STREQ("icmp_rcv ", buf);
	s.proto = 58;
	roots_of(&s, buf, sizeof(buf));
	EXPECT_STREQ("icmpv6_rcv ", buf);
}

/* rx and tx: any protocol, by address family only. */
TEST(roots_by_stages)
{
	const __u32 rx = 1U << PKTFILT_STAGE_RX, tx = 1U << PKTFILT_STAGE_TX;
	const __u32 l4 = 1U << PKTFILT_STAGE_L4;
	const char *r3[3];
	struct pf_spec s;
	char buf[256];
	size_t n;

	memset(&s, 0, sizeof(s));
	EXPECT_EQ(3, roots_at(&s, rx, buf, sizeof(buf)));
	EXPECT_STREQ("netif_receive_skb_core ip_rcv ipv6_rcv ", buf);
	EXPECT_EQ(1, roots_at(&s, tx, buf, sizeof(buf)));
	EXPECT_STREQ("nf_hook_slow ", buf);
	EXPECT_EQ(10, roots_at(&s, l4 | rx | tx, buf, sizeof(buf)));
	EXPECT_STREQ("tcp_v4_rcv udp_rcv icmp_rcv tcp_v6_rcv udpv6_rcv icmpv6_rcv netif_receive_skb_core ip_rcv ipv6_rcv nf_hook_slow ", buf);

	/* Ports and protocols do not narrow rx or tx: all go through. */
	s.proto = 17;
	s.dport.set = 1;
	roots_at(&s, rx | tx, buf, sizeof(buf));
	EXPECT_STREQ("netif_receive_skb_core ip_rcv ipv6_rcv nf_hook_slow ", buf);
	roots_at(&s, l4 | tx, buf, sizeof(buf));
	EXPECT_STREQ("udp_rcv udpv6_rcv nf_hook_slow ", buf);

	/* The address family and ICMP's do, but not the device's root. */
	memset(&s, 0, sizeof(s));
	s.daddr.family = PF_FAMILY_IPV6;
	roots_at(&s, rx | tx, buf, sizeof(buf));
	EXPECT_STREQ("netif_receive_skb_core ipv6_rcv nf_hook_slow ", buf);
	memset(&s, 0, sizeof(s));
	s.proto = 1;
	roots_at(&s, rx | tx, buf, sizeof(buf));
	EXPECT_STREQ("netif_receive_skb_core ip_rcv nf_hook_slow ", buf);
	s.proto = 58;
	roots_at(&s, rx, buf, sizeof(buf));
	EXPECT_STREQ("netif_receive_skb_core ipv6_rcv ", buf);

	/* A module of version 4 or older: tx sent the packet again. */
	memset(&s, 0, sizeof(s));
	s.daddr.family = PF_FAMILY_IPV4;
	n = pf_trace_roots(&s, tx, 4, r3, 3);
	EXPECT_EQ(1, n);
	EXPECT_STREQ("ip_local_out", r3[0]);
	n = pf_trace_roots(&s, tx, 5, r3, 3);
	EXPECT_EQ(1, n);
	EXPECT_STREQ("nf_hook_slow", r3[0]);

	/* Only the first @max, but the count of all. */
	memset(&s, 0, sizeof(s));
	EXPECT_EQ(10, pf_trace_roots(&s, l4 | rx | tx, PKTFILT_GENL_VERSION, r3, 3));
	EXPECT_STREQ("icmp_rcv", r3[2]);
}

/*
 * The default scope: globs as set_ftrace_filter takes them (no blanks,
 * no commas, no empty one), each told in 'pktfilt trace --help'.
 */
TEST(default_scope)
{
	size_t i;

	for (i = 0; pf_trace_default_scope[i]; i++) {
		const char *g = pf_trace_default_scope[i], *p = pf_trace_help;
		size_t len = strlen(g);
		int told = 0;

		EXPECT_NE(0, len);
		EXPECT_EQ(NULL, strpbrk(g, " ,\t\n"));
		/* A word of the SCOPE table: a blank before, a blank or EOL after. */
		while (!told && (p = strstr(p + 1, g)))
			told = p[-1] == ' ' && (p[len] == ' ' || p[len] == '\n');
		EXPECT_EQ(1, told) {
			TH_LOG("'%s' is not in pktfilt trace --help", g);
		}
	}
	EXPECT_LT(10, i);
}

TEST(buffer_size)
{
	EXPECT_EQ(1024, pf_trace_buffer_kb(1, 2, 0, false));
	EXPECT_EQ(3072, pf_trace_buffer_kb(3, 2, 1000000, false));
	EXPECT_EQ(16384, pf_trace_buffer_kb(0, 2, 0, false));
	EXPECT_EQ(65536, pf_trace_buffer_kb(1000, 2, 0, false));
	EXPECT_EQ(65536, pf_trace_buffer_kb(4000000000U, 2, 0, false));
	/* A quarter of 800 MB over 2 CPUs: 100 MB each, so 64 MB. */
	EXPECT_EQ(65536, pf_trace_buffer_kb(100, 2, 800 * 1024, false));
	/* A quarter of 256 MB over 8 CPUs: 8 MB each. */
	EXPECT_EQ(8192, pf_trace_buffer_kb(100, 8, 256 * 1024, false));
	/* funcgraph-args: half as much again, within the same bounds. */
	EXPECT_EQ(1536, pf_trace_buffer_kb(1, 2, 0, true));
	EXPECT_EQ(24576, pf_trace_buffer_kb(0, 2, 0, true));
	EXPECT_EQ(65536, pf_trace_buffer_kb(42, 2, 0, true));
	EXPECT_EQ(62976, pf_trace_buffer_kb(41, 2, 0, true));
	EXPECT_EQ(8192, pf_trace_buffer_kb(100, 8, 256 * 1024, true));
}

TEST_HARNESS_MAIN
