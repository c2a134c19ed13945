// SPDX-License-Identifier: GPL-2.0
/*
 * "pktfilt trace -- COMMAND": COMMAND started, its end waited for, killed
 * if need be, the signals read from the signalfd.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* pipe2, sigabbrev_np, signalfd */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "trace_run.h"

#define PF_KILL_WAIT_MS		3000	/* SIGTERM, then SIGKILL */

int trace_start_command(struct trace_run *r)
{
	int pfd[2], e = 0;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC)) {
		fprintf(stderr, "pktfilt: trace: pipe: %s\n", strerror(errno));
		return EXIT_RUNTIME;
	}
	fflush(stdout);
	fflush(stderr);
	r->child = fork();
	if (r->child < 0) {
		fprintf(stderr, "pktfilt: trace: fork: %s\n", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		r->child = 0;
		return EXIT_RUNTIME;
	}
	if (!r->child) {
		close(pfd[0]);
		signal(SIGPIPE, r->ignored[SIGPIPE] ? SIG_IGN : SIG_DFL);
		if (r->ignored[SIGINT])
			signal(SIGINT, SIG_IGN);
		if (r->ignored[SIGTERM])
			signal(SIGTERM, SIG_IGN);
		sigprocmask(SIG_SETMASK, &r->oldmask, NULL);
		execvp(r->o.cmd[0], r->o.cmd);
		e = errno;
		n = write(pfd[1], &e, sizeof(e));
		(void)n;
		_exit(127);
	}
	close(pfd[1]);
	do {
		n = read(pfd[0], &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == sizeof(e)) {
		fprintf(stderr, "pktfilt: trace: cannot run %s: %s\n",
			r->o.cmd[0], strerror(e));
		waitpid(r->child, &r->child_status, 0);
		r->child_done = true;
		r->child = 0;
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static void reap(struct trace_run *r)
{
	int status;

	if (!r->child || r->child_done)
		return;
	if (waitpid(r->child, &status, WNOHANG) == r->child) {
		r->child_done = true;
		r->child_status = status;
	}
}

/* Reads the pending signals: 0, or the first terminating one. */
int trace_read_signals(struct trace_run *r)
{
	struct signalfd_siginfo si;
	int term = 0;

	while (read(r->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (!term)
			term = (int)si.ssi_signo;
	}
	reap(r);
	return term;
}

void trace_kill_child(struct trace_run *r, int sig)
{
	if (r->child && !r->child_done)
		kill(r->child, sig);
	r->child_killed = sig;
}

/*
 * Waits for COMMAND to end. A signal, or the --timeout deadline, sends it
 * SIGTERM; if it is still there PF_KILL_WAIT_MS later, SIGKILL.
 */
void trace_wait_command(struct trace_run *r, long long deadline)
{
	long long kill_at = -1;

	if (!r->child)
		return;
	if (r->child_killed)
		kill_at = trace_now_ms() + PF_KILL_WAIT_MS;
	for (;;) {
		struct pollfd pfd = { .fd = r->sfd, .events = POLLIN };
		long long now, wake = -1;
		int sig;

		reap(r);
		if (r->child_done)
			return;
		now = trace_now_ms();
		if (kill_at < 0 && deadline >= 0 && now >= deadline) {
			fprintf(stderr,
				"pktfilt: trace: %s still runs at the --timeout: sending it SIGTERM\n",
				r->o.cmd[0]);
			trace_kill_child(r, SIGTERM);
			kill_at = now + PF_KILL_WAIT_MS;
		}
		if (kill_at >= 0 && now >= kill_at && r->child_killed != SIGKILL) {
			trace_kill_child(r, SIGKILL);
			kill_at = LLONG_MAX;
		}
		if (kill_at >= 0 && kill_at != LLONG_MAX)
			wake = kill_at;
		else if (kill_at < 0 && deadline >= 0)
			wake = deadline;
		poll(&pfd, 1, wake < 0 ? -1 : (int)(wake > now ? wake - now : 0));
		sig = trace_read_signals(r);
		if (sig && kill_at < 0) {
			trace_kill_child(r, SIGTERM);
			kill_at = trace_now_ms() + PF_KILL_WAIT_MS;
		}
	}
}
