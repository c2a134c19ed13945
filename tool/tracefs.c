// SPDX-License-Identifier: GPL-2.0
/*
 * tracefs for "pktfilt trace": save, set up, restore. See tracefs.h for the
 * quirks this copes with.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memmem, strndup */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "tracefs.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Options that change what function_graph records or how it prints it,
 * and the value pktfilt needs: funcgraph-irqs off keeps interrupts out of
 * the packets' graphs; the others are the defaults, which the parser
 * (fgraph.c) reads. Options this kernel lacks are skipped.
 */
static const struct {
	const char *name;
	const char *want;
} pf_tfs_options[] = {
	{ "funcgraph-irqs",	"0" },
	{ "funcgraph-cpu",	"1" },
	{ "funcgraph-duration",	"1" },
	{ "funcgraph-overhead",	"1" },
	{ "funcgraph-proc",	"0" },
	{ "funcgraph-abstime",	"0" },
	{ "funcgraph-tail",	"0" },
	{ "funcgraph-overrun",	"0" },
	{ "funcgraph-retval",	"0" },
	{ "funcgraph-retaddr",	"0" },
	{ "funcgraph-args",	"0" },
	{ "context-info",	"1" },
	{ "latency-format",	"0" },
	{ "sym-offset",		"0" },
	{ "sym-addr",		"0" },
	{ "hex",		"0" },
	{ "bin",		"0" },
	{ "raw",		"0" },
};

static const char pf_tfs_sysfs[] = "/sys/kernel/tracing";
static const char pf_tfs_debugfs[] = "/sys/kernel/debug/tracing";

/*
 * PKTFILT_TRACE_TIMES=2: each file written, and each read of
 * available_filter_functions and set_ftrace_filter, timed on stderr.
 */
static long long tfs_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void tfs_time(const char *what, const char *rel, long long since)
{
	const char *env = getenv("PKTFILT_TRACE_TIMES");

	if (env && !strcmp(env, "2"))
		fprintf(stderr, "pktfilt: time: %s %s %lld.%03lld ms\n", what,
			rel, (tfs_us() - since) / 1000, (tfs_us() - since) % 1000);
}

static int __attribute__((format(printf, 3, 4)))
tfs_fail(struct pf_tracefs *t, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->err, sizeof(t->err), fmt, ap);
	va_end(ap);
	return err;
}

static int tfs_path(const struct pf_tracefs *t, const char *rel, char *buf,
		    size_t len)
{
	int n = snprintf(buf, len, "%s/%s", t->root, rel);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Reads all of @path; NUL-terminated. -errno. */
static int read_all(const char *path, char **out, size_t *outlen)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	int fd, err = 0;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(buf);
		return err;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
}

int pf_tracefs_read(struct pf_tracefs *t, const char *rel, char **buf,
		    size_t *len)
{
	char path[512];
	int err = tfs_path(t, rel, path, sizeof(path));

	if (!err)
		err = read_all(path, buf, len);
	if (err)
		return tfs_fail(t, err, "cannot read %s: %s", path,
				strerror(-err));
	return 0;
}

int pf_tfs_find(const struct pf_tracefs *t, const char *rel)
{
	size_t i;

	for (i = 0; i < t->nset; i++)
		if (!strcmp(t->set[i].rel, rel))
			return (int)i;
	return -1;
}

/* write(2)s all of @buf to @fd, as often as it takes. 0 or -errno. */
int pf_write_full(int fd, const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t w = write(fd, buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (!w)
			return -EIO;
		off += (size_t)w;
	}
	return 0;
}

/*
 * Opens @rel with O_TRUNC (which empties the function and PID lists, and
 * the trace), writes @block if not NULL (numbers of functions separated by
 * blanks: the kernel takes one each write(2) and says how much it took, so
 * the loop of pf_write_full() hands it the rest), then each of @items
 * followed by a newline, each with its own write(2): the kernel takes one
 * function per write and gives up at the first it refuses. Goes on past
 * refusals; failed[i] tells which (if @failed). Returns 0, or the first
 * -errno.
 */
static int tfs_write_entries(struct pf_tracefs *t, const char *rel,
			     const char *block, size_t blen,
			     char *const *items, size_t n, bool *failed)
{
	char path[512];
	int fd, first = 0, err;
	long long t0 = tfs_us();
	size_t i;

	err = tfs_path(t, rel, path, sizeof(path));
	if (err)
		return tfs_fail(t, err, "%s/%s: path too long", t->root, rel);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		return tfs_fail(t, err, "cannot open %s: %s", path,
				strerror(-err));
	}
	if (block && blen) {
		err = t->hooks && t->hooks->write ?
		      t->hooks->write(t->hooks->ctx, rel, block, blen) : 0;
		if (!err)
			err = pf_write_full(fd, block, blen);
		if (err) {
			first = err;
			tfs_fail(t, err, "writing function numbers to %s: %s",
				 path, strerror(-err));
		}
	}
	for (i = 0; i < n; i++) {
		size_t len = strlen(items[i]);
		char *line = malloc(len + 2);

		if (failed)
			failed[i] = false;
		if (!line) {
			err = -ENOMEM;
		} else {
			memcpy(line, items[i], len);
			line[len++] = '\n';
			line[len] = '\0';
			err = t->hooks && t->hooks->write ?
			      t->hooks->write(t->hooks->ctx, rel, line, len) : 0;
			if (!err)
				err = pf_write_full(fd, line, len);
			free(line);
		}
		if (err) {
			if (failed)
				failed[i] = true;
			if (!first) {
				first = err;
				tfs_fail(t, err, "writing '%s' to %s: %s",
					 items[i], path, strerror(-err));
			}
		}
	}
	if (close(fd) && !first) {
		first = -errno;
		tfs_fail(t, first, "writing %s: %s", path, strerror(-first));
	}
	if (t->hooks && t->hooks->closed)
		t->hooks->closed(t->hooks->ctx, rel);
	tfs_time("wrote", rel, t0);
	return first;
}

static int tfs_write_list(struct pf_tracefs *t, const char *rel,
			  char *const *items, size_t n, bool *failed)
{
	return tfs_write_entries(t, rel, NULL, 0, items, n, failed);
}

static int tfs_write_value(struct pf_tracefs *t, const char *rel,
			   const char *value)
{
	char *items[1] = { (char *)value };

	return tfs_write_list(t, rel, items, 1, NULL);
}

/* ------------------------------------------------------------------ */
/* ftrace's matching, in user space */

/* The kernel's parser takes tokens of KSYM_SYMBOL_LEN + 4 bytes at most. */
#define PF_TFS_TOKEN_MAX	200
#define PF_TFS_INVALID		"__ftrace_invalid_address__"

/* filter_parse_regex(), kernel/trace/trace_events_filter.c. */
static int parse_regex(char *buff, size_t len, const char **search,
		       bool *not)
{
	int type = PF_TFS_M_FULL;
	size_t i;

	*not = false;
	if (buff[0] == '!') {
		*not = true;
		buff++;
		len--;
	}
	*search = buff;
	if (buff[0] >= '0' && buff[0] <= '9')
		return PF_TFS_M_INDEX;
	for (i = 0; i < len; i++) {
		if (buff[i] == '*') {
			if (!i) {
				type = PF_TFS_M_END;
			} else if (i == len - 1) {
				type = type == PF_TFS_M_END ? PF_TFS_M_MIDDLE :
							      PF_TFS_M_FRONT;
				buff[i] = '\0';
				break;
			} else {
				return PF_TFS_M_GLOB;
			}
		} else if (buff[i] == '[' || buff[i] == '?' ||
			   buff[i] == '\\') {
			return PF_TFS_M_GLOB;
		}
	}
	if (buff[0] == '*')
		*search = buff + 1;
	return type;
}

/* glob_match(), lib/glob.c: @str of @slen bytes. */
static bool glob_match(const char *pat, const char *str, size_t slen)
{
	const char *back_pat = NULL, *back_str = NULL, *end = str + slen;

	for (;;) {
		unsigned char c = str < end ? (unsigned char)*str : '\0';
		unsigned char d = (unsigned char)*pat++;

		str++;
		switch (d) {
		case '?':
			if (c == '\0')
				return false;
			break;
		case '*':
			if (*pat == '\0')
				return true;
			back_pat = pat;
			back_str = --str;
			break;
		case '[': {
			bool match = false, inverted = *pat == '!';
			const char *class = pat + inverted;
			unsigned char a = (unsigned char)*class++;

			do {
				unsigned char b = a;

				if (a == '\0')
					goto literal;
				if (class[0] == '-' && class[1] != ']') {
					b = (unsigned char)class[1];
					if (b == '\0')
						goto literal;
					class += 2;
				}
				match |= a <= c && c <= b;
			} while ((a = (unsigned char)*class++) != ']');
			if (match == inverted)
				goto backtrack;
			pat = class;
			break;
		}
		case '\\':
			d = (unsigned char)*pat++;
			/* fall through */
		default:
literal:
			if (c == d) {
				if (d == '\0')
					return true;
				break;
			}
backtrack:
			if (c == '\0' || !back_pat)
				return false;
			pat = back_pat;
			str = ++back_str;
			break;
		}
	}
}

/* ftrace_match(), kernel/trace/ftrace.c: @str of @slen bytes. */
static bool ftrace_match(const char *str, size_t slen, int type,
			 const char *search, size_t len)
{
	switch (type) {
	case PF_TFS_M_FULL:
		return slen == len && !memcmp(str, search, len);
	case PF_TFS_M_FRONT:
		return slen >= len && !memcmp(str, search, len);
	case PF_TFS_M_MIDDLE:
		return memmem(str, slen, search, len) != NULL;
	case PF_TFS_M_END:
		return slen >= len && !memcmp(str + slen - len, search, len);
	case PF_TFS_M_GLOB:
		return glob_match(search, str, slen);
	}
	return false;	/* PF_TFS_M_INDEX matches no name */
}

void pf_tfs_glob_free(struct pf_tfs_glob *g)
{
	free(g->buf);
	memset(g, 0, sizeof(*g));
}

int pf_tfs_glob_parse(struct pf_tfs_glob *g, const char *text)
{
	char *colon, *mod;
	bool not;

	memset(g, 0, sizeof(*g));
	/*
	 * "[!...]" is left to ftrace: glob_match() lets it match the name's
	 * NUL and reads on past it, into what kallsyms_lookup() left in
	 * the buffer before.
	 */
	if (strlen(text) >= PF_TFS_TOKEN_MAX || strpbrk(text, " \t\n\v\f\r") ||
	    strstr(text, "[!"))
		return -EINVAL;
	g->buf = strdup(text);
	if (!g->buf)
		return -ENOMEM;
	/* ftrace_process_regex(): "func" or "func:command:param". */
	colon = strchr(g->buf, ':');
	if (colon) {
		*colon = '\0';
		mod = strchr(colon + 1, ':');
		if (!mod || (size_t)(mod - colon - 1) != 3 ||
		    memcmp(colon + 1, "mod", 3)) {
			pf_tfs_glob_free(g);
			return -EINVAL;	/* a probe, or no command */
		}
		*mod++ = '\0';
		g->has_mod = true;
		g->mtype = parse_regex(mod, strlen(mod), &g->msearch, &not);
		g->mexclude = not;
		g->mlen = strlen(g->msearch);
	}
	g->type = parse_regex(g->buf, strlen(g->buf), &g->search, &not);
	g->clear = not;
	g->len = strlen(g->search);
	if (g->type == PF_TFS_M_INDEX) {
		pf_tfs_glob_free(g);
		return -EINVAL;	/* add_rec_by_index(): a line number */
	}
	return 0;
}

/* ftrace_match_record(), kernel/trace/ftrace.c. */
static bool glob_match_rec(const struct pf_tfs_glob *g, const char *name,
			   size_t nlen, const char *mod, size_t mlen)
{
	if (g->has_mod) {
		bool mod_matches = mod && ftrace_match(mod, mlen, g->mtype,
						       g->msearch, g->mlen);

		if (!g->mlen) {
			/* blank module: any module, or with '!' none */
			if (!g->mexclude == !mod)
				return false;
		} else if (!mod_matches == !g->mexclude) {
			return false;
		}
		if (!g->len)
			return true;
	}
	return ftrace_match(name, nlen, g->type, g->search, g->len);
}

/* "name [module]": the name's length, and the module (NULL if none). */
static size_t split_line(const char *line, size_t len, const char **mod,
			 size_t *mlen)
{
	const char *sp = memchr(line, ' ', len);

	*mod = NULL;
	*mlen = 0;
	if (!sp)
		return len;
	if (len - (size_t)(sp - line) >= 3 && sp[1] == '[' &&
	    line[len - 1] == ']') {
		*mod = sp + 2;
		*mlen = len - (size_t)(sp - line) - 3;
	}
	return (size_t)(sp - line);
}

bool pf_tfs_glob_match(const struct pf_tfs_glob *g, const char *line)
{
	size_t len = strlen(line), nlen, mlen;
	const char *mod;

	if (!len || !strncmp(line, PF_TFS_INVALID, strlen(PF_TFS_INVALID)))
		return false;	/* lookup_ip() fails: ftrace skips it */
	nlen = split_line(line, len, &mod, &mlen);
	return glob_match_rec(g, line, nlen, mod, mlen);
}

/* ------------------------------------------------------------------ */
/* available_filter_functions */

struct pf_tfs_avail {
	char *buf;
	char **line;		/* line[i]: the function of number i + 1 */
	size_t n;
	size_t *sorted;		/* line numbers (0-based) by name, then number */
	unsigned char *used;	/* for restoring: numbers already taken */
};

static void avail_free(struct pf_tfs_avail *a);

static void avail_drop(struct pf_tracefs *t)
{
	avail_free(t->avail);
	t->avail = NULL;
}

static void avail_free(struct pf_tfs_avail *a)
{
	if (!a)
		return;
	free(a->buf);
	free(a->line);
	free(a->sorted);
	free(a->used);
	free(a);
}

/*
 * Reads @root's available_filter_functions into *@out. Touches nothing
 * else: it may run in a thread of its own. -errno (-ENOENT: none).
 */
static int avail_read(const char *root, struct pf_tfs_avail **out)
{
	struct pf_tfs_avail *a;
	char path[512], *p, *end;
	size_t len, cap = 0;
	long long t0 = tfs_us();
	int err;

	*out = NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s/available_filter_functions",
			     root) >= sizeof(path))
		return -ENAMETOOLONG;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	err = read_all(path, &a->buf, &len);
	if (err) {
		free(a);
		return err;
	}
	for (p = a->buf, end = a->buf + len; p < end; ) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		if (a->n == cap) {
			char **nv;

			cap = cap ? cap * 2 : 65536;
			nv = realloc(a->line, cap * sizeof(*nv));
			if (!nv) {
				avail_free(a);
				return -ENOMEM;
			}
			a->line = nv;
		}
		a->line[a->n++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	*out = a;
	tfs_time("read", "available_filter_functions", t0);
	return 0;
}

/* Reads available_filter_functions again. -errno (-ENOENT: none). */
static int avail_load(struct pf_tracefs *t)
{
	avail_drop(t);
	return avail_read(t->root, &t->avail);
}

static const struct pf_tfs_avail *sort_avail;

static int cmp_avail(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	int c = strcmp(sort_avail->line[i], sort_avail->line[j]);

	return c ? c : (i > j) - (i < j);
}

/*
 * The number (0-based) of the first line reading @line not taken yet from
 * @from on, else before it, or -1. Taken lines stay taken until
 * avail_untake(). Lists read in record order: with @from just after the
 * previous line's number, of functions named alike the one that was
 * there is found.
 */
static long avail_take(struct pf_tracefs *t, const char *line, size_t from)
{
	long first = -1;

	struct pf_tfs_avail *a = t->avail;
	size_t lo = 0, hi, i;

	if (!a->sorted) {
		a->sorted = malloc((a->n ? a->n : 1) * sizeof(*a->sorted));
		a->used = calloc(a->n ? a->n : 1, 1);
		if (!a->sorted || !a->used)
			return -1;
		for (i = 0; i < a->n; i++)
			a->sorted[i] = i;
		sort_avail = a;
		qsort(a->sorted, a->n, sizeof(*a->sorted), cmp_avail);
		sort_avail = NULL;
	}
	hi = a->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(a->line[a->sorted[mid]], line) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < a->n && !strcmp(a->line[a->sorted[i]], line); i++) {
		if (a->used[a->sorted[i]])
			continue;
		if (first < 0)
			first = (long)a->sorted[i];
		if (a->sorted[i] >= from) {
			first = (long)a->sorted[i];
			break;
		}
	}
	if (first >= 0)
		a->used[first] = 1;
	return first;
}

/* For another list: no number taken. */
static void avail_untake(struct pf_tracefs *t)
{
	if (t->avail && t->avail->used)
		memset(t->avail->used, 0, t->avail->n ? t->avail->n : 1);
}

/* ------------------------------------------------------------------ */
/* The settings table */

static int tfs_add(struct pf_tracefs *t, const char *rel,
		   enum pf_tfs_kind kind, int parent, bool required)
{
	struct pf_tfs_setting *s;
	char path[512];
	int err;

	if (t->nset == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct pf_tfs_setting *n = realloc(t->set, cap * sizeof(*n));

		if (!n)
			return tfs_fail(t, -ENOMEM, "out of memory");
		t->set = n;
		t->cap = cap;
	}
	s = &t->set[t->nset];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->parent = parent;
	s->rel = strdup(rel);
	if (!s->rel)
		return tfs_fail(t, -ENOMEM, "out of memory");
	err = tfs_path(t, rel, path, sizeof(path));
	if (!err)
		err = read_all(path, &s->saved, &s->saved_len);
	if (err == -ENOENT && !required) {
		free(s->rel);
		return 0;
	}
	if (err) {
		free(s->rel);
		return tfs_fail(t, err, "cannot read %s: %s", path,
				strerror(-err));
	}
	t->nset++;
	return 0;
}

static struct pf_tfs_setting *tfs_get(struct pf_tracefs *t, const char *rel)
{
	int i = pf_tfs_find(t, rel);

	return i < 0 ? NULL : &t->set[i];
}

/* Numbers N of the entries "<prefix>N" of directory @rel, sorted. */
static int tfs_list_dir(struct pf_tracefs *t, const char *rel,
			const char *prefix, unsigned int **out, size_t *nout)
{
	char path[512];
	unsigned int *v = NULL;
	size_t n = 0, cap = 0, plen = strlen(prefix), i, j;
	struct dirent *de;
	DIR *d;
	int err = tfs_path(t, rel, path, sizeof(path));

	if (err)
		return tfs_fail(t, err, "%s/%s: path too long", t->root, rel);
	d = opendir(path);
	if (!d) {
		err = -errno;
		return tfs_fail(t, err, "cannot read %s: %s", path,
				strerror(-err));
	}
	while ((de = readdir(d))) {
		char *end;
		unsigned long num;

		if (strncmp(de->d_name, prefix, plen) || !de->d_name[plen])
			continue;
		errno = 0;
		num = strtoul(de->d_name + plen, &end, 10);
		if (*end || errno || num >= PF_TFS_MAX_CPUS)
			continue;
		if (n == cap) {
			unsigned int *nv;

			cap = cap ? cap * 2 : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				closedir(d);
				free(v);
				return tfs_fail(t, -ENOMEM, "out of memory");
			}
			v = nv;
		}
		v[n++] = (unsigned int)num;
	}
	closedir(d);
	for (i = 1; i < n; i++)	/* insertion sort: a few CPUs */
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			unsigned int x = v[j];

			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	*out = v;
	*nout = n;
	return 0;
}

/* Adds events/G/E/enable (children of @group_idx) and events/G/E/filter. */
static int tfs_add_events(struct pf_tracefs *t, int group_idx)
{
	char rel[256], path[512];
	struct dirent *de;
	DIR *d;
	int err;

	snprintf(rel, sizeof(rel), "events/%s", t->group);
	err = tfs_path(t, rel, path, sizeof(path));
	if (err)
		return tfs_fail(t, err, "%s/%s: path too long", t->root, rel);
	d = opendir(path);
	if (!d) {
		err = -errno;
		return tfs_fail(t, err, "cannot read %s: %s", path,
				strerror(-err));
	}
	while ((de = readdir(d))) {
		struct stat st;
		char sub[512];

		if (de->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >=
		    (int)sizeof(sub) || stat(sub, &st) || !S_ISDIR(st.st_mode))
			continue;
		if (snprintf(rel, sizeof(rel), "events/%s/%s/enable",
			     t->group, de->d_name) >= (int)sizeof(rel))
			continue;
		err = tfs_add(t, rel, PF_TFS_VALUE, group_idx, false);
		if (!err && snprintf(rel, sizeof(rel), "events/%s/%s/filter",
				     t->group, de->d_name) < (int)sizeof(rel))
			err = tfs_add(t, rel, PF_TFS_EVFILTER, -1, false);
		if (err) {
			closedir(d);
			return err;
		}
	}
	closedir(d);
	return 0;
}

int pf_tracefs_save(struct pf_tracefs *t)
{
	static const struct {
		const char *rel;
		enum pf_tfs_kind kind;
		bool required;
	} files[] = {
		{ "tracing_on",			PF_TFS_VALUE,	true },
		{ "current_tracer",		PF_TFS_VALUE,	true },
		{ "set_ftrace_pid",		PF_TFS_PIDS,	true },
		{ "set_ftrace_notrace_pid",	PF_TFS_PIDS,	false },
		{ "set_event_pid",		PF_TFS_PIDS,	false },
		{ "set_event_notrace_pid",	PF_TFS_PIDS,	false },
		{ "set_graph_function",		PF_TFS_GRAPH,	true },
		{ "set_graph_notrace",		PF_TFS_GRAPH,	true },
		{ "set_ftrace_filter",		PF_TFS_FILTER,	true },
		{ "set_ftrace_notrace",		PF_TFS_FILTER,	true },
		{ "max_graph_depth",		PF_TFS_VALUE,	false },
		{ "tracing_thresh",		PF_TFS_VALUE,	false },
	};
	char rel[256];
	size_t i;
	int err, group;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		err = tfs_add(t, files[i].rel, files[i].kind, -1,
			      files[i].required);
		if (err) {
			if (err == -ENOENT && !strcmp(files[i].rel,
						      "set_graph_function"))
				return tfs_fail(t, err,
						"%s has no set_graph_function: this kernel lacks CONFIG_FUNCTION_GRAPH_TRACER or CONFIG_DYNAMIC_FTRACE",
						t->root);
			return err;
		}
	}
	for (i = 0; i < ARRAY_SIZE(pf_tfs_options); i++) {
		snprintf(rel, sizeof(rel), "options/%s", pf_tfs_options[i].name);
		err = tfs_add(t, rel, PF_TFS_VALUE, -1, false);
		if (err)
			return err;
	}

	/* The ring buffer's size, and each CPU's. */
	group = (int)t->nset;
	err = tfs_add(t, "buffer_size_kb", PF_TFS_GROUP, -1, true);
	if (err)
		return err;
	err = tfs_list_dir(t, "per_cpu", "cpu", &t->cpus, &t->ncpus);
	if (err)
		return err;
	for (i = 0; i < t->ncpus; i++) {
		snprintf(rel, sizeof(rel), "per_cpu/cpu%u/buffer_size_kb",
			 t->cpus[i]);
		err = tfs_add(t, rel, PF_TFS_VALUE, group, false);
		if (err)
			return err;
	}

	/* The module's events. */
	group = (int)t->nset;
	snprintf(rel, sizeof(rel), "events/%s/enable", t->group);
	err = tfs_add(t, rel, PF_TFS_GROUP, -1, true);
	if (err == -ENOENT)
		return tfs_fail(t, err,
				"%s has no events/%s: is the %s module loaded?",
				t->root, t->group, t->group);
	if (err)
		return err;
	err = tfs_add_events(t, group);
	if (err)
		return err;
	t->saved = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* What a setting's reading means, and how to write it back */

static size_t trim_len(const char *s, size_t len)
{
	while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
		len--;
	return len;
}

static bool saved_is(const struct pf_tfs_setting *s, const char *value)
{
	size_t len = trim_len(s->saved, s->saved_len);

	return len == strlen(value) && !memcmp(s->saved, value, len);
}

static void free_items(char **items, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(items[i]);
	free(items);
}

/*
 * The entries to write to restore a list as it reads in @s (PIDS, FILTER,
 * GRAPH): see tracefs.h for each kind's form.
 */
static int list_items(const struct pf_tfs_setting *s, char ***out,
		      size_t *nout)
{
	char **items = NULL;
	size_t n = 0, cap = 0;
	const char *p = s->saved, *end = s->saved + s->saved_len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (nl ? nl : end) - p;
		const char *sp, *line = p;
		char *item = NULL;

		p = nl ? nl + 1 : end;
		while (len && line[len - 1] == ' ')
			len--;
		if (!len || line[0] == '#')
			continue;	/* "#### all functions enabled ####" */
		sp = memchr(line, ' ', len);
		if (s->kind == PF_TFS_PIDS) {
			if (len == 6 && !memcmp(line, "no pid", 6))
				continue;
			item = strndup(line, len);
		} else if (sp && len - (size_t)(sp - line) > 3 && sp[1] == '[' &&
			   line[len - 1] == ']') {
			/* "func [mod]" */
			size_t flen = (size_t)(sp - line);
			size_t mlen = len - flen - 3;

			if (s->kind == PF_TFS_GRAPH) {
				item = strndup(line, flen);
			} else {
				item = malloc(flen + mlen + 6);
				if (item)
					sprintf(item, "%.*s:mod:%.*s",
						(int)flen, line, (int)mlen,
						sp + 2);
			}
		} else if (s->kind == PF_TFS_FILTER &&
			   memchr(line, ':', len) &&
			   !memmem(line, len, ":mod:", 5)) {
			continue;	/* a probe: "func:traceoff:unlimited" */
		} else {
			item = strndup(line, len);
		}
		if (!item) {
			free_items(items, n);
			return -ENOMEM;
		}
		if (n == cap) {
			char **ni;

			cap = cap ? cap * 2 : 16;
			ni = realloc(items, cap * sizeof(*ni));
			if (!ni) {
				free(item);
				free_items(items, n);
				return -ENOMEM;
			}
			items = ni;
		}
		items[n++] = item;
	}
	*out = items;
	*nout = n;
	return 0;
}

/* Does list setting @s have entries to restore? */
static bool list_empty(const struct pf_tfs_setting *s)
{
	char **items;
	size_t n;

	if (list_items(s, &items, &n))
		return false;
	free_items(items, n);
	return n == 0;
}

/* "7 (expanded: 1408)" -> "1408": the size once the buffer is in use. */
static size_t expected(const char *s, size_t len, char *out, size_t outlen)
{
	const char *e = memmem(s, len, "(expanded: ", 11);
	size_t n;

	if (!e) {
		n = len < outlen ? len : outlen;
		memcpy(out, s, n);
		return n;
	}
	e += 11;
	for (n = 0; e + n < s + len && e[n] >= '0' && e[n] <= '9' &&
	     n + 1 < outlen; n++)
		out[n] = e[n];
	if (n < outlen)
		out[n++] = '\n';
	return n;
}

static int restore_one(struct pf_tracefs *t, size_t i);

/* A growing buffer of function numbers, "N N N\n". */
struct numbuf {
	char *buf;
	size_t len, cap;
	size_t count;
};

static int numbuf_add(struct numbuf *b, size_t zero_based)
{
	if (b->cap - b->len < 24) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		char *nb = realloc(b->buf, cap);

		if (!nb)
			return -ENOMEM;
		b->buf = nb;
		b->cap = cap;
	}
	b->len += (size_t)snprintf(b->buf + b->len, b->cap - b->len, "%s%zu",
				   b->len ? " " : "", zero_based + 1);
	b->count++;
	return 0;
}

static int numbuf_end(struct numbuf *b)
{
	if (!b->len)
		return 0;
	if (b->cap - b->len < 2) {
		char *nb = realloc(b->buf, b->cap + 2);

		if (!nb)
			return -ENOMEM;
		b->buf = nb;
		b->cap += 2;
	}
	b->buf[b->len++] = '\n';
	b->buf[b->len] = '\0';
	return 0;
}

/*
 * set_ftrace_filter, set_ftrace_notrace as they read in @s: each function
 * by its number in available_filter_functions now (the first of its name
 * not taken yet: the list reads in the order of the numbers, so functions
 * named alike come back as they were), the rest by name (a function of a
 * module gone since, and the filters kept for modules to come).
 */
/* The functions a saved filter list names (not the caches, nor probes). */
static size_t count_functions(const struct pf_tfs_setting *s)
{
	const char *p = s->saved, *end = s->saved + s->saved_len;
	size_t n = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (nl ? nl : end) - p;

		n += len && p[0] != '#' && !memchr(p, ':', len);
		p = nl ? nl + 1 : end;
	}
	return n;
}

static int restore_filter(struct pf_tracefs *t, struct pf_tfs_setting *s)
{
	const char *p = s->saved, *end = s->saved + s->saved_len;
	struct numbuf nb = { 0 };
	char **items = NULL;
	size_t n = 0, cap = 0, from = 0;
	int err = 0;

	/*
	 * By number only for more than a few: reading the numbers costs as
	 * much as several names (ftrace looks each name up in every record).
	 */
	if (count_functions(s) >= t->numbers_min && !t->avail &&
	    avail_load(t))
		avail_drop(t);
	avail_untake(t);
	while (p < end && !err) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (nl ? nl : end) - p;
		const char *line = p, *sp;
		char buf[PF_TFS_TOKEN_MAX + 64], *item;
		long k = -1;

		p = nl ? nl + 1 : end;
		while (len && line[len - 1] == ' ')
			len--;
		if (!len || line[0] == '#')
			continue;	/* "#### all functions enabled ####" */
		if (memchr(line, ':', len)) {
			if (!memmem(line, len, ":mod:", 5))
				continue;	/* a probe: O_TRUNC left it */
			item = strndup(line, len);	/* a module to come */
		} else {
			if (t->avail && len < sizeof(buf)) {
				memcpy(buf, line, len);
				buf[len] = '\0';
				k = avail_take(t, buf, from);
			}
			if (k >= 0) {
				from = (size_t)k + 1;
				err = numbuf_add(&nb, (size_t)k);
				continue;
			}
			sp = memchr(line, ' ', len);
			if (sp && len - (size_t)(sp - line) > 3 && sp[1] == '[' &&
			    line[len - 1] == ']') {
				/* "func [mod]": "func:mod:mod" */
				size_t flen = (size_t)(sp - line);
				size_t mlen = len - flen - 3;

				item = malloc(flen + mlen + 6);
				if (item)
					sprintf(item, "%.*s:mod:%.*s", (int)flen,
						line, (int)mlen, sp + 2);
			} else {
				item = strndup(line, len);
			}
		}
		if (!item) {
			err = -ENOMEM;
			break;
		}
		if (n == cap) {
			char **ni;

			cap = cap ? cap * 2 : 16;
			ni = realloc(items, cap * sizeof(*ni));
			if (!ni) {
				free(item);
				err = -ENOMEM;
				break;
			}
			items = ni;
		}
		items[n++] = item;
	}
	if (!err)
		err = numbuf_end(&nb);
	if (!err)
		err = tfs_write_entries(t, s->rel, nb.buf, nb.len, items, n,
					NULL);
	else
		tfs_fail(t, err, "out of memory");
	free_items(items, n);
	free(nb.buf);
	return err;
}

static int restore_value(struct pf_tracefs *t, struct pf_tfs_setting *s)
{
	char buf[256];
	size_t len;

	len = expected(s->saved, s->saved_len, buf, sizeof(buf) - 1);
	len = trim_len(buf, len);
	buf[len] = '\0';
	return tfs_write_value(t, s->rel, buf);
}

static int restore_one(struct pf_tracefs *t, size_t i)
{
	struct pf_tfs_setting *s = &t->set[i];
	char **items;
	size_t n, j;
	int err, ret = 0;

	switch (s->kind) {
	case PF_TFS_VALUE:
		return restore_value(t, s);
	case PF_TFS_EVFILTER:
		if (saved_is(s, "none"))
			return tfs_write_value(t, s->rel, "0");
		return restore_value(t, s);
	case PF_TFS_GROUP:
		if (!saved_is(s, "X"))
			return restore_value(t, s);
		/* Mixed: each member as it was. */
		for (j = 0; j < t->nset; j++) {
			if (t->set[j].parent != (int)i)
				continue;
			err = restore_one(t, j);
			if (err && !ret)
				ret = err;
		}
		return ret;
	case PF_TFS_FILTER:
		return restore_filter(t, s);
	case PF_TFS_PIDS:
	case PF_TFS_GRAPH:
		err = list_items(s, &items, &n);
		if (err)
			return tfs_fail(t, err, "out of memory");
		err = tfs_write_list(t, s->rel, items, n, NULL);
		free_items(items, n);
		return err;
	}
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/* Setup */

static int touch(struct pf_tracefs *t, const char *rel,
		 struct pf_tfs_setting **out)
{
	struct pf_tfs_setting *s = tfs_get(t, rel);

	if (!s)
		return tfs_fail(t, -ENOENT, "%s/%s: not saved", t->root, rel);
	s->touched = true;
	if (out)
		*out = s;
	return 0;
}

/* Sets @rel to @value unless it already reads so (or is absent, if it may). */
static int set_value(struct pf_tracefs *t, const char *rel, const char *value,
		     bool force)
{
	struct pf_tfs_setting *s = tfs_get(t, rel);

	if (!s)
		return 0;	/* optional, and this kernel lacks it */
	if (!force && saved_is(s, value))
		return 0;
	s->touched = true;
	return tfs_write_value(t, rel, value);
}

/* Empties list @rel if it has entries. */
static int clear_list(struct pf_tracefs *t, const char *rel)
{
	struct pf_tfs_setting *s = tfs_get(t, rel);

	if (!s || list_empty(s))
		return 0;
	s->touched = true;
	return tfs_write_list(t, rel, NULL, 0, NULL);
}

static unsigned long parse_kb(const char *s, size_t len)
{
	char buf[64];
	size_t n = expected(s, len, buf, sizeof(buf) - 1);

	buf[n] = '\0';
	return strtoul(buf, NULL, 10);
}

static int setup_buffer(struct pf_tracefs *t, unsigned long want)
{
	struct pf_tfs_setting *top = tfs_get(t, "buffer_size_kb");
	unsigned long cur_min = 0, cur_max = 0, v;
	int gi = pf_tfs_find(t, "buffer_size_kb");
	bool any = false;
	char val[32];
	size_t i;

	if (!want || !top)
		return 0;
	for (i = 0; i < t->nset; i++) {
		/* Unused yet ("7 (expanded: 1408)"): the expanded size. */
		if (t->set[i].parent != gi ||
		    memmem(top->saved, top->saved_len, "(expanded: ", 11))
			continue;
		v = parse_kb(t->set[i].saved, t->set[i].saved_len);
		if (!any || v < cur_min)
			cur_min = v;
		if (v > cur_max)
			cur_max = v;
		any = true;
	}
	if (!any)
		cur_min = cur_max = parse_kb(top->saved, top->saved_len);
	if (cur_min >= want)
		return 0;
	/* One size for all CPUs; none made smaller. */
	snprintf(val, sizeof(val), "%lu", want > cur_max ? want : cur_max);
	top->touched = true;
	return tfs_write_value(t, "buffer_size_kb", val);
}

/* The entries as they are, each its own write: the kernel matches them. */
static int filter_by_glob(struct pf_tracefs *t, const struct pf_tfs_config *c)
{
	size_t n = c->nroots + c->nglobs, i;
	char **items;
	bool *failed;
	int err;

	/*
	 * The handlers too: function_graph starts a graph only at a
	 * function it traces. Each entry is its own write, so that a
	 * refusal names its glob.
	 */
	items = calloc(n, sizeof(*items));
	failed = calloc(n, sizeof(*failed));
	if (!items || !failed) {
		free(items);
		free(failed);
		return tfs_fail(t, -ENOMEM, "out of memory");
	}
	for (i = 0; i < c->nroots; i++)
		items[i] = (char *)c->roots[i];
	for (i = 0; i < c->nglobs; i++)
		items[c->nroots + i] = (char *)c->globs[i];
	err = tfs_write_list(t, "set_ftrace_filter", items, n, failed);
	if (err == -ENOENT || err == -EACCES || err == -EPERM)
		goto out;
	/* A root that failed was told by setup_graph(). */
	err = 0;
	for (i = c->nroots; i < n && !c->globs_optional; i++) {
		if (failed[i]) {
			err = tfs_fail(t, PF_TFS_EGLOB,
				       "--functions: the kernel refuses '%s': no function it can trace matches it",
				       items[i]);
			break;
		}
	}
out:
	free(items);
	free(failed);
	return err;
}

/*
 * Matching the handlers and the globs against available_filter_functions.
 * The read is the costly part (the kernel walks its records from the
 * first again for every page it prints): it runs in a thread of its own
 * while pf_tracefs_setup() writes the settings before set_ftrace_filter.
 */
struct pf_tfs_match {
	struct pf_tfs_glob *g;
	size_t n;		/* entries: the roots, then the globs */
	size_t *full, nfull;	/* whole names, sorted */
	size_t *rest, nrest;	/* the others, in order */
	size_t *bucket[257];	/* of rest: "x*" by first byte; [256]: others */
	size_t nbucket[257];
	char root[256];
	/* what a run found */
	struct pf_tfs_avail *avail;
	unsigned char *sel;	/* per line: set */
	bool *hit;		/* per entry: matched a line */
	int err;
	pthread_t thread;
	bool running;
};

static void match_free(struct pf_tfs_match *m)
{
	size_t i;

	if (!m)
		return;
	if (m->running)
		pthread_join(m->thread, NULL);
	if (m->g)
		for (i = 0; i < m->n; i++)
			pf_tfs_glob_free(&m->g[i]);
	free(m->g);
	free(m->full);
	free(m->rest);
	for (i = 0; i < 257; i++)
		free(m->bucket[i]);
	avail_free(m->avail);
	free(m->sel);
	free(m->hit);
	free(m);
}

/* A whole name's entry against a line's name of @nlen bytes. */
static int cmp_name(const struct pf_tfs_glob *g, const char *name, size_t nlen)
{
	size_t l = g->len < nlen ? g->len : nlen;
	int c = memcmp(g->search, name, l);

	return c ? c : (g->len > nlen) - (g->len < nlen);
}

static const struct pf_tfs_glob *sort_globs;

static int cmp_full(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	int c = strcmp(sort_globs[i].search, sort_globs[j].search);

	return c ? c : (i > j) - (i < j);
}

/*
 * Parses the entries: NULL and 0 if one is not for this matcher (then
 * ftrace gets the globs), or -ENOMEM.
 */
static int match_prepare(const struct pf_tracefs *t,
			 const struct pf_tfs_config *c, struct pf_tfs_match **out)
{
	struct pf_tfs_match *m = calloc(1, sizeof(*m));
	size_t i, b;
	int err = 0;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	snprintf(m->root, sizeof(m->root), "%s", t->root);
	m->n = c->nroots + c->nglobs;
	m->g = calloc(m->n, sizeof(*m->g));
	m->full = malloc(m->n * sizeof(*m->full));
	m->rest = malloc(m->n * sizeof(*m->rest));
	m->hit = calloc(m->n, sizeof(*m->hit));
	for (b = 0; b < 257; b++) {
		m->bucket[b] = malloc(m->n * sizeof(*m->bucket[b]));
		if (!m->bucket[b])
			err = -ENOMEM;
	}
	if (!m->g || !m->full || !m->rest || !m->hit || err) {
		match_free(m);
		return -ENOMEM;
	}
	for (i = 0; i < m->n; i++) {
		err = pf_tfs_glob_parse(&m->g[i], i < c->nroots ? c->roots[i] :
					c->globs[i - c->nroots]);
		if (err) {
			match_free(m);
			return err == -EINVAL ? 0 : err;
		}
	}
	/* Whole names apart, sorted; the others in their order. */
	for (i = 0; i < m->n; i++) {
		const struct pf_tfs_glob *g = &m->g[i];

		if (g->type == PF_TFS_M_FULL && !g->has_mod) {
			m->full[m->nfull++] = i;
			continue;
		}
		m->rest[m->nrest++] = i;
		b = !g->has_mod && g->len && g->type == PF_TFS_M_FRONT ?
		    (unsigned char)g->search[0] : 256;
		m->bucket[b][m->nbucket[b]++] = i;
	}
	sort_globs = m->g;
	qsort(m->full, m->nfull, sizeof(*m->full), cmp_full);
	sort_globs = NULL;
	*out = m;
	return 0;
}

/*
 * Reads available_filter_functions and finds, for each line, the last
 * entry that matches it (entries apply in order: that one decides).
 * Touches nothing but @m.
 */
static void match_run(struct pf_tfs_match *m)
{
	struct pf_tfs_avail *a;
	long long t0;
	size_t k;

	avail_free(m->avail);
	m->avail = NULL;
	free(m->sel);
	m->sel = NULL;
	m->err = avail_read(m->root, &m->avail);
	if (m->err)
		return;
	a = m->avail;
	m->sel = calloc(a->n ? a->n : 1, 1);
	if (!m->sel) {
		m->err = -ENOMEM;
		return;
	}
	memset(m->hit, 0, m->n * sizeof(*m->hit));
	t0 = tfs_us();
	for (k = 0; k < a->n; k++) {
		const char *line = a->line[k], *mod;
		size_t len = strlen(line), nlen, mlen, lo, hi, j, b, i;
		long last = -1;

		if (!len || !strncmp(line, PF_TFS_INVALID,
				     strlen(PF_TFS_INVALID)))
			continue;
		nlen = split_line(line, len, &mod, &mlen);
		/* Whole names (thousands, learned): by halving. */
		lo = 0;
		hi = m->nfull;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (cmp_name(&m->g[m->full[mid]], line, nlen) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (j = lo; j < m->nfull &&
		     !cmp_name(&m->g[m->full[j]], line, nlen); j++) {
			m->hit[m->full[j]] = true;
			if ((long)m->full[j] > last)
				last = (long)m->full[j];
		}
		/* "x*" of the line's first byte, then every other form. */
		for (b = (unsigned char)line[0]; ; b = 256) {
			for (j = 0; j < m->nbucket[b]; j++) {
				i = m->bucket[b][j];
				if (glob_match_rec(&m->g[i], line, nlen, mod,
						   mlen)) {
					m->hit[i] = true;
					if ((long)i > last)
						last = (long)i;
				}
			}
			if (b == 256)
				break;
		}
		if (last >= 0)
			m->sel[k] = !m->g[last].clear;
	}
	tfs_time("matched", "the globs", t0);
}

static void *match_thread(void *arg)
{
	match_run(arg);
	return NULL;
}

/* Starts match_run() in a thread, or leaves it for match_wait(). */
static void match_start(struct pf_tfs_match *m)
{
	sigset_t all, old;

	/* The thread takes no signal: signalfd reads them in the caller. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	m->running = !pthread_create(&m->thread, NULL, match_thread, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void match_wait(struct pf_tfs_match *m)
{
	if (m->running) {
		pthread_join(m->thread, NULL);
		m->running = false;
	} else {
		match_run(m);
	}
}

/*
 * Reads set_ftrace_filter back: the functions it names, one a line (not
 * the header, not the ":mod:" caches nor the probes after them), into
 * *@out (free() it) and their number into *@count.
 */
static int filter_functions(struct pf_tracefs *t, char **out, size_t *len,
			    size_t *count)
{
	char *buf, *p, *q, *end;
	size_t n = 0;
	long long t0 = tfs_us();
	int err = pf_tracefs_read(t, "set_ftrace_filter", &buf, len);

	if (err)
		return err;
	tfs_time("read", "set_ftrace_filter", t0);
	for (p = q = buf, end = buf + *len; p < end; ) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = (nl ? nl : end) - p;

		if (l && p[0] != '#' && !memchr(p, ':', l)) {
			memmove(q, p, l);
			q += l;
			*q++ = '\n';
			n++;
		}
		p = nl ? nl + 1 : end;
	}
	*q = '\0';
	*len = (size_t)(q - buf);
	*out = buf;
	*count = n;
	return 0;
}

/*
 * The matching lines (@m, started by the caller) written as numbers, the
 * result read back and checked; once more on a difference (a module came
 * or went: the numbers moved). 0 done, 1 cannot (the caller writes the
 * globs), or an error.
 */
static int filter_by_index(struct pf_tracefs *t, const struct pf_tfs_config *c,
			   struct pf_tfs_match *m)
{
	size_t i, k, attempt;
	int err = 0;

	for (attempt = 0; attempt < 2; attempt++) {
		struct numbuf nb = { 0 };
		char *want = NULL, *got = NULL;
		size_t wlen = 0, wcap = 0, glen, gcount;
		const struct pf_tfs_avail *a;

		if (attempt)
			match_run(m);
		else
			match_wait(m);
		if (m->err == -ENOMEM)
			return tfs_fail(t, -ENOMEM, "out of memory");
		if (m->err)
			return 1;	/* no such file */
		a = m->avail;
		for (i = c->nroots; i < m->n; i++) {
			if (m->hit[i])
				continue;
			if (m->g[i].has_mod)
				return 1;	/* ftrace keeps it for the module */
			if (!c->globs_optional)
				return tfs_fail(t, PF_TFS_EGLOB,
						"--functions: the kernel refuses '%s': no function it can trace matches it",
						c->globs[i - c->nroots]);
		}
		for (k = 0; k < a->n && !err; k++) {
			size_t l;

			if (!m->sel[k])
				continue;
			err = numbuf_add(&nb, k);
			l = strlen(a->line[k]) + 1;
			if (!err && wcap - wlen <= l) {
				char *nw;

				wcap = (wcap ? wcap * 2 : 65536) + l;
				nw = realloc(want, wcap);
				if (!nw)
					err = -ENOMEM;
				else
					want = nw;
			}
			if (!err) {
				memcpy(want + wlen, a->line[k], l - 1);
				want[wlen + l - 1] = '\n';
				wlen += l;
			}
		}
		if (!err)
			err = numbuf_end(&nb);
		if (!err && !nb.count) {
			/* An empty filter is every function: leave it to ftrace. */
			free(nb.buf);
			free(want);
			return 1;
		}
		if (!err)
			err = tfs_write_entries(t, "set_ftrace_filter", nb.buf,
						nb.len, NULL, 0, NULL);
		free(nb.buf);
		if (!err)
			err = filter_functions(t, &got, &glen, &gcount);
		if (!err && glen == wlen && (!wlen || !memcmp(got, want, wlen))) {
			free(got);
			free(want);
			t->nfuncs = gcount;
			t->by_index = true;
			return 0;
		}
		free(got);
		free(want);
		if (err == -ENOMEM)
			return tfs_fail(t, -ENOMEM, "out of memory");
		err = 0;	/* refused, or not as meant: once more */
	}
	return 1;
}

static int setup_filter(struct pf_tracefs *t, const struct pf_tfs_config *c,
			struct pf_tfs_match *m)
{
	char *got;
	size_t len;
	int err;

	t->nfuncs = 0;
	t->by_index = false;
	if (!c->nglobs) {
		/* All functions: write only if it names some now. */
		return clear_list(t, "set_ftrace_filter");
	}
	err = touch(t, "set_ftrace_filter", NULL);
	if (err)
		return err;
	if (m) {
		err = filter_by_index(t, c, m);
		if (err <= 0)
			return err;
	}
	err = filter_by_glob(t, c);
	if (!err && !filter_functions(t, &got, &len, &t->nfuncs))
		free(got);
	return err;
}

static int setup_graph(struct pf_tracefs *t, const struct pf_tfs_config *c)
{
	bool *failed = calloc(c->nroots ? c->nroots : 1, sizeof(*failed));
	size_t i, ok = 0;
	int err;

	if (!failed)
		return tfs_fail(t, -ENOMEM, "out of memory");
	err = touch(t, "set_graph_function", NULL);
	if (!err)
		err = tfs_write_list(t, "set_graph_function",
				     (char *const *)c->roots, c->nroots,
				     failed);
	if (err == -ENOENT || err == -EACCES || err == -EPERM) {
		free(failed);
		return err;
	}
	t->note[0] = '\0';
	for (i = 0; i < c->nroots; i++) {
		size_t off = strlen(t->note);

		ok += !failed[i];
		if (failed[i])
			snprintf(t->note + off, sizeof(t->note) - off, "%s%s",
				 off ? ", " : "", c->roots[i]);
	}
	free(failed);
	if (c->nroots && !ok)
		return tfs_fail(t, PF_TFS_ENOROOT,
				"none of the protocol handlers (%s%s) is a function ftrace can trace",
				c->roots[0], c->nroots > 1 ? ", ..." : "");
	return 0;
}

static int setup(struct pf_tracefs *t, const struct pf_tfs_config *c,
		 struct pf_tfs_match *m)
{
	static const char *const lists[] = {
		"set_ftrace_notrace_pid", "set_event_pid",
		"set_event_notrace_pid", "set_graph_notrace",
		"set_ftrace_notrace",
	};
	char pid[24];
	char *pids[1] = { pid };
	struct pf_tfs_setting *s;
	size_t i;
	int err;

	if (!t->saved)
		return tfs_fail(t, -EINVAL, "tracefs settings not saved");
	/* Tracing off and the tracer nop before anything else. */
	err = set_value(t, "tracing_on", "0", true);
	if (!err)
		err = set_value(t, "current_tracer", "nop", false);
	if (err)
		return err;

	/* Function tracing for a PID no task has: nothing but the gate. */
	snprintf(pid, sizeof(pid), "%ld", (long)c->idle_pid);
	s = tfs_get(t, "set_ftrace_pid");
	if (!saved_is(s, pid)) {
		s->touched = true;
		err = tfs_write_list(t, "set_ftrace_pid", pids, 1, NULL);
		if (err)
			return err;
	}
	for (i = 0; i < ARRAY_SIZE(lists); i++) {
		err = clear_list(t, lists[i]);
		if (err)
			return err;
	}
	for (i = 0; i < ARRAY_SIZE(pf_tfs_options); i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "options/%s", pf_tfs_options[i].name);
		err = set_value(t, rel, pf_tfs_options[i].want, false);
		if (err)
			return err;
	}
	err = set_value(t, "max_graph_depth", "0", false);
	if (!err)
		err = set_value(t, "tracing_thresh", "0", false);
	if (!err)
		err = setup_graph(t, c);
	if (!err)
		err = setup_filter(t, c, m);
	if (!err)
		err = setup_buffer(t, c->buffer_kb);
	if (err)
		return err;

	/* No event filter in the way of the packet events; enable them. */
	for (i = 0; i < t->nset; i++) {
		s = &t->set[i];
		if (s->kind != PF_TFS_EVFILTER || saved_is(s, "none"))
			continue;
		s->touched = true;
		err = tfs_write_value(t, s->rel, "0");
		if (err)
			return err;
	}
	for (i = 0; i < t->nset; i++) {
		s = &t->set[i];
		if (s->kind == PF_TFS_GROUP && !strncmp(s->rel, "events/", 7)) {
			err = set_value(t, s->rel, "1", false);
			if (err)
				return err;
		}
	}
	/* An empty trace (O_TRUNC). */
	return tfs_write_list(t, "trace", NULL, 0, NULL);
}

int pf_tracefs_setup(struct pf_tracefs *t, const struct pf_tfs_config *c)
{
	struct pf_tfs_match *m;
	int err;

	if (!t->saved)
		return tfs_fail(t, -EINVAL, "tracefs settings not saved");
	/* available_filter_functions read meanwhile, if not since prefetch. */
	if (!t->match && c->nglobs) {
		err = pf_tracefs_prefetch(t, c);
		if (err)
			return err;
	}
	m = t->match;
	t->match = NULL;
	err = setup(t, c, c->nglobs ? m : NULL);
	match_free(m);
	return err;
}

int pf_tracefs_prefetch(struct pf_tracefs *t, const struct pf_tfs_config *c)
{
	int err;

	match_free(t->match);
	t->match = NULL;
	if (!c->nglobs)
		return 0;
	err = match_prepare(t, c, &t->match);
	if (err)
		return tfs_fail(t, err, "out of memory");
	if (t->match)
		match_start(t->match);
	return 0;
}

int pf_tracefs_start(struct pf_tracefs *t)
{
	int err = touch(t, "current_tracer", NULL);

	if (!err)
		err = tfs_write_value(t, "current_tracer", "function_graph");
	if (!err)
		err = set_value(t, "tracing_on", "1", true);
	return err;
}

int pf_tracefs_stop(struct pf_tracefs *t)
{
	return set_value(t, "tracing_on", "0", true);
}

/* The value after "@key:" in a per_cpu stats file. */
static uint64_t stat_field(const char *buf, const char *key)
{
	size_t klen = strlen(key);
	const char *p = buf;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ':')
			return strtoull(p + klen + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

int pf_tracefs_lost(struct pf_tracefs *t, uint64_t *lost)
{
	char rel[64], *buf;
	size_t i, len;
	int err;

	for (i = 0; i < t->ncpus; i++) {
		snprintf(rel, sizeof(rel), "per_cpu/cpu%u/stats", t->cpus[i]);
		err = pf_tracefs_read(t, rel, &buf, &len);
		if (err)
			return err;
		lost[i] = stat_field(buf, "overrun") +
			  stat_field(buf, "commit overrun") +
			  stat_field(buf, "dropped events");
		free(buf);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Restore */

static void show_bytes(FILE *out, const char *s, size_t len)
{
	size_t i;

	if (len > 200) {
		show_bytes(out, s, 100);
		fprintf(out, "...(%zu bytes)...", len - 200);
		show_bytes(out, s + len - 100, 100);
		return;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n')
			fputs("\\n", out);
		else if (c == '\\')
			fputs("\\\\", out);
		else if (c < 32 || c > 126)
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
}

/*
 * "K\n" for a buffer that read "N (expanded: M)" before it was used: the
 * kernel rounds M KiB up to whole ring buffer pages (1408 reads 1410).
 */
static bool expanded_to(const char *g, size_t glen, const char *now,
			size_t len)
{
	const char *e = memmem(g, glen, "(expanded: ", 11);
	unsigned long m, k;
	char buf[32], *end;

	if (!e || !len || len >= sizeof(buf) || now[len - 1] != '\n')
		return false;
	m = strtoul(e + 11, NULL, 10);
	memcpy(buf, now, len - 1);
	buf[len - 1] = '\0';
	k = strtoul(buf, &end, 10);
	return !*end && end != buf && k >= m && k <= m + 64;
}

/* Does @now match what @s read before (or, for a buffer size, expanded)? */
static bool same_as_saved(const struct pf_tracefs *t,
			  const struct pf_tfs_setting *s, const char *now,
			  size_t len)
{
	const struct pf_tfs_setting *g;

	if (len == s->saved_len && !memcmp(now, s->saved, len))
		return true;
	/* A buffer that was never used is expanded now, and its CPUs'. */
	g = s->parent >= 0 ? &t->set[s->parent] : s;
	return g->kind == PF_TFS_GROUP &&
	       expanded_to(g->saved, g->saved_len, now, len);
}

int pf_tracefs_restore(struct pf_tracefs *t, FILE *warn)
{
	int on = pf_tfs_find(t, "tracing_on");
	int tracer = pf_tfs_find(t, "current_tracer");
	int first = 0, err, bad = 0;
	size_t i;

	if (!t->saved)
		return 0;
	/* Off, and nop: the settings are free to change. */
	if (on >= 0 && t->set[on].touched) {
		err = tfs_write_value(t, "tracing_on", "0");
		if (err && !first)
			first = err;
	}
	if (tracer >= 0 && t->set[tracer].touched) {
		err = tfs_write_value(t, "current_tracer", "nop");
		if (err && !first)
			first = err;
	}
	for (i = 0; i < t->nset; i++) {
		if (!t->set[i].touched || (int)i == on || (int)i == tracer)
			continue;
		err = restore_one(t, i);
		if (err && !first)
			first = err;
		if (err && warn)
			fprintf(warn, "pktfilt: restoring tracefs: %s\n",
				t->err);
	}
	/* The tracer (which empties the buffer), then tracing_on. */
	if (tracer >= 0 && t->set[tracer].touched) {
		err = restore_one(t, (size_t)tracer);
		if (err && warn)
			fprintf(warn, "pktfilt: restoring tracefs: %s\n",
				t->err);
	}
	if (on >= 0 && t->set[on].touched) {
		err = restore_one(t, (size_t)on);
		if (err && warn)
			fprintf(warn, "pktfilt: restoring tracefs: %s\n",
				t->err);
	}

	avail_drop(t);

	/* Check every saved setting, touched or not. */
	for (i = 0; i < t->nset; i++) {
		const struct pf_tfs_setting *s = &t->set[i];
		char path[512], *now;
		size_t len;

		if (tfs_path(t, s->rel, path, sizeof(path)) ||
		    read_all(path, &now, &len)) {
			bad++;
			if (warn)
				fprintf(warn,
					"pktfilt: tracefs: cannot read %s back\n",
					s->rel);
			continue;
		}
		if (!same_as_saved(t, s, now, len)) {
			bad++;
			if (warn) {
				fprintf(warn,
					"pktfilt: tracefs: %s/%s is not as it was: was \"",
					t->root, s->rel);
				show_bytes(warn, s->saved, s->saved_len);
				fprintf(warn, "\", now \"");
				show_bytes(warn, now, len);
				fprintf(warn, "\"\n");
			}
		}
		free(now);
	}
	for (i = 0; i < t->nset; i++)
		t->set[i].touched = false;
	return bad;
}

/* ------------------------------------------------------------------ */
/* Finding tracefs */

static bool is_tracefs(const char *dir)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/current_tracer", dir);
	return !access(path, F_OK);
}

int pf_tracefs_open(struct pf_tracefs *t, const char *root, const char *group)
{
	memset(t, 0, sizeof(*t));
	t->numbers_min = PF_TFS_NUMBERS_MIN;
	snprintf(t->group, sizeof(t->group), "%s", group);
	if (root) {
		snprintf(t->root, sizeof(t->root), "%s", root);
		return 0;
	}
	if (is_tracefs(pf_tfs_sysfs)) {
		snprintf(t->root, sizeof(t->root), "%s", pf_tfs_sysfs);
		return 0;
	}
	/* Looking at it makes debugfs mount tracefs there. */
	if (is_tracefs(pf_tfs_debugfs)) {
		snprintf(t->root, sizeof(t->root), "%s", pf_tfs_debugfs);
		return 0;
	}
	if (mount("nodev", pf_tfs_sysfs, "tracefs", 0, NULL)) {
		int err = -errno;

		return tfs_fail(t, err,
				"tracefs is not mounted, and mounting it on %s failed: %s",
				pf_tfs_sysfs, strerror(-err));
	}
	snprintf(t->root, sizeof(t->root), "%s", pf_tfs_sysfs);
	t->mounted = true;
	if (!is_tracefs(t->root)) {
		pf_tracefs_close(t);
		return tfs_fail(t, -ENOENT, "tracefs mounted on %s is empty",
				pf_tfs_sysfs);
	}
	return 0;
}

void pf_tracefs_close(struct pf_tracefs *t)
{
	size_t i;

	avail_drop(t);
	match_free(t->match);
	t->match = NULL;
	for (i = 0; i < t->nset; i++) {
		free(t->set[i].rel);
		free(t->set[i].saved);
	}
	free(t->set);
	free(t->cpus);
	t->set = NULL;
	t->cpus = NULL;
	t->nset = t->cap = t->ncpus = 0;
	t->saved = false;
	if (t->mounted) {
		if (umount2(t->root, 0) && errno == EBUSY)
			umount2(t->root, MNT_DETACH);
		t->mounted = false;
	}
}
