// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of tool/tracefs.c (save, set up, restore) on a fake tracefs:
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
 * Also the pure helpers of tool/tracecmd.c: which handlers a filter reaches,
 * and the ring buffer size.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "tracefs.h"
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
};

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
	memset(&self->c, 0, sizeof(self->c));
	self->c.idle_pid = 32768;
	self->c.roots = roots4;
	self->c.nroots = 2;
	self->c.buffer_kb = 1024;
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
	/* Each entry its own write; a module's function as f:mod:m; no probe. */
	EXPECT_NE(NULL, strstr(self->f.log,
			       "set_ftrace_filter=ip_rcv;set_ftrace_filter=udp_rcv;set_ftrace_filter=veth_poll:mod:veth;set_ftrace_filter=foo*:mod:nfoo;"));
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

/* --functions: the handlers and the globs, each on its own. */
TEST_F(tfs, functions)
{
	const char *const globs[] = { "ip_*", "nf_hook_slow", "veth_*:mod:veth" };

	ASSERT_EQ(0, pf_tracefs_save(&self->t));
	self->c.globs = globs;
	self->c.nglobs = 3;
	ASSERT_EQ(0, pf_tracefs_setup(&self->t, &self->c));
	EXPECT_NE(NULL, strstr(self->f.log,
			       "set_ftrace_filter=udp_rcv;set_ftrace_filter=tcp_v4_rcv;set_ftrace_filter=ip_*;set_ftrace_filter=nf_hook_slow;set_ftrace_filter=veth_*:mod:veth;"));
	EXPECT_EQ(0, pf_tracefs_restore(&self->t, stderr));
	expect_user_state(_metadata, &self->f);
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
	EXPECT_NE(NULL, strstr(self->f.log,
			       "set_ftrace_filter=ip_*;set_ftrace_filter=nosuch_fn*;set_ftrace_filter=nf_*;"));
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

/* ---- tool/tracecmd.c's helpers ---- */

static size_t roots_of(struct pf_spec *s, char *out, size_t len)
{
	const char *r[8];
	size_t n = pf_trace_roots(s, r, 8), i;

	out[0] = '\0';
	for (i = 0; i < n; i++) {
		strncat(out, r[i], len - strlen(out) - 2);
		strcat(out, " ");
	}
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
	EXPECT_EQ(1024, pf_trace_buffer_kb(1, 2, 0));
	EXPECT_EQ(3072, pf_trace_buffer_kb(3, 2, 1000000));
	EXPECT_EQ(16384, pf_trace_buffer_kb(0, 2, 0));
	EXPECT_EQ(65536, pf_trace_buffer_kb(1000, 2, 0));
	EXPECT_EQ(65536, pf_trace_buffer_kb(4000000000U, 2, 0));
	/* A quarter of 800 MB over 2 CPUs: 100 MB each, so 64 MB. */
	EXPECT_EQ(65536, pf_trace_buffer_kb(100, 2, 800 * 1024));
	/* A quarter of 256 MB over 8 CPUs: 8 MB each. */
	EXPECT_EQ(8192, pf_trace_buffer_kb(100, 8, 256 * 1024));
}

TEST_HARNESS_MAIN
