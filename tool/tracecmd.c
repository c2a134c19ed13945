// SPDX-License-Identifier: GPL-2.0
/*
 * "pktfilt trace": the whole recipe in one command.
 *
 *  1. parse everything; refuse early: a second trace (flock on
 *     /run/pktfilt.lock, then the module's filter owned by another trace),
 *     the module not loaded, not in the initial network namespace;
 *  2. join the "events" multicast group, save the tracefs settings, set
 *     function_graph up, start it;
 *  3. arm the filter with PKTFILT_F_OWNED | PKTFILT_F_EXCLUSIVE: the module
 *     disarms it when our socket closes, however we exit;
 *  4. run COMMAND, if any; count the PACKET notifications until --count
 *     (or --timeout, a signal, COMMAND's end with --count 0);
 *  5. close the arming socket: the module disarms, and its
 *     synchronize_net() waits for the handlers being traced, so their
 *     graphs are closed (checked anyway, for a bounded while);
 *  6. tracing off, read the trace, restore tracefs and check it;
 *  7. wait for COMMAND, then print the packets (render.h).
 *
 * SIGINT, SIGTERM, SIGHUP and SIGCHLD are blocked from the start and read
 * from a signalfd, so no signal can cut a path that must restore tracefs.
 *
 * This file: the run, step 1, and the helpers the steps share. The rest:
 * trace_help.c (--help), trace_args.c (the arguments), trace_scope.c (what
 * is recorded), trace_arm.c (steps 2, 3), trace_command.c (COMMAND),
 * trace_wait.c (step 4), trace_read.c (steps 5, 6), trace_output.c (step
 * 7); trace_run.h is their shared state.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* pipe2, sigabbrev_np, signalfd */
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "pktfilt.h"
#include "nl.h"
#include "parse.h"
#include "show.h"
#include "tracecmd.h"
#include "tracefs.h"
#include "trace_run.h"

#define PF_LOCK_PATH		"/run/pktfilt.lock"

/* ------------------------------------------------------------------ */
/* Time */

long long trace_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void trace_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * PKTFILT_TRACE_TIMES=1 (or 2, see tracefs.c): how long each step of
 * arming and restoring took, on standard error, from the previous step and
 * from the start.
 */
static long long times_start = -1, times_last;

void trace_times_step(const char *what)
{
	const char *env = getenv("PKTFILT_TRACE_TIMES");
	long long now = trace_now_ms();

	if (!env || (strcmp(env, "1") && strcmp(env, "2")))
		return;
	if (times_start < 0) {
		times_start = times_last = now;
		return;
	}
	fprintf(stderr, "pktfilt: time: %s %lld ms (at %lld ms)\n", what,
		now - times_last, now - times_start);
	times_last = now;
}

/* ------------------------------------------------------------------ */
/* Refusing early */

static bool in_init_netns(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/net", &self) || stat("/proc/1/ns/net", &init))
		return true;	/* cannot tell: let it be */
	return self.st_ino == init.st_ino && self.st_dev == init.st_dev;
}

static int take_lock(struct trace_run *r)
{
	const char *path = getenv("PKTFILT_LOCK");
	char buf[32] = "";
	ssize_t n;

	if (!path || !*path)
		path = PF_LOCK_PATH;
	r->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (r->lock_fd < 0)
		return EXIT_OK;	/* no /run: the module's check remains */
	if (!flock(r->lock_fd, LOCK_EX | LOCK_NB)) {
		if (!ftruncate(r->lock_fd, 0)) {
			snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
			n = pwrite(r->lock_fd, buf, strlen(buf), 0);
			(void)n;
		}
		return EXIT_OK;
	}
	if (errno != EWOULDBLOCK) {
		close(r->lock_fd);
		r->lock_fd = -1;
		return EXIT_OK;
	}
	n = pread(r->lock_fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (buf[0])
		fprintf(stderr, "pktfilt: another pktfilt trace is running (pid %s, holding %s)\n",
			buf, path);
	else
		fprintf(stderr, "pktfilt: another pktfilt trace is running (holding %s)\n",
			path);
	close(r->lock_fd);
	r->lock_fd = -1;
	return EXIT_RUNTIME;
}

int trace_get_status(struct trace_run *r, struct pf_status *st)
{
	struct nl_msg *msg = pf_nl_msg(r->nl, PKTFILT_CMD_GET);

	if (!msg)
		return -ENOMEM;
	memset(st, 0, sizeof(*st));
	return pf_nl_request(r->nl, msg, pf_show_decode, st);
}

void trace_kernel_error(struct trace_run *r, const char *what, int err)
{
	const char *msg = pf_nl_extack(r->nl);

	if (err == -EPERM) {
		fprintf(stderr,
			"pktfilt: trace: permission denied: arming needs CAP_NET_ADMIN\n");
		return;
	}
	if (msg)
		fprintf(stderr, "pktfilt: kernel: %s\n", msg);
	fprintf(stderr, "pktfilt: trace: %s: %s\n", what, strerror(-err));
}

/* ------------------------------------------------------------------ */
/* The run */

/* @n with a comma every three digits: "14,253". */
static void thousands(char *buf, size_t len, size_t n)
{
	char tmp[32];
	size_t l, i, o = 0;

	snprintf(tmp, sizeof(tmp), "%zu", n);
	l = strlen(tmp);
	for (i = 0; i < l && o + 2 < len; i++) {
		if (i && (l - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
}

/*
 * Without COMMAND: armed, the tracer on, so a packet sent from now on is
 * traced. Say so, on one line, as tcpdump's "listening on".
 */
static void tell_ready(const struct trace_run *r)
{
	char what[1024], scope[128], num[32], wait[96];
	const char *preds = what;
	__u32 count = r->o.filter.count;
	char *c;

	pf_format_filter(&r->o.filter, &pf_system_resolver, what, sizeof(what));
	c = strstr(what, " --count ");
	if (c)
		*c = '\0';
	while (*preds == ' ')
		preds++;
	thousands(num, sizeof(num), r->tfs.nfuncs);
	if (r->o.all_functions)
		snprintf(scope, sizeof(scope), "every function");
	else if (r->tfs.nfuncs)
		snprintf(scope, sizeof(scope), "%s, %s function%s",
			 r->o.functions ? "--functions" : "default scope", num,
			 r->tfs.nfuncs == 1 ? "" : "s");
	else
		snprintf(scope, sizeof(scope), "%s",
			 r->o.functions ? "--functions" : "default scope");
	if (r->lazy)
		snprintf(scope + strlen(scope), sizeof(scope) - strlen(scope),
			 ", patched when a packet matches");
	if (count)
		snprintf(wait, sizeof(wait), "waiting for %u packet%s", count,
			 count == 1 ? "" : "s");
	else
		snprintf(wait, sizeof(wait), "tracing every matching packet");
	if (r->o.timeout)
		snprintf(wait + strlen(wait), sizeof(wait) - strlen(wait),
			 " for %lu s at most", r->o.timeout);
	fprintf(stderr, "pktfilt: tracing %s (%s); %s, Ctrl-C to stop\n",
		*preds ? preds : "every packet", scope, wait);
	fflush(stderr);
}

/* Step 1. */
static int prepare(struct trace_run *r)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct pf_status st;
	char why[512];
	sigset_t set;
	size_t i;
	int err;

	if (!in_init_netns()) {
		fprintf(stderr,
			"pktfilt: trace: run pktfilt in the initial network namespace: the module announces traced packets there only (--netns chooses the packets' namespace)\n");
		return EXIT_RUNTIME;
	}
	/*
	 * A shell without job control starts background commands with
	 * SIGINT ignored: "kill -INT" would not reach us, and a trace must
	 * be stoppable. SIGHUP ignored (nohup) stays ignored.
	 */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa;

		if (sigaction(sigs[i], NULL, &sa) || sa.sa_handler != SIG_IGN)
			continue;
		r->ignored[sigs[i]] = true;
		if (sigs[i] != SIGHUP && sigs[i] != SIGPIPE)
			signal(sigs[i], SIG_DFL);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, &r->oldmask)) {
		fprintf(stderr, "pktfilt: trace: sigprocmask: %s\n", strerror(errno));
		return EXIT_RUNTIME;
	}
	r->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (r->sfd < 0) {
		fprintf(stderr, "pktfilt: trace: signalfd: %s\n", strerror(errno));
		return EXIT_RUNTIME;
	}
	signal(SIGPIPE, SIG_IGN);

	err = pf_nl_open(&r->nl);
	if (err == -ENOENT) {
		fprintf(stderr,
			"pktfilt: the pktfilt module is not loaded (insmod pktfilt.ko)\n");
		return EXIT_RUNTIME;
	}
	if (err) {
		fprintf(stderr, "pktfilt: cannot talk to the kernel: %s\n",
			strerror(-err));
		return EXIT_RUNTIME;
	}
	fcntl(pf_nl_fd(r->nl), F_SETFD, FD_CLOEXEC);
	r->version = pf_nl_version(r->nl);
	switch (pf_stages_compat(&r->o.filter, r->version,
				 PF_TRACE_DEFAULT_STAGES, why, sizeof(why))) {
	case PF_COMPAT_FAIL:
		fprintf(stderr, "pktfilt: trace: %s\n", why);
		return EXIT_RUNTIME;
	case PF_COMPAT_OK:
		break;
	default:
		fprintf(stderr, "pktfilt: trace: %s\n", why);
		break;
	}
	if (!r->version)
		r->version = PKTFILT_GENL_VERSION;
	if (r->o.pcap && r->version < 6) {
		fprintf(stderr,
			"pktfilt: trace: --pcap: the loaded pktfilt.ko speaks version %u: its events carry no packet bytes; load this release's module (rmmod pktfilt; insmod pktfilt.ko)\n",
			r->version);
		return EXIT_RUNTIME;
	}

	if (take_lock(r))
		return EXIT_RUNTIME;
	err = trace_get_status(r, &st);
	if (err) {
		trace_kernel_error(r, "asking the module", err);
		return EXIT_RUNTIME;
	}
	if (st.state == PKTFILT_STATE_ARMED &&
	    (st.filter.flags & PKTFILT_F_OWNED)) {
		fprintf(stderr, "pktfilt: another pktfilt trace is running\n");
		return EXIT_RUNTIME;
	}
	err = pf_nl_events_open(&r->ev, trace_on_packet, r);
	if (err) {
		fprintf(stderr,
			"pktfilt: trace: cannot join the module's \"%s\" group: %s\n",
			PKTFILT_MCGRP_EVENTS, strerror(-err));
		return EXIT_RUNTIME;
	}
	fcntl(pf_nl_events_fd(r->ev), F_SETFD, FD_CLOEXEC);
	return EXIT_OK;
}

/* Tells how the wait ended, if not as hoped. EXIT_RUNTIME if a failure. */
static int tell_end(struct trace_run *r)
{
	__u32 count = r->o.filter.count;
	size_t k = r->nids;

	if (r->module_done && k < count)
		k = count;	/* notifications lost, the module knows */
	switch (r->end) {
	case END_COUNT:
		return EXIT_OK;
	case END_GONE:
		fprintf(stderr,
			"pktfilt: trace: the filter was removed: %s; saw %zu of %u packet%s\n",
			r->gone, k, count, count == 1 ? "" : "s");
		return count && k >= count ? EXIT_OK : EXIT_RUNTIME;
	case END_TIMEOUT:
	case END_SIGNAL:
	case END_COMMAND:
		if (!count) {
			fprintf(stderr, "pktfilt: trace: stopped by %s: %zu packet%s traced\n",
				trace_end_name(r), k, k == 1 ? "" : "s");
			return EXIT_OK;
		}
		if (r->end == END_TIMEOUT)
			fprintf(stderr,
				"pktfilt: trace: timed out after %lu s: saw %zu of %u packet%s\n",
				r->o.timeout, k, count, count == 1 ? "" : "s");
		else
			fprintf(stderr,
				"pktfilt: trace: stopped by %s: saw %zu of %u packet%s\n",
				trace_end_name(r), k, count, count == 1 ? "" : "s");
		return EXIT_RUNTIME;
	default:
		return EXIT_RUNTIME;
	}
}

static void tell_command(const struct trace_run *r)
{
	int st = r->child_status;

	if (!r->o.cmd || !r->child_done)
		return;
	if (WIFEXITED(st) && WEXITSTATUS(st))
		fprintf(stderr, "pktfilt: trace: %s exited with status %d\n",
			r->o.cmd[0], WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		fprintf(stderr, "pktfilt: trace: %s was killed by signal %d (%s)\n",
			r->o.cmd[0], WTERMSIG(st), strsignal(WTERMSIG(st)));
}

int pf_trace_run(const struct pf_cmd *cmd, int argc, char **argv)
{
	struct trace_run r;
	int ret, bad;
	size_t i;

	(void)cmd;
	memset(&r, 0, sizeof(r));
	r.lock_fd = -1;
	r.sfd = -1;
	r.deadline = -1;
	ret = trace_parse_args(argc, argv, &r.o);
	if (ret)
		goto free_opts;

	trace_times_step(NULL);
	ret = prepare(&r);
	if (!ret)
		ret = trace_arm(&r);
	if (!ret && !r.o.cmd && !r.o.quiet && !r.gone[0] && !r.module_done)
		tell_ready(&r);
	if (!ret && r.o.timeout)
		r.deadline = trace_now_ms() + (long long)r.o.timeout * 1000;
	if (!ret && r.o.cmd)
		ret = trace_start_command(&r);
	if (!ret) {
		r.waited = true;
		if (trace_wait_packets(&r))
			ret = EXIT_RUNTIME;
	}

	/* Disarm: the module waits for the handlers it was tracing. */
	pf_nl_close(r.nl);
	r.nl = NULL;
	if (r.ev) {
		if (!ret && pf_nl_events_read(r.ev) == -ENOBUFS)
			r.overflow = true;
		pf_nl_events_close(r.ev);
		r.ev = NULL;
	}
	if (r.end == END_TIMEOUT || r.end == END_SIGNAL || r.end == END_ERROR ||
	    r.end == END_GONE || (ret && r.child))
		trace_kill_child(&r, SIGTERM);
	if (!ret)
		ret = tell_end(&r);
	if (r.started && r.waited) {
		if (trace_collect(&r)) {
			if (r.saved)
				fclose(r.saved);
			r.saved = NULL;
			ret = EXIT_RUNTIME;
		}
	}
	if (r.tfs_open) {
		trace_times_step("waited, trace read");
		bad = pf_tracefs_restore(&r.tfs, stderr);
		trace_times_step("tracefs restored");
		if (bad > 0)
			fprintf(stderr,
				"pktfilt: trace: %d tracefs setting%s not as before (see above)\n",
				bad, bad == 1 ? " is" : "s are");
		if (bad)
			ret = EXIT_RUNTIME;
		pf_tracefs_close(&r.tfs);
	}
	trace_wait_command(&r, r.deadline);
	tell_command(&r);
	if (r.lock_fd >= 0)
		close(r.lock_fd);	/* the lock goes with it */
	r.lock_fd = -1;
	if (r.saved && trace_print_packets(&r))
		ret = EXIT_RUNTIME;
	if (r.overflow)
		fprintf(stderr,
			"pktfilt: trace: some packet notifications were lost (socket buffer full)\n");

	if (r.saved)
		fclose(r.saved);
	free(r.seqs);
	free(r.ids);
	free(r.lost_before);
	free(r.lost_after);
	/* Signals stay blocked: one now would only change the status. */
	if (r.sfd >= 0)
		close(r.sfd);
free_opts:
	for (i = 0; i < r.o.nglobs; i++)
		free(r.o.globs[i]);
	free(r.o.globs);
	return ret;
}
