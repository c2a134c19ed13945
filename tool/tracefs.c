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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "funcs_cache.h"
#include "tracefs.h"
#include "tracefs_int.h"

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
	{ "funcgraph-retval-hex", "0" },
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
long long tfs_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void tfs_time(const char *what, const char *rel, long long since)
{
	const char *env = getenv("PKTFILT_TRACE_TIMES");

	if (env && !strcmp(env, "2"))
		fprintf(stderr, "pktfilt: time: %s %s %lld.%03lld ms\n", what,
			rel, (tfs_us() - since) / 1000, (tfs_us() - since) % 1000);
}

int __attribute__((format(printf, 3, 4)))
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
int tfs_read_all(const char *path, char **out, size_t *outlen)
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
		err = tfs_read_all(path, buf, len);
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
int tfs_write_entries(struct pf_tracefs *t, const char *rel,
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
		err = tfs_read_all(path, &s->saved, &s->saved_len);
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

void tfs_free_items(char **items, size_t n)
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
			tfs_free_items(items, n);
			return -ENOMEM;
		}
		if (n == cap) {
			char **ni;

			cap = cap ? cap * 2 : 16;
			ni = realloc(items, cap * sizeof(*ni));
			if (!ni) {
				free(item);
				tfs_free_items(items, n);
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
	tfs_free_items(items, n);
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
		return tfs_restore_filter(t, s);
	case PF_TFS_PIDS:
	case PF_TFS_GRAPH:
		err = list_items(s, &items, &n);
		if (err)
			return tfs_fail(t, err, "out of memory");
		err = tfs_write_list(t, s->rel, items, n, NULL);
		tfs_free_items(items, n);
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

static int setup_filter(struct pf_tracefs *t, const struct pf_tfs_config *c,
			struct pf_tfs_match *m)
{
	char *got;
	size_t len;
	int err;

	t->nfuncs = 0;
	t->by_index = false;
	t->by_kept_copy = false;
	/* Lazy: written and checked as eager, patched only when started. */
	t->lazy = c->lazy;
	t->scope_on = false;
	if (!c->nglobs) {
		/* All functions: write only if it names some now. */
		return clear_list(t, "set_ftrace_filter");
	}
	err = touch(t, "set_ftrace_filter", NULL);
	if (err)
		return err;
	if (m) {
		err = tfs_filter_by_index(t, c, m);
		if (err <= 0)
			return err;
	}
	err = filter_by_glob(t, c);
	if (!err && !tfs_filter_functions(t, &got, &len, &t->nfuncs))
		free(got);
	return err;
}

/* The pktfilt events on. */
static int enable_events(struct pf_tracefs *t)
{
	struct pf_tfs_setting *s;
	size_t i;
	int err;

	for (i = 0; i < t->nset; i++) {
		s = &t->set[i];
		if (s->kind == PF_TFS_GROUP && !strncmp(s->rel, "events/", 7)) {
			err = set_value(t, s->rel, "1", false);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * Lazy: the pktfilt events enabled and function_graph started, the scope
 * written at setup patched in one pass of ftrace's. Until then the tracer
 * is nop: nothing of the scope is patched, whatever set_ftrace_filter
 * names, and no probe of function_graph's, nor the events' task-name
 * recording, runs at context switches. Starting the tracer empties the
 * ring buffer (nothing is traced before it).
 */
int pf_tracefs_scope(struct pf_tracefs *t)
{
	int err;

	if (!t->lazy || t->scope_on)
		return 0;
	err = enable_events(t);
	if (!err)
		err = touch(t, "current_tracer", NULL);
	if (!err)
		err = tfs_write_value(t, "current_tracer", "function_graph");
	if (err == -EBUSY)
		return tfs_fail(t, err,
				"%s/current_tracer: busy: the tracer cannot change while a reader has trace_pipe open (close it, or use --eager)",
				t->root);
	if (!err)
		t->scope_on = true;
	return err;
}

/*
 * While a lazy filter waits nothing is traced, so no task need pay for
 * ftrace's PID filter (its probe at each context switch, and the gate's
 * kprobe under it): the list is emptied once the filter is armed, and set
 * again, before the scope is patched, when a packet is held. The module
 * expects both writes from the process that armed it (version 4).
 */
int pf_tracefs_pid(struct pf_tracefs *t, bool on)
{
	struct pf_tfs_setting *s = tfs_get(t, "set_ftrace_pid");
	char *pids[1] = { t->idle_pid };
	int err;

	if (!s || !t->idle_pid[0] || on != t->pid_off)
		return 0;
	s->touched = true;
	err = tfs_write_list(t, "set_ftrace_pid", on ? pids : NULL, on, NULL);
	if (!err)
		t->pid_off = !on;
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
	snprintf(t->idle_pid, sizeof(t->idle_pid), "%s", pid);
	t->pid_off = false;
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
	/*
	 * The options before the tracer starts: toggling funcgraph-args while
	 * function_graph runs registers it again.
	 */
	for (i = 0; i < ARRAY_SIZE(pf_tfs_options); i++) {
		const char *name = pf_tfs_options[i].name;
		const char *want = pf_tfs_options[i].want;
		char rel[128];

		if ((c->args && !strcmp(name, "funcgraph-args")) ||
		    (c->retval && !strcmp(name, "funcgraph-retval")))
			want = "1";
		snprintf(rel, sizeof(rel), "options/%s", name);
		err = set_value(t, rel, want, false);
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
	/*
	 * Lazy: enabled when a packet is held (an enabled event makes ftrace
	 * record task names at every context switch, record-cmd).
	 */
	err = c->lazy ? 0 : enable_events(t);
	if (err)
		return err;
	/* An empty trace (O_TRUNC). */
	return tfs_write_list(t, "trace", NULL, 0, NULL);
}

int pf_tracefs_setup(struct pf_tracefs *t, const struct pf_tfs_config *c)
{
	struct pf_tfs_match *m;
	int err;

	if (!t->saved)
		return tfs_fail(t, -EINVAL, "tracefs settings not saved");
	/* Before anything is written: an option this kernel lacks. */
	if (c->args && !tfs_get(t, "options/funcgraph-args"))
		return tfs_fail(t, PF_TFS_ENOARGS,
				"--args: %s/options has no funcgraph-args: this kernel lacks CONFIG_FUNCTION_TRACE_ARGS (Linux 6.15 on, with CONFIG_DEBUG_INFO_BTF)",
				t->root);
	if (c->retval && !tfs_get(t, "options/funcgraph-retval"))
		return tfs_fail(t, PF_TFS_ENORETVAL,
				"--retval: %s/options has no funcgraph-retval: this kernel lacks CONFIG_FUNCTION_GRAPH_RETVAL (Linux 6.5 on; not set in Debian's kernels)",
				t->root);
	/* available_filter_functions read meanwhile, if not since prefetch. */
	if (!t->match && c->nglobs) {
		err = pf_tracefs_prefetch(t, c);
		if (err)
			return err;
	}
	m = t->match;
	t->match = NULL;
	err = setup(t, c, c->nglobs ? m : NULL);
	tfs_match_free(m);
	return err;
}

int pf_tracefs_start(struct pf_tracefs *t)
{
	int err = touch(t, "current_tracer", NULL);

	/* Lazy: the tracer stays nop until a packet is held. */
	if (!err && t->lazy)
		return set_value(t, "tracing_on", "1", true);
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

	tfs_avail_drop(t);

	/* Check every saved setting, touched or not. */
	for (i = 0; i < t->nset; i++) {
		const struct pf_tfs_setting *s = &t->set[i];
		char path[512], *now;
		size_t len;

		if (tfs_path(t, s->rel, path, sizeof(path)) ||
		    tfs_read_all(path, &now, &len)) {
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
		snprintf(t->sysroot, sizeof(t->sysroot), "%s", root);
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

	tfs_avail_drop(t);
	tfs_match_free(t->match);
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
