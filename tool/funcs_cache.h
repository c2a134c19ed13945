/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A copy of available_filter_functions kept between runs of pktfilt trace,
 * and between boots: reading the kernel's list costs most of arming (ftrace
 * walks its records from the first again for every page it prints), and
 * the list is the kernel's functions, then each loaded module's in the
 * order they were loaded. So the copy is kept in segments, one for the
 * kernel and one per module, each under a key of what it depends on (the
 * kernel's or the module's build ID); a later run puts the segments of
 * what is loaded now in today's order, and reads the kernel's list when
 * one is missing. The caller still checks what the copy's numbers
 * selected (set_ftrace_filter read back), and reads the kernel's list
 * when they differ.
 */
#ifndef PKTFILT_FUNCS_CACHE_H
#define PKTFILT_FUNCS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PF_FCACHE_DIR	"/var/cache/pktfilt"
#define PF_FCACHE_PATH	PF_FCACHE_DIR "/functions"
#define PF_FCACHE_ENV	"PKTFILT_CACHE"
/* Larger copies are refused: the lists of today are a few MiB. */
#define PF_FCACHE_MAX	(64u << 20)
/* Segments of what is not loaded now are kept up to this size in all. */
#define PF_FCACHE_KEEP	(8u << 20)

/* One segment: the kernel's functions ("vmlinux") or a module's. */
struct pf_fcache_seg {
	char name[64];
	uint64_t key;
};

/* What the list is made of now, in its order. */
struct pf_fcache_state {
	struct pf_fcache_seg *seg;
	size_t nseg;
	long long total;	/* ftrace's record count; -1: not known */
};

/*
 * The copy's file: PKTFILT_CACHE, else PF_FCACHE_PATH; "" when off
 * (PKTFILT_CACHE=none). 0, or -ENAMETOOLONG.
 */
int pf_fcache_path(char *buf, size_t len);

/*
 * Reads what the list depends on now: @sysroot is "" (tests: a directory
 * holding proc/ and sys/), @tracefs the tracefs. 0, -EAGAIN while a
 * module is coming or going, or -errno.
 */
int pf_fcache_state(const char *sysroot, const char *tracefs,
		    struct pf_fcache_state *st);
bool pf_fcache_state_eq(const struct pf_fcache_state *a,
			const struct pf_fcache_state *b);
void pf_fcache_state_free(struct pf_fcache_state *st);

/*
 * The list under @st from the copy at @path: 0 with *@out (NUL-terminated,
 * free() it) and *@len; -ESTALE when a segment is not there (or the lines
 * are not ftrace's count), -EINVAL when not a copy this code wrote (or
 * not the user's own), else -errno.
 */
int pf_fcache_load(const char *path, const struct pf_fcache_state *st,
		   char **out, size_t *len);

/*
 * Keeps @buf, the kernel's list read under @st, at @path, with the
 * segments of other kernels and modules already there (up to
 * PF_FCACHE_KEEP), atomically; makes PF_FCACHE_DIR if missing. 0, or
 * -ESTALE when @buf is not in @st's order, or -errno (nothing left).
 */
int pf_fcache_store(const char *path, const struct pf_fcache_state *st,
		    const char *buf, size_t len);

#endif /* PKTFILT_FUNCS_CACHE_H */
