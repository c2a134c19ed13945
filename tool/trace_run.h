/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "pktfilt trace": the state of one run, and what its files (tracecmd.c,
 * trace_*.c) call of each other.
 */
#ifndef PKTFILT_TRACE_RUN_H
#define PKTFILT_TRACE_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

#include "fgraph.h"
#include "nl.h"
#include "parse.h"
#include "show.h"
#include "tracefs.h"

#define EXIT_OK		0
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

struct trace_opts {
	struct pf_filter filter;
	unsigned long timeout;		/* s, 0: none */
	const char *format;
	const char *output;
	const char *raw;
	const char *svg;
	const char *html;
	const char *pcap;	/* --pcap FILE */
	const char *functions;
	bool all_functions;
	bool eager;			/* --eager: the scope patched in advance */
	unsigned long hold;		/* --hold, s: a held packet's bound */
	bool quiet;			/* -q: no ready line */
	bool args;			/* --args: funcgraph-args */
	bool retval;			/* --retval: funcgraph-retval */
	char **globs;
	size_t nglobs;
	char **cmd;			/* NULL-terminated, or NULL */
};

enum trace_end {
	END_NONE,
	END_COUNT,		/* N packets traced */
	END_TIMEOUT,
	END_SIGNAL,
	END_COMMAND,		/* COMMAND exited (and the linger passed) */
	END_GONE,		/* the filter was replaced or cleared */
	END_ERROR,
};

struct trace_run {
	struct trace_opts o;
	struct pf_nl *nl;		/* arming socket: closing it disarms */
	struct pf_nl_events *ev;
	struct pf_tracefs tfs;
	bool tfs_open, started;
	int lock_fd;
	int sfd;			/* signalfd */
	sigset_t oldmask;
	bool ignored[NSIG];		/* on entry: given back to COMMAND */
	pid_t child;
	bool child_done;
	int child_status;
	int child_killed;		/* signal we sent it */
	uint64_t *lost_before, *lost_after;
	uint64_t *seqs;			/* of the PACKET notifications */
	size_t nseen, cap;
	uint64_t *ids;			/* packet ids seen: a hash set, 0 free */
	size_t nids, idcap;		/* packets seen (what --count counts) */
	unsigned int version;		/* of the module's family */
	bool overflow;			/* notifications were dropped */
	__u32 filter_id;
	bool module_done;		/* the module said: count reached */
	bool module_idle;		/* ... and it disarmed */
	char gone[160];			/* why the filter went away */
	enum trace_end end;
	int signo;
	long long deadline;		/* of --timeout, in trace_now_ms(); -1: none */
	bool waited;			/* trace_wait_packets() ran */
	bool lazy;			/* the filter is lazy (tfs.lazy) */
	bool held;			/* the module said HELD: patch the scope */
	long long held_at;		/* trace_now_ms() of that HELD */
	FILE *saved;			/* the trace as read: a temporary file */
};

/*
 * The packets the module announced (r->seqs), looked up by seq as a
 * reading of the trace streams by: for each, whether its first packet in
 * the trace was there, and complete.
 */
struct seq_key {
	uint64_t seq;
	size_t i;			/* in r->seqs */
};

enum { SEQ_MISSING, SEQ_INCOMPLETE, SEQ_COMPLETE };

struct seq_check {
	struct seq_key *keys;		/* by seq */
	unsigned char *found;		/* per r->seqs: SEQ_* */
	size_t n;
};

/* tracecmd.c */
long long trace_now_ms(void);
void trace_sleep_ms(long ms);
void trace_times_step(const char *what);
int trace_get_status(struct trace_run *r, struct pf_status *st);
void trace_kernel_error(struct trace_run *r, const char *what, int err);

/* trace_args.c */
int trace_parse_args(int argc, char **argv, struct trace_opts *o);

/* trace_arm.c */
void trace_tfs_config(struct trace_run *r, struct pf_tfs_config *c,
		      const char **roots, size_t nroots);
int trace_arm_scope(struct trace_run *r);
int trace_arm(struct trace_run *r);

/* trace_wait.c */
int trace_on_packet(struct nlattr **tb, void *arg);
int trace_check_module(struct trace_run *r);
const char *trace_end_name(const struct trace_run *r);
int trace_wait_packets(struct trace_run *r);

/* trace_command.c */
int trace_start_command(struct trace_run *r);
int trace_read_signals(struct trace_run *r);
void trace_kill_child(struct trace_run *r, int sig);
void trace_wait_command(struct trace_run *r, long long deadline);

/* trace_read.c */
int seq_check_init(struct seq_check *c, const struct trace_run *r);
void seq_check_free(struct seq_check *c);
void seq_check_packet(struct seq_check *c, const struct pf_packet *pkt);
int trace_read_chunks(int fd, int copy, struct pf_fgraph *p, bool *reading);
int trace_collect(struct trace_run *r);

/* trace_output.c */
int trace_print_packets(struct trace_run *r);

#endif /* PKTFILT_TRACE_RUN_H */
