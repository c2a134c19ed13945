// SPDX-License-Identifier: GPL-2.0
/*
 * The copy of available_filter_functions kept between runs (funcs_cache.h).
 *
 * File format: a line "pktfilt-functions 2", a line "order KEY N", then
 * segments, each a line "segment KEY LINES BYTES NAME" (KEYs 16 hex
 * digits) and its BYTES of list, LINES lines as the kernel printed them.
 * NAME is "vmlinux" for the kernel's own functions, else the module's.
 * The first N segments are the list last read from the kernel, in its
 * order, and the order line's KEY hashes /proc/modules' order then; the
 * others are kept for when their kernel or module is loaded again.
 *
 * A segment's key hashes what its functions depend on: the kernel's
 * version string and build ID (/sys/kernel/notes), a module's name, size
 * and build ID (/sys/module/NAME/notes); where a build ID cannot be read,
 * this boot and the module's address instead, as good as a copy in /run.
 * The order of the segments is the order of /proc/modules, backwards:
 * ftrace adds a module's records at the end of its list when the module
 * loads, and the kernel lists the last loaded module first. Modules
 * loaded at the same time (udev at boot) may take their places in the two
 * lists in different orders: hence the order last read from the kernel is
 * used while /proc/modules reads as it did then.
 *
 * The numbers are only a hint: what they select is read back from
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

#define MAGIC		"pktfilt-functions 2\n"
#define ORDER_FMT	"order %016" PRIx64 " %zu\n"
#define SEG_FMT		"segment %016" PRIx64 " %zu %zu %s\n"
#define SEG_HEAD_MAX	128
#define FNV_BASIS	0xcbf29ce484222325ull
/* /proc/modules of today: some 60 bytes a module. */
#define MODULES_MAX	(1u << 20)

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

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--) {
		h ^= *c++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/*
 * Reads @fd to its end, at most @max bytes, into a new NUL-terminated
 * *@out and closes it: the count, or -errno (-EFBIG: longer).
 */
static ssize_t read_fd(int fd, size_t max, char **out)
{
	size_t done = 0, cap = 4096;
	char *buf = malloc(cap + 1);

	*out = NULL;
	while (buf) {
		ssize_t n;

		if (done == cap) {
			char *nb = cap >= max ? NULL : realloc(buf, cap * 2 + 1);

			if (!nb) {
				free(buf);
				buf = NULL;
				errno = cap >= max ? EFBIG : ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + done, cap - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			buf = NULL;
			break;
		}
		if (!n)
			break;
		done += (size_t)n;
	}
	if (!buf) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	buf[done] = '\0';
	*out = buf;
	return (ssize_t)done;
}

/*
 * Reads at most @max bytes of @dir@rel into a new NUL-terminated *@out:
 * the count, or -errno.
 */
static ssize_t read_file(const char *dir, const char *rel, size_t max,
			 char **out)
{
	char path[768];
	int fd;

	*out = NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s%s", dir, rel) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return read_fd(fd, max, out);
}

/* Hashes @dir@rel (up to 64 KiB) into *@h: false if it cannot be read. */
static bool hash_file(uint64_t *h, const char *dir, const char *rel)
{
	char *buf;
	ssize_t n = read_file(dir, rel, 65536, &buf);

	if (n <= 0) {
		free(buf);
		return false;
	}
	*h = fnv(fnv(*h, buf, (size_t)n), "\n", 1);
	free(buf);
	return true;
}

static bool good_name(const char *s, size_t n)
{
	size_t i;

	if (!n || n >= sizeof(((struct pf_fcache_seg *)0)->name))
		return false;
	for (i = 0; i < n; i++)
		if (!(s[i] == '_' || s[i] == '-' ||
		      (s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z')))
			return false;
	return true;
}

static int state_add(struct pf_fcache_state *st, const char *name,
		     uint64_t key)
{
	struct pf_fcache_seg *ns;

	ns = realloc(st->seg, (st->nseg + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	st->seg = ns;
	snprintf(ns[st->nseg].name, sizeof(ns[st->nseg].name), "%s", name);
	ns[st->nseg++].key = key;
	return 0;
}

void pf_fcache_state_free(struct pf_fcache_state *st)
{
	free(st->seg);
	st->seg = NULL;
	st->nseg = 0;
}

/*
 * The modules of /proc/modules ("name size refs users state address
 * [taints]"), last loaded first: into @st backwards, so first loaded first.
 */
static int state_modules(const char *sysroot, uint64_t boot,
			 struct pf_fcache_state *st)
{
	char *buf, *line, *next, **lines = NULL;
	size_t n = 0, cap = 0, i;
	ssize_t len;
	int err = 0;

	len = read_file(sysroot, "/proc/modules", MODULES_MAX, &buf);
	if (len == -ENOENT)
		return 0;	/* no module support */
	if (len < 0)
		return (int)len;
	for (line = buf; *line; line = next) {
		next = strchr(line, '\n');
		if (!next)
			break;	/* cut short: not ours to guess */
		*next++ = '\0';
		if (n == cap) {
			char **nl;

			cap = cap ? cap * 2 : 256;
			nl = realloc(lines, cap * sizeof(*nl));
			if (!nl) {
				err = -ENOMEM;
				goto out;
			}
			lines = nl;
		}
		lines[n++] = line;
	}
	for (i = n; i-- > 0 && !err; ) {
		char *f[6], *save = NULL, rel[160];
		uint64_t h = FNV_BASIS;
		int j;

		for (j = 0; j < 6; j++) {
			f[j] = strtok_r(j ? NULL : lines[i], " ", &save);
			if (!f[j])
				break;
		}
		if (j < 6 || !good_name(f[0], strlen(f[0]))) {
			err = -EINVAL;
			break;
		}
		if (strcmp(f[4], "Live")) {
			err = -EAGAIN;	/* its init functions come and go */
			break;
		}
		h = fnv(fnv(h, f[0], strlen(f[0]) + 1), f[1], strlen(f[1]) + 1);
		snprintf(rel, sizeof(rel), "/sys/module/%s/notes/.note.gnu.build-id",
			 f[0]);
		if (!hash_file(&h, sysroot, rel))
			h = fnv(fnv(h, &boot, sizeof(boot)), f[5], strlen(f[5]));
		err = state_add(st, f[0], h);
	}
out:
	free(lines);
	free(buf);
	return err;
}

int pf_fcache_state(const char *sysroot, const char *tracefs,
		    struct pf_fcache_state *st)
{
	uint64_t boot = FNV_BASIS, h = FNV_BASIS;
	char *buf;
	int err;

	memset(st, 0, sizeof(*st));
	st->total = -1;
	hash_file(&boot, sysroot, "/proc/sys/kernel/random/boot_id");
	h = fnv(h, "vmlinux", 8);
	hash_file(&h, sysroot, "/proc/version");
	if (!hash_file(&h, sysroot, "/sys/kernel/notes"))
		h = fnv(h, &boot, sizeof(boot));
	err = state_add(st, "vmlinux", h);
	if (!err)
		err = state_modules(sysroot, boot, st);
	if (err) {
		pf_fcache_state_free(st);
		return err;
	}
	/* "RECORDS pages:N groups: N": the first, ftrace's count. */
	if (read_file(tracefs, "/dyn_ftrace_total_info", 4096, &buf) > 0) {
		char *end;
		long long v = strtoll(buf, &end, 10);

		if (end != buf && v >= 0 && (*end == ' ' || *end == '\n'))
			st->total = v;
	}
	free(buf);
	return 0;
}

bool pf_fcache_state_eq(const struct pf_fcache_state *a,
			const struct pf_fcache_state *b)
{
	size_t i;

	if (a->nseg != b->nseg || a->total != b->total)
		return false;
	for (i = 0; i < a->nseg; i++)
		if (a->seg[i].key != b->seg[i].key ||
		    strcmp(a->seg[i].name, b->seg[i].name))
			return false;
	return true;
}

/* The segments in /proc/modules' order, hashed. */
static uint64_t state_hash(const struct pf_fcache_state *st)
{
	uint64_t h = FNV_BASIS;
	size_t i;

	for (i = 0; i < st->nseg; i++)
		h = fnv(fnv(h, st->seg[i].name, strlen(st->seg[i].name) + 1),
			&st->seg[i].key, sizeof(st->seg[i].key));
	return h;
}

/* A segment of a copy, pointing into its buffer. */
struct seg_ref {
	char name[64];
	uint64_t key;
	size_t lines, bytes;
	const char *body;
};

static bool parse_num(const char **p, const char *end, size_t *v, int base)
{
	const char *s = *p;
	size_t x = 0;
	int digits = 0;

	while (s < end && *s != ' ') {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else
			return false;
		if (++digits > (base == 16 ? 16 : 12))
			return false;
		x = x * (size_t)base + (size_t)d;
		s++;
	}
	if (!digits || s == end)
		return false;
	*v = x;
	*p = s + 1;
	return true;
}

/*
 * The segments of the copy in @buf (@len bytes): 0 with *@out (free() it)
 * and *@n, or -EINVAL when it is not a copy this code wrote.
 */
static int parse_copy(const char *buf, size_t len, struct seg_ref **out,
		      size_t *n, uint64_t *order, size_t *norder)
{
	const char *p = buf + strlen(MAGIC), *end = buf + len, *nl, *q;
	struct seg_ref *refs = NULL;
	char canon[SEG_HEAD_MAX + 1];
	size_t cap = 0, key;

	*out = NULL;
	*n = 0;
	if (len < strlen(MAGIC) || memcmp(buf, MAGIC, strlen(MAGIC)))
		return -EINVAL;
	nl = memchr(p, '\n', (size_t)(end - p) < SEG_HEAD_MAX ?
		    (size_t)(end - p) : SEG_HEAD_MAX);
	q = p + 6;
	if (!nl || nl - p < 6 || memcmp(p, "order ", 6) ||
	    !parse_num(&q, nl + 1, &key, 16) || q >= nl)
		return -EINVAL;
	*order = key;
	*norder = 0;
	while (q < nl && *q >= '0' && *q <= '9' && *norder < 1000000)
		*norder = *norder * 10 + (size_t)(*q++ - '0');
	if ((size_t)snprintf(canon, sizeof(canon), ORDER_FMT, *order,
			     *norder) != (size_t)(nl - p) + 1 ||
	    memcmp(canon, p, (size_t)(nl - p) + 1))
		return -EINVAL;
	p = nl + 1;
	while (p < end) {
		struct seg_ref r;
		const char *b, *c;
		size_t lines = 0;

		nl = memchr(p, '\n', (size_t)(end - p) < SEG_HEAD_MAX ?
			    (size_t)(end - p) : SEG_HEAD_MAX);
		q = p + 8;

		if (!nl || nl - p < 8 || memcmp(p, "segment ", 8) ||
		    !parse_num(&q, nl, &key, 16) ||
		    !parse_num(&q, nl, &r.lines, 10) ||
		    !parse_num(&q, nl, &r.bytes, 10) ||
		    !good_name(q, (size_t)(nl - q)))
			goto bad;
		memcpy(r.name, q, (size_t)(nl - q));
		r.name[nl - q] = '\0';
		r.key = key;
		/* One spelling only: what SEG_FMT writes. */
		if ((size_t)snprintf(canon, sizeof(canon), SEG_FMT, r.key,
				     r.lines, r.bytes, r.name) !=
		    (size_t)(nl - p) + 1 || memcmp(canon, p, (size_t)(nl - p) + 1))
			goto bad;
		b = nl + 1;
		if (r.bytes > (size_t)(end - b) || memchr(b, '\0', r.bytes) ||
		    (r.bytes && b[r.bytes - 1] != '\n'))
			goto bad;
		for (c = b; (c = memchr(c, '\n', (size_t)(b + r.bytes - c)));
		     c++)
			lines++;
		if (lines != r.lines)
			goto bad;
		r.body = b;
		if (*n == cap) {
			struct seg_ref *nr;

			cap = cap ? cap * 2 : 64;
			nr = realloc(refs, cap * sizeof(*nr));
			if (!nr) {
				free(refs);
				return -ENOMEM;
			}
			refs = nr;
		}
		refs[(*n)++] = r;
		p = b + r.bytes;
	}
	if (*norder > *n)
		goto bad;
	*out = refs;
	return 0;
bad:
	free(refs);
	*n = 0;
	return -EINVAL;
}

/* The copy at @path, whole, if it may be used: 0 or -errno. */
static int read_copy(const char *path, char **out, size_t *len)
{
	struct stat st;
	ssize_t n;
	int fd;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > PF_FCACHE_MAX) {
		close(fd);
		return -EINVAL;
	}
	/* One byte more than its size: one that shrank or grew meanwhile. */
	n = read_fd(fd, (size_t)st.st_size + 1, out);
	if (n >= 0 && n != st.st_size) {
		free(*out);
		*out = NULL;
		n = -EINVAL;
	}
	if (n < 0)
		return n == -EFBIG ? -EINVAL : (int)n;
	*len = (size_t)n;
	return 0;
}

static const struct seg_ref *find_ref(const struct seg_ref *refs, size_t n,
				      const struct pf_fcache_seg *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (refs[i].key == s->key && !strcmp(refs[i].name, s->name))
			return &refs[i];
	return NULL;
}

static bool find_seg(const struct pf_fcache_state *st,
		     const struct seg_ref *r)
{
	size_t i;

	for (i = 0; i < st->nseg; i++)
		if (st->seg[i].key == r->key && !strcmp(st->seg[i].name, r->name))
			return true;
	return false;
}

int pf_fcache_load(const char *path, const struct pf_fcache_state *st,
		   char **out, size_t *len)
{
	const struct seg_ref **use = NULL;
	size_t nrefs, norder, i, bytes = 0, lines = 0;
	struct seg_ref *refs;
	char *buf, *list, *p;
	uint64_t order;
	size_t flen;
	bool as_read;
	int err;

	*out = NULL;
	err = read_copy(path, &buf, &flen);
	if (err)
		return err;
	err = parse_copy(buf, flen, &refs, &nrefs, &order, &norder);
	if (err) {
		free(buf);
		return err;
	}
	use = calloc(st->nseg ? st->nseg : 1, sizeof(*use));
	if (!use)
		err = -ENOMEM;
	/* /proc/modules as when the list was read: the list's own order. */
	as_read = norder == st->nseg && order == state_hash(st);
	for (i = 0; !err && i < st->nseg; i++) {
		use[i] = find_ref(refs, nrefs, &st->seg[i]);
		if (!use[i]) {
			err = -ESTALE;
			break;
		}
		if (use[i] >= refs + norder)
			as_read = false;
		bytes += use[i]->bytes;
		lines += use[i]->lines;
	}
	/* ... and those segments are today's, each once. */
	for (i = 0; !err && as_read && i < norder; i++) {
		size_t j;

		for (j = 0; j < i; j++)
			if (refs[j].key == refs[i].key &&
			    !strcmp(refs[j].name, refs[i].name))
				break;
		if (j < i || !find_seg(st, &refs[i]))
			as_read = false;
	}
	if (!err && st->total >= 0 && lines != (size_t)st->total)
		err = -ESTALE;
	if (!err && !(list = malloc(bytes + 1)))
		err = -ENOMEM;
	if (!err) {
		for (i = 0, p = list; i < st->nseg; i++) {
			const struct seg_ref *r = as_read ? &refs[i] : use[i];

			memcpy(p, r->body, r->bytes);
			p += r->bytes;
		}
		*p = '\0';
		*out = list;
		*len = bytes;
	}
	free(use);
	free(refs);
	free(buf);
	return err;
}

/* The module a line names ("func [mod]"): its name and length, or NULL. */
static const char *line_mod(const char *line, size_t len, size_t *mlen)
{
	size_t i;

	if (len < 5 || line[len - 1] != ']')
		return NULL;
	for (i = len - 1; i-- > 1; ) {
		if (line[i] == '[') {
			if (line[i - 1] != ' ')
				return NULL;
			*mlen = len - 2 - i;
			return line + i + 1;
		}
	}
	return NULL;
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

static int write_seg(int fd, const char *name, uint64_t key, size_t lines,
		     const char *body, size_t bytes)
{
	char head[SEG_HEAD_MAX + 1];
	int err;

	snprintf(head, sizeof(head), SEG_FMT, key, lines, bytes, name);
	err = write_all(fd, head, strlen(head));
	return err ? err : write_all(fd, body, bytes);
}

/* Opens @tmp for a new copy, making its directories (0755) if missing. */
static int open_new(const char *tmp)
{
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
	int fd = open(tmp, flags, 0600);
	char dir[4200], *slash;

	if (fd >= 0 || errno != ENOENT)
		return fd < 0 ? -errno : fd;
	snprintf(dir, sizeof(dir), "%s", tmp);
	for (slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -errno;
		*slash = '/';
	}
	fd = open(tmp, flags, 0600);
	return fd < 0 ? -errno : fd;
}

int pf_fcache_store(const char *path, const struct pf_fcache_state *st,
		    const char *buf, size_t len)
{
	size_t *from = NULL, *to = NULL, *nlines = NULL, *seq = NULL;
	size_t nseq = 1, lines = 0, cur = 0, nold = 0, norder, i, kept = 0;
	const char *p = buf, *end = buf + len;
	char tmp[4200], head[SEG_HEAD_MAX + 1], *oldbuf = NULL;
	struct seg_ref *old = NULL;
	size_t oldlen;
	uint64_t order;
	int fd = -1, err = 0;

	if (!st->nseg || len > PF_FCACHE_MAX - SEG_HEAD_MAX * st->nseg)
		return -EFBIG;
	if (len && buf[len - 1] != '\n')
		return -EINVAL;
	if (memchr(buf, '\0', len))
		return -EINVAL;
	from = calloc(st->nseg, sizeof(*from));
	to = calloc(st->nseg, sizeof(*to));
	nlines = calloc(st->nseg, sizeof(*nlines));
	seq = calloc(st->nseg, sizeof(*seq));	/* seq[0]: vmlinux, 0 */
	if (!from || !to || !nlines || !seq) {
		err = -ENOMEM;
		goto out;
	}
	/*
	 * Split at each module's first line, in the list's order. A line
	 * naming no module (a record without a symbol) stays with the lines
	 * before it.
	 */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t mlen = 0, j, k;
		const char *mod = line_mod(p, (size_t)(nl - p), &mlen);

		if (mod && (cur == 0 || strlen(st->seg[cur].name) != mlen ||
			    memcmp(st->seg[cur].name, mod, mlen))) {
			for (j = 1; j < st->nseg; j++)
				if (strlen(st->seg[j].name) == mlen &&
				    !memcmp(st->seg[j].name, mod, mlen))
					break;
			for (k = 0; k < nseq && j < st->nseg; k++)
				if (seq[k] == j)
					break;
			if (j == st->nseg || k < nseq) {
				err = -ESTALE;	/* not loaded, or split */
				goto out;
			}
			seq[nseq++] = j;
			cur = j;
			from[cur] = to[cur] = (size_t)(p - buf);
		}
		nlines[cur]++;
		lines++;
		p = nl + 1;
		to[cur] = (size_t)(p - buf);
	}
	if (st->total >= 0 && lines != (size_t)st->total) {
		err = -ESTALE;
		goto out;
	}
	/* The modules without a function in the list: empty segments. */
	for (i = 1; i < st->nseg && nseq < st->nseg; i++) {
		size_t k;

		for (k = 0; k < nseq; k++)
			if (seq[k] == i)
				break;
		if (k == nseq)
			seq[nseq++] = i;
	}
	/* What is kept already of other kernels and modules. */
	if (!read_copy(path, &oldbuf, &oldlen) &&
	    parse_copy(oldbuf, oldlen, &old, &nold, &order, &norder))
		nold = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%ld", path,
			     (long)getpid()) >= sizeof(tmp)) {
		err = -ENAMETOOLONG;
		goto out;
	}
	fd = open_new(tmp);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	snprintf(head, sizeof(head), MAGIC ORDER_FMT, state_hash(st), st->nseg);
	err = write_all(fd, head, strlen(head));
	for (i = 0; !err && i < st->nseg; i++) {
		size_t k = seq[i];

		err = write_seg(fd, st->seg[k].name, st->seg[k].key, nlines[k],
				buf + from[k], to[k] - from[k]);
	}
	for (i = 0; !err && i < nold; i++) {
		size_t j;

		for (j = 0; j < st->nseg; j++)
			if (!strcmp(old[i].name, st->seg[j].name) &&
			    old[i].key == st->seg[j].key)
				break;
		if (j < st->nseg || kept + old[i].bytes > PF_FCACHE_KEEP ||
		    len + kept + old[i].bytes > PF_FCACHE_MAX / 2)
			continue;
		kept += old[i].bytes;
		err = write_seg(fd, old[i].name, old[i].key, old[i].lines,
				old[i].body, old[i].bytes);
	}
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
out:
	free(old);
	free(oldbuf);
	free(seq);
	free(from);
	free(to);
	free(nlines);
	return err;
}
