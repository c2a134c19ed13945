/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracefs for "pktfilt trace": find it (mounting it if need be), save the
 * settings pktfilt is about to change, set function_graph up for pktfilt,
 * and put every setting back as it was, byte for byte as tracefs reads it.
 *
 * Everything goes through paths below t->root, so the unit tests run it on
 * a fake directory tree; the hooks let them fail writes and turn what was
 * written into what the kernel would read back.
 *
 * The tracefs quirks handled here (seen on Linux 6.1 and 6.12):
 *  - set_ftrace_pid and set_ftrace_notrace_pid read "no pid" when empty,
 *    set_event_pid and set_event_notrace_pid nothing;
 *  - set_ftrace_filter and set_graph_function read
 *    "#### all functions enabled ####" when empty, set_ftrace_notrace and
 *    set_graph_notrace "#### no functions disabled ####";
 *  - set_ftrace_filter reads a module's function as "func [mod]", which
 *    must be written back as "func:mod:mod"; a filter for a module not
 *    loaded yet reads "glob:mod:mod", written back as it reads; function
 *    probes ("func:traceoff:unlimited") read in the same file but are not
 *    removed by emptying it (O_TRUNC), so they are left alone;
 *  - set_graph_function does not take ":mod:", so "func [mod]" goes back
 *    as "func";
 *  - the lists are emptied by opening with O_TRUNC, and the kernel parses
 *    one function per write(2) and stops at the first it refuses: each
 *    entry is written on its own, so that one refusal spoils nothing else;
 *  - set_ftrace_filter and set_ftrace_notrace take a number N for the N-th
 *    line of available_filter_functions (1-based: one line per ftrace
 *    record, "__ftrace_invalid_address___N" for a record no symbol
 *    owns), at the cost of a walk over the record pages, where a name or
 *    glob costs a kallsyms lookup of every record: globs are matched
 *    here, as ftrace matches them (pf_tfs_glob_*), and the lines written
 *    as numbers, read again just before (a module's load or unload
 *    renumbers them: it is read while the settings before it are
 *    written, and once more if the result, read back and checked, is not
 *    what was meant); restoring writes the saved functions as numbers
 *    too (from PF_TFS_NUMBERS_MIN of them), so that of functions named
 *    alike exactly those that were set come back;
 *  - buffer_size_kb reads "X" when the CPUs' sizes differ (then the
 *    per_cpu/cpuN/buffer_size_kb files are what to restore), and
 *    "N (expanded: M)" before the ring buffer was first used: using it
 *    expands it to M for good, so M is what can be restored;
 *  - an event group's enable reads "X" when its events differ.
 */
#ifndef PKTFILT_TRACEFS_H
#define PKTFILT_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC	0x74726163
#endif

#define PF_TFS_MAX_CPUS	8192

/*
 * Restoring set_ftrace_filter or set_ftrace_notrace by number costs a read
 * of available_filter_functions, five to ten times ftrace's lookup of one
 * name (measured on 6.1 in the VM): fewer functions go by name.
 */
#define PF_TFS_NUMBERS_MIN	8

struct pf_tfs_avail;
struct pf_tfs_match;

enum pf_tfs_kind {
	PF_TFS_VALUE,		/* one value: "1", "nop", "2051" */
	PF_TFS_PIDS,		/* PIDs, one a line; "no pid" or "" if none */
	PF_TFS_FILTER,		/* set_ftrace_filter, set_ftrace_notrace */
	PF_TFS_GRAPH,		/* set_graph_function, set_graph_notrace */
	PF_TFS_EVFILTER,	/* an event's filter: "none" if none */
	PF_TFS_GROUP,		/* a value that reads "X" when its children
				 * differ: buffer_size_kb, events/G/enable */
};

struct pf_tfs_setting {
	char *rel;		/* path below the root */
	enum pf_tfs_kind kind;
	int parent;		/* index of its PF_TFS_GROUP, or -1 */
	char *saved;		/* what it read before, byte for byte */
	size_t saved_len;
	bool touched;		/* written to: to be restored */
};

/* For the unit tests; NULL in real use. */
struct pf_tfs_hooks {
	/* Before each write(2): 0 to do it, or a negative errno instead. */
	int (*write)(void *ctx, const char *rel, const char *buf, size_t len);
	/* After closing a file that was opened for writing. */
	void (*closed)(void *ctx, const char *rel);
	void *ctx;
};

struct pf_tracefs {
	char root[256];
	char sysroot[256];	/* "", or (tests) where proc/ and sys/ are */
	bool mounted;		/* we mounted it: pf_tracefs_close unmounts */
	struct pf_tfs_setting *set;
	size_t nset, cap;
	unsigned int *cpus;	/* the per_cpu/cpuN numbers */
	size_t ncpus;
	char group[64];		/* the event group: "pktfilt" */
	bool saved;
	const struct pf_tfs_hooks *hooks;
	char err[512];		/* why the last call failed */
	char note[256];		/* after setup: the handlers ftrace refused */
	size_t nfuncs;		/* after setup: functions set_ftrace_filter
				 * names (0: all, or not known) */
	bool by_index;		/* after setup: they were written as numbers */
	bool by_kept_copy;	/* ... taken from the copy of
				 * available_filter_functions kept between
				 * runs (funcs_cache.h) */
	size_t numbers_min;	/* restore a function list by number from
				 * this many functions on (tests: 1) */
	struct pf_tfs_avail *avail;	/* available_filter_functions, while
					 * in use */
	struct pf_tfs_match *match;	/* pf_tracefs_prefetch()'s */
	/*
	 * Lazy (pf_tfs_config.lazy): after setup the tracer stays nop, so
	 * nothing is patched; pf_tracefs_scope() starts function_graph.
	 */
	bool lazy;
	bool scope_on;		/* function_graph started */
	char idle_pid[24];	/* after setup: set_ftrace_pid's PID */
	bool pid_off;		/* set_ftrace_pid emptied (pf_tracefs_pid()) */
};

/* What pf_tracefs_setup() sets. */
struct pf_tfs_config {
	pid_t idle_pid;		/* set_ftrace_pid: a PID no task has */
	const char *const *roots;	/* set_graph_function */
	size_t nroots;
	const char *const *globs;	/* --functions, or none: all */
	size_t nglobs;
	bool globs_optional;	/* a glob nothing matches is left out */
	unsigned long buffer_kb;	/* at least this per CPU; 0: as is */
	bool lazy;		/* the tracer nop until pf_tracefs_scope() */
	bool args;		/* funcgraph-args on (PF_TFS_ENOARGS if none) */
	bool retval;		/* funcgraph-retval on (PF_TFS_ENORETVAL) */
};

/* Return values beside 0 and -errno. */
#define PF_TFS_EGLOB	(-10000)	/* a --functions glob was refused */
#define PF_TFS_ENOROOT	(-10001)	/* no handler is a traceable function */
/* c->args, c->retval: this kernel has no such option (t->err says why). */
#define PF_TFS_ENOARGS	(-10002)
#define PF_TFS_ENORETVAL	(-10003)

/*
 * Use the tracefs at @root (tests) or find the system's (@root NULL):
 * /sys/kernel/tracing, else /sys/kernel/debug/tracing, else mount tracefs
 * on /sys/kernel/tracing. @group is the event group to enable.
 */
int pf_tracefs_open(struct pf_tracefs *t, const char *root, const char *group);

/* Read every setting pktfilt may change. Nothing is written. */
int pf_tracefs_save(struct pf_tracefs *t);

/*
 * Set function_graph up for pktfilt, tracer still nop and tracing off;
 * the trace is emptied. On failure, what was changed is marked for
 * pf_tracefs_restore(). PF_TFS_EGLOB: t->err names the glob.
 */
int pf_tracefs_setup(struct pf_tracefs *t, const struct pf_tfs_config *c);

/*
 * Optional, before pf_tracefs_save(): start reading available_filter_functions
 * and matching @c's roots and globs (pf_tracefs_setup() must get the same
 * ones) in a thread of its own, for pf_tracefs_setup(), which otherwise
 * starts it itself. Nothing is written.
 */
int pf_tracefs_prefetch(struct pf_tracefs *t, const struct pf_tfs_config *c);

/* function_graph on (lazy: still nop), tracing on. */
int pf_tracefs_start(struct pf_tracefs *t);
/*
 * Lazy: the events and function_graph started, patching the scope in one
 * pass. Starting it empties the ring buffer.
 */
int pf_tracefs_scope(struct pf_tracefs *t);
/*
 * Lazy: set_ftrace_pid emptied (@on false) while the filter waits, or set
 * to the idle PID again (@on) before the scope is patched.
 */
int pf_tracefs_pid(struct pf_tracefs *t, bool on);
/* tracing off. */
int pf_tracefs_stop(struct pf_tracefs *t);

/*
 * Events each CPU's ring buffer lost so far: overrun + commit overrun +
 * dropped events of per_cpu/cpuN/stats, into @lost[0..t->ncpus), in the
 * order of t->cpus.
 */
int pf_tracefs_lost(struct pf_tracefs *t, uint64_t *lost);

/* The whole of @rel (e.g. "trace"), NUL-terminated; free() it. */
int pf_tracefs_read(struct pf_tracefs *t, const char *rel, char **buf,
		    size_t *len);

/*
 * Put back every setting that was changed: tracing off, the tracer nop,
 * the settings, then the tracer, then tracing_on. Then read every saved
 * setting again and compare: each difference is told on @warn (if not
 * NULL). Returns the number of settings that differ, or -errno.
 */
int pf_tracefs_restore(struct pf_tracefs *t, FILE *warn);

/* Free everything, unmount tracefs if we mounted it. */
void pf_tracefs_close(struct pf_tracefs *t);

/* Index of setting @rel, or -1. */
int pf_tfs_find(const struct pf_tracefs *t, const char *rel);

/*
 * A set_ftrace_filter entry as ftrace parses it (filter_parse_regex() of
 * kernel/trace/trace_events_filter.c, ftrace_match() and match_records()
 * of kernel/trace/ftrace.c, glob_match() of lib/glob.c, Linux 6.1-6.12):
 * "[!]FUNC" or "[!]FUNC:mod:[!]MODULE". FUNC and MODULE: "foo" (the whole
 * name), "foo*", "*foo", "*foo*" (prefix, suffix, part; "*" alone: any),
 * else with a '*' elsewhere, '?', '[' or '\' a glob_match() glob. '!'
 * before FUNC removes what it matches; before MODULE, every module but
 * it (an empty MODULE: any module; "!" alone: the core kernel).
 */
struct pf_tfs_glob {
	char *buf;		/* the entry, cut up */
	const char *search;	/* FUNC's string, as ftrace_match() takes it */
	size_t len;
	int type;		/* PF_TFS_M_* */
	bool clear;		/* "!FUNC" */
	bool has_mod;		/* ":mod:" */
	const char *msearch;
	size_t mlen;
	int mtype;
	bool mexclude;		/* ":mod:!MODULE" */
};

enum {
	PF_TFS_M_FULL, PF_TFS_M_FRONT, PF_TFS_M_MIDDLE, PF_TFS_M_END,
	PF_TFS_M_GLOB, PF_TFS_M_INDEX,
};

/*
 * Parses @text into @g: 0, or -EINVAL if ftrace would not take it as a
 * function glob this matcher decides (a number: a line of
 * available_filter_functions; a probe command such as "f:traceoff"; an
 * entry longer than the kernel's parser takes), -ENOMEM.
 */
int pf_tfs_glob_parse(struct pf_tfs_glob *g, const char *text);
void pf_tfs_glob_free(struct pf_tfs_glob *g);

/*
 * Does @g name the function that available_filter_functions lists as
 * @line ("name" or "name [module]", no newline)? A "!" entry is said to
 * match what it removes. "__ftrace_invalid_address___N" matches nothing.
 */
bool pf_tfs_glob_match(const struct pf_tfs_glob *g, const char *line);

/* write(2)s all of @buf to @fd, as often as it takes. 0 or -errno. */
int pf_write_full(int fd, const char *buf, size_t len);

#endif /* PKTFILT_TRACEFS_H */
