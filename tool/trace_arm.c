// SPDX-License-Identifier: GPL-2.0
/*
 * "pktfilt trace", steps 2 and 3: tracefs set up for function_graph (the
 * scope, the graph roots, the buffer, the idle PID), then the filter armed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "pktfilt.h"
#include "nl.h"
#include "show.h"
#include "tracecmd.h"
#include "tracefs.h"
#include "trace_run.h"

static unsigned long mem_available_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[128];
	unsigned long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static long pid_max(void)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
	long v = 0;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v > 0 ? v : 4194304;	/* PID_MAX_LIMIT: no PID is that */
}

/*
 * set_ftrace_pid's idle PID: pid_max. Before 5.17 (Debian 11's 5.10) the
 * PID list is a bitmap of pid_max bits that refuses pid_max: pid_max - 1,
 * the PID a task gets last, once the PIDs wrap.
 */
static long idle_pid(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (!uname(&u) && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	    (major < 5 || (major == 5 && minor < 17)))
		return pid_max() - 1;
	return pid_max();
}

/*
 * tracefs's configuration for this run: the roots into @roots (@nroots
 * at most), the scope, lazy unless --eager (and the module knows it).
 */
void trace_tfs_config(struct trace_run *r, struct pf_tfs_config *c,
		      const char **roots, size_t nroots)
{
	memset(c, 0, sizeof(*c));
	c->idle_pid = (pid_t)idle_pid();
	c->nroots = pf_trace_roots(&r->o.filter.spec, r->o.filter.stages,
				   r->version, roots, nroots);
	c->roots = roots;
	if (r->o.functions) {
		c->globs = (const char *const *)r->o.globs;
		c->nglobs = r->o.nglobs;
	} else if (!r->o.all_functions) {
		c->globs = pf_trace_default_scope;
		while (c->globs[c->nglobs])
			c->nglobs++;
		c->globs_optional = true;
	}
	c->lazy = !r->o.eager && r->version >= 4;
	c->args = r->o.args;
	c->retval = r->o.retval;
}

/*
 * The module holds a packet (HELD): the PID filter back, function_graph
 * started (the scope, in set_ftrace_filter since setup, patched in one
 * pass), then READY, and the module replays it traced. Once per run.
 */
int trace_arm_scope(struct trace_run *r)
{
	int err;

	if (!r->lazy || r->tfs.scope_on)
		return 0;
	/* The PID filter first: else the scope traces every task. */
	err = pf_tracefs_pid(&r->tfs, true);
	if (!err)
		err = pf_tracefs_scope(&r->tfs);
	/* Starting the tracer reset the buffers' counters. */
	if (!err)
		err = pf_tracefs_lost(&r->tfs, r->lost_before);
	if (err) {
		fprintf(stderr, "pktfilt: trace: patching the scope: %s\n",
			r->tfs.err);
		return -1;
	}
	trace_times_step("scope patched");
	if (r->held_at && trace_now_ms() - r->held_at > (long long)r->o.hold * 1000)
		fprintf(stderr,
			"pktfilt: trace: note: patching the scope took longer than --hold %lu s: the held packet went on untraced; the next is traced\n",
			r->o.hold);
	err = pf_nl_ready(r->nl, r->filter_id);
	if (err == -ENOMEM) {
		fprintf(stderr, "pktfilt: trace: cannot build the request\n");
		return -1;
	}
	if (err) {
		trace_kernel_error(r, "replaying the held packet", err);
		return -1;
	}
	trace_times_step("held packets replayed");
	return 0;
}

/* Steps 2 and 3: tracefs, then the filter. */
int trace_arm(struct trace_run *r)
{
	const char *roots[16];
	struct pf_tfs_config c = { 0 };
	struct pf_status st;
	struct nl_msg *msg;
	int err;

	err = pf_tracefs_open(&r->tfs, NULL, PKTFILT_GENL_NAME);
	if (err) {
		fprintf(stderr, "pktfilt: trace: %s\n", r->tfs.err);
		return EXIT_RUNTIME;
	}
	r->tfs_open = true;

	trace_tfs_config(r, &c, roots, 16);
	/* The functions are looked for while the settings are read. */
	err = pf_tracefs_prefetch(&r->tfs, &c);
	if (!err)
		err = pf_tracefs_save(&r->tfs);
	if (err) {
		fprintf(stderr, "pktfilt: trace: %s\n", r->tfs.err);
		return EXIT_RUNTIME;
	}
	r->lost_before = calloc(r->tfs.ncpus + 1, sizeof(uint64_t));
	r->lost_after = calloc(r->tfs.ncpus + 1, sizeof(uint64_t));
	if (!r->lost_before || !r->lost_after) {
		fprintf(stderr, "pktfilt: trace: out of memory\n");
		return EXIT_RUNTIME;
	}

	c.buffer_kb = pf_trace_buffer_kb(r->o.filter.count, r->tfs.ncpus,
					 mem_available_kb(), r->o.args);
	trace_times_step("tracefs saved");
	err = pf_tracefs_setup(&r->tfs, &c);
	if (err) {
		fprintf(stderr, "pktfilt: trace: %s\n", r->tfs.err);
		return EXIT_RUNTIME;
	}
	trace_times_step(!r->tfs.by_index ?
			 (r->tfs.lazy ? "tracefs set up (lazy: tracer nop)" :
			  "tracefs set up") :
			 r->tfs.by_kept_copy ?
			 (r->tfs.lazy ?
			  "tracefs set up (functions by number, kept list; lazy: tracer nop)" :
			  "tracefs set up (functions by number, kept list)") :
			 (r->tfs.lazy ?
			  "tracefs set up (functions by number; lazy: tracer nop)" :
			  "tracefs set up (functions by number)"));
	if (r->tfs.note[0])
		fprintf(stderr,
			"pktfilt: trace: note: ftrace cannot trace %s: such packets are not graphed\n",
			r->tfs.note);
	if (pf_tracefs_lost(&r->tfs, r->lost_before) ||
	    pf_tracefs_start(&r->tfs)) {
		fprintf(stderr, "pktfilt: trace: %s\n", r->tfs.err);
		return EXIT_RUNTIME;
	}
	r->started = true;
	trace_times_step(r->tfs.lazy ? "tracing on (lazy: tracer nop)" :
			 "function_graph started");

	r->o.filter.flags = PKTFILT_F_OWNED | PKTFILT_F_EXCLUSIVE;
	r->lazy = r->tfs.lazy;
	if (r->lazy) {
		r->o.filter.flags |= PKTFILT_F_LAZY;
		r->o.filter.hold_ms = (__u32)(r->o.hold * 1000);
	} else if (!r->o.eager) {
		fprintf(stderr,
			"pktfilt: trace: note: the scope is patched in advance (the loaded pktfilt.ko predates lazy arming): waiting slows every call of it\n");
	}
	msg = pf_nl_msg(r->nl, PKTFILT_CMD_SET);
	if (!msg || pf_nl_put_filter(msg, &r->o.filter)) {
		nlmsg_free(msg);
		fprintf(stderr, "pktfilt: trace: cannot build the request\n");
		return EXIT_RUNTIME;
	}
	err = pf_nl_request(r->nl, msg, NULL, NULL);
	if (err == -EBUSY) {
		fprintf(stderr, "pktfilt: another pktfilt trace is running\n");
		return EXIT_RUNTIME;
	}
	if (err) {
		trace_kernel_error(r, "arming the filter", err);
		return EXIT_RUNTIME;
	}
	err = trace_get_status(r, &st);
	if (err) {
		trace_kernel_error(r, "asking the module", err);
		return EXIT_RUNTIME;
	}
	if (st.has_id)
		r->filter_id = st.id;
	/* Waiting: no PID filter either (pf_tracefs_pid()). */
	if (r->lazy && st.state == PKTFILT_STATE_ARMED &&
	    pf_tracefs_pid(&r->tfs, false)) {
		fprintf(stderr, "pktfilt: trace: %s\n", r->tfs.err);
		return EXIT_RUNTIME;
	}
	trace_times_step("filter armed");
	if (st.state != PKTFILT_STATE_ARMED) {
		/* Already done (count reached), or cleared at once. */
		if (!(r->o.filter.count && strstr(st.reason, "count reached")))
			snprintf(r->gone, sizeof(r->gone), "%s",
				 st.reason[0] ? st.reason : "disarmed");
		else
			r->module_done = true;
	}
	return EXIT_OK;
}
