/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What tracefs.c (files, settings, setup, restore) and tracefs_funcs.c
 * (which functions: globs, available_filter_functions' numbers) call of
 * each other. Not for the rest of the tool: tracefs.h is its interface.
 */
#ifndef PKTFILT_TRACEFS_INT_H
#define PKTFILT_TRACEFS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "tracefs.h"

/* tracefs.c */

/* Microseconds, monotonic; for tfs_time(). */
long long tfs_us(void);
/* PKTFILT_TRACE_TIMES=2: "@what @rel" took since @since, on stderr. */
void tfs_time(const char *what, const char *rel, long long since);
/* Sets t->err from @fmt; returns @err. */
int tfs_fail(struct pf_tracefs *t, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Reads all of @path; NUL-terminated. -errno. */
int tfs_read_all(const char *path, char **out, size_t *outlen);
/*
 * Empties @rel (O_TRUNC), writes the function numbers of @block, then each
 * of @items in a write(2) of its own; failed[i] tells which failed.
 * 0, or the first -errno.
 */
int tfs_write_entries(struct pf_tracefs *t, const char *rel,
		      const char *block, size_t blen,
		      char *const *items, size_t n, bool *failed);
void tfs_free_items(char **items, size_t n);

/* tracefs_funcs.c */

/* Frees t->avail, the available_filter_functions read for restoring. */
void tfs_avail_drop(struct pf_tracefs *t);
/* Waits for its thread, if running, and frees @m (NULL: nothing). */
void tfs_match_free(struct pf_tfs_match *m);
/*
 * Restores set_ftrace_filter or set_ftrace_notrace as @s read: functions
 * by number from t->numbers_min of them on, the rest by name.
 */
int tfs_restore_filter(struct pf_tracefs *t, struct pf_tfs_setting *s);
/* set_ftrace_filter read back: its functions, one a line, and how many. */
int tfs_filter_functions(struct pf_tracefs *t, char **out, size_t *len,
			 size_t *count);
/*
 * set_ftrace_filter set to the lines @m matches, as numbers, and checked.
 * 0 done, 1 cannot (write the globs instead), or an error.
 */
int tfs_filter_by_index(struct pf_tracefs *t, const struct pf_tfs_config *c,
			struct pf_tfs_match *m);

#endif /* PKTFILT_TRACEFS_INT_H */
