// SPDX-License-Identifier: GPL-2.0
/*
 * pfpreempt - a SCHED_FIFO task that wakes up periodically on one CPU, so
 * that on a PREEMPT_RT kernel the softirq work running there (in task
 * context) is preempted in the middle of a protocol handler.
 *
 *   pfpreempt --cpu N [--period-us N] [--busy-us N] [--prio N] --stop FILE
 *
 * Pins itself to --cpu, switches to SCHED_FIFO --prio (default 50), then
 * every --period-us (default 500) spins for --busy-us (default 50) until
 * FILE exists (looked for every 100 ms).
 * Prints "pfpreempt: cpu N: W wakeups" at exit. Exit status 0, 1 on an error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(void)
{
	fprintf(stderr,
		"usage: pfpreempt --cpu N [--period-us N] [--busy-us N] [--prio N] --stop FILE\n");
	exit(1);
}

static long number(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min || v > max) {
		fprintf(stderr, "pfpreempt: bad number '%s'\n", s);
		exit(1);
	}
	return v;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "period-us", required_argument, NULL, 'p' },
		{ "busy-us", required_argument, NULL, 'b' },
		{ "prio", required_argument, NULL, 'r' },
		{ "stop", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	long cpu = -1, period_us = 500, busy_us = 50, prio = 50;
	const char *stop = NULL;
	struct sched_param sp = { 0 };
	struct timespec next;
	long long wakeups = 0, checked = 0;
	cpu_set_t set;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': cpu = number(optarg, 0, CPU_SETSIZE - 1); break;
		case 'p': period_us = number(optarg, 10, 10000000); break;
		case 'b': busy_us = number(optarg, 0, 1000000); break;
		case 'r': prio = number(optarg, 1, 99); break;
		case 's': stop = optarg; break;
		default: usage();
		}
	}
	if (cpu < 0 || !stop || optind != argc || busy_us >= period_us)
		usage();

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("pfpreempt: sched_setaffinity");
		return 1;
	}
	sp.sched_priority = prio;
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		perror("pfpreempt: sched_setscheduler");
		return 1;
	}

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		long long until;

		next.tv_nsec += period_us * 1000;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) &&
		    errno != EINTR) {
			perror("pfpreempt: clock_nanosleep");
			return 1;
		}
		wakeups++;
		until = now_ns() + busy_us * 1000LL;
		while (now_ns() < until)
			;
		/* Behind schedule (a slow emulator): do not catch up in a burst. */
		if (now_ns() > next.tv_sec * 1000000000LL + next.tv_nsec +
		    period_us * 1000LL)
			clock_gettime(CLOCK_MONOTONIC, &next);
		if (now_ns() - checked > 100000000LL) {
			checked = now_ns();
			if (access(stop, F_OK) == 0)
				break;
		}
	}
	printf("pfpreempt: cpu %ld: %lld wakeups\n", cpu, wakeups);
	return 0;
}
