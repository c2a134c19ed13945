/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A copy of available_filter_functions kept between runs of pktfilt trace:
 * reading the kernel's list costs most of arming (ftrace walks its records
 * from the first again for every page it prints), and the list changes
 * only when a module comes or goes. Each copy carries a key of what the
 * list depends on (the boot, the modules loaded, ftrace's record count);
 * a copy under another key is not used. The caller still checks what the
 * copy's numbers selected (set_ftrace_filter read back), and reads the
 * kernel's list when they differ.
 */
#ifndef PKTFILT_FUNCS_CACHE_H
#define PKTFILT_FUNCS_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define PF_FCACHE_PATH	"/run/pktfilt.functions"
#define PF_FCACHE_ENV	"PKTFILT_CACHE"
/* Larger copies are refused: the lists of today are a few MiB. */
#define PF_FCACHE_MAX	(64u << 20)

/*
 * The copy's file: PKTFILT_CACHE, else PF_FCACHE_PATH; "" when off
 * (PKTFILT_CACHE=none). 0, or -ENAMETOOLONG.
 */
int pf_fcache_path(char *buf, size_t len);

/* What the list depends on now, hashed; @root is the tracefs. */
uint64_t pf_fcache_key(const char *root);

/*
 * The copy at @path if made under @key: 0 with *@out (NUL-terminated,
 * free() it) and *@len; -ESTALE when made under another key, -EINVAL when
 * not a copy this code wrote (or not root's own), else -errno.
 */
int pf_fcache_load(const char *path, uint64_t key, char **out, size_t *len);

/* Replaces the copy at @path, atomically. 0 or -errno (nothing left). */
int pf_fcache_store(const char *path, uint64_t key, const char *buf,
		    size_t len);

#endif /* PKTFILT_FUNCS_CACHE_H */
