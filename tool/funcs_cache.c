// SPDX-License-Identifier: GPL-2.0
/*
 * The copy of available_filter_functions kept between runs (funcs_cache.h).
 *
 * File format: one header line, "pktfilt-functions 1 KEY LENGTH\n" (KEY 16
 * hex digits, LENGTH in bytes), then the list as the kernel printed it.
 * Its numbers are only a hint: what they select is read back from
 * set_ftrace_filter by the caller, so a stale or damaged copy costs a
 * second write, never a wrong filter. Functions named alike (static
 * functions of several files) are the one thing a read-back by name cannot
 * tell apart: hence a copy is used only if its owner is the user running
 * pktfilt and nobody else may write it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "funcs_cache.h"

#define HEADER_FMT	"pktfilt-functions 1 %016" PRIx64 " %zu\n"
#define HEADER_MAX	64

int pf_fcache_path(char *buf, size_t len)
{
	const char *env = getenv(PF_FCACHE_ENV);
	int n;

	if (env && !strcmp(env, "none")) {
		buf[0] = '\0';
		return 0;
	}
	n = snprintf(buf, len, "%s", env && *env ? env : PF_FCACHE_PATH);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static uint64_t fnv(uint64_t h, const char *p, size_t n)
{
	while (n--) {
		h ^= (unsigned char)*p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/*
 * Hashes @path's first 64 KiB ("-" when it cannot be read): more is not
 * needed for a hint (a /proc/modules of 150 modules takes 12 KiB).
 */
static uint64_t hash_file(uint64_t h, const char *path, bool modules)
{
	char buf[65536], *line, *next;
	ssize_t n, done = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return fnv(h, "-", 1);
	while (done < (ssize_t)sizeof(buf) - 1) {
		n = read(fd, buf + done, sizeof(buf) - 1 - (size_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += n;
	}
	close(fd);
	buf[done] = '\0';
	if (!modules)
		return fnv(fnv(h, buf, (size_t)done), "\n", 1);
	/*
	 * /proc/modules: "name size refs users state address [taints]".
	 * The references change with use (a netfilter rule, a socket), the
	 * functions do not: name, size, state and address are kept.
	 */
	for (line = buf; line && *line; line = next) {
		char *f[6], *save = NULL;
		int i, j;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		for (i = 0; i < 6; i++) {
			f[i] = strtok_r(i ? NULL : line, " ", &save);
			if (!f[i])
				break;
		}
		for (j = 0; j < i; j++) {
			if (j == 2 || j == 3)
				continue;
			h = fnv(fnv(h, f[j], strlen(f[j])), " ", 1);
		}
		h = fnv(h, "\n", 1);
	}
	return h;
}

uint64_t pf_fcache_key(const char *root)
{
	char path[512];
	uint64_t h = 0xcbf29ce484222325ull;

	h = hash_file(h, "/proc/sys/kernel/random/boot_id", false);
	h = hash_file(h, "/proc/modules", true);
	if ((size_t)snprintf(path, sizeof(path), "%s/dyn_ftrace_total_info",
			     root) < sizeof(path))
		h = hash_file(h, path, false);
	return h;
}

int pf_fcache_load(const char *path, uint64_t key, char **out, size_t *len)
{
	char head[HEADER_MAX + 1], *buf, *nl;
	uint64_t k;
	size_t body, hlen, done = 0;
	struct stat st;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > PF_FCACHE_MAX) {
		close(fd);
		return -EINVAL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n ? -errno : -EINVAL;	/* shrank meanwhile */
			break;
		}
		done += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[done] = '\0';
	nl = memchr(buf, '\n', done < HEADER_MAX ? done : HEADER_MAX);
	if (!nl) {
		free(buf);
		return -EINVAL;
	}
	hlen = (size_t)(nl - buf) + 1;
	memcpy(head, buf, hlen);
	head[hlen] = '\0';
	if (sscanf(head, "pktfilt-functions 1 %16" SCNx64 " %zu\n", &k,
		   &body) != 2 || hlen != (size_t)snprintf(NULL, 0, HEADER_FMT,
							  k, body) ||
	    body != done - hlen) {
		free(buf);
		return -EINVAL;
	}
	if (k != key) {
		free(buf);
		return -ESTALE;
	}
	memmove(buf, buf + hlen, body + 1);
	*out = buf;
	*len = body;
	return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int pf_fcache_store(const char *path, uint64_t key, const char *buf,
		    size_t len)
{
	char tmp[4200], head[HEADER_MAX + 1];
	int fd, err;

	if (len > PF_FCACHE_MAX - HEADER_MAX)
		return -EFBIG;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%ld", path,
			     (long)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	snprintf(head, sizeof(head), HEADER_FMT, key, len);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, head, strlen(head));
	if (!err)
		err = write_all(fd, buf, len);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}
