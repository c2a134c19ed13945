// SPDX-License-Identifier: GPL-2.0
/*
 * tracefs for "pktfilt trace", which functions: ftrace's glob rules in user
 * space (pf_tfs_glob_*), and available_filter_functions' line numbers, by
 * which set_ftrace_filter is set up and the saved set_ftrace_filter and
 * set_ftrace_notrace are restored. tracefs.c does the rest; see tracefs.h
 * for the quirks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memmem, strndup */
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "funcs_cache.h"
#include "tracefs.h"
#include "tracefs_int.h"

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
	bool cached;		/* read from the copy kept between runs */
};

static void avail_free(struct pf_tfs_avail *a);

void tfs_avail_drop(struct pf_tracefs *t)
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
 * Reads @root's available_filter_functions into *@out: from the copy at
 * @cache when it was made under the kernel's state now (not if @fresh),
 * else from the kernel, then kept at @cache ("": no copy). Touches nothing
 * else: it may run in a thread of its own. -errno (-ENOENT: none).
 */
static int avail_read(const char *root, const char *sysroot,
		      const char *cache, bool fresh, struct pf_tfs_avail **out)
{
	struct pf_fcache_state st = { 0 }, now;
	struct pf_tfs_avail *a;
	char path[512], *p, *end;
	size_t len, cap = 0;
	long long t0 = tfs_us();
	bool kept = false;
	int err;

	*out = NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s/available_filter_functions",
			     root) >= sizeof(path))
		return -ENAMETOOLONG;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	if (*cache && !pf_fcache_state(sysroot, root, &st)) {
		kept = true;
		a->cached = !fresh && !pf_fcache_load(cache, &st, &a->buf, &len);
	}
	if (!a->cached) {
		err = tfs_read_all(path, &a->buf, &len);
		if (err) {
			pf_fcache_state_free(&st);
			free(a);
			return err;
		}
		/* Kept only if nothing changed while it was read. */
		if (kept && !pf_fcache_state(sysroot, root, &now)) {
			if (pf_fcache_state_eq(&st, &now))
				pf_fcache_store(cache, &st, a->buf, len);
			pf_fcache_state_free(&now);
		}
	}
	pf_fcache_state_free(&st);
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
	tfs_time("read", a->cached ? "available_filter_functions (kept copy)" :
		 "available_filter_functions", t0);
	return 0;
}

/*
 * Reads available_filter_functions again, from the kernel: restoring has
 * no read-back to catch a stale copy. -errno (-ENOENT: none).
 */
static int avail_load(struct pf_tracefs *t)
{
	tfs_avail_drop(t);
	return avail_read(t->root, t->sysroot, "", true, &t->avail);
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
/* Restoring a function list by number */

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

int tfs_restore_filter(struct pf_tracefs *t, struct pf_tfs_setting *s)
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
		tfs_avail_drop(t);
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
	tfs_free_items(items, n);
	free(nb.buf);
	return err;
}

/* ------------------------------------------------------------------ */
/* Setting set_ftrace_filter up by number */

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
	char sysroot[256];
	char cache[4096];	/* the kept copy's file, "" for none */
	bool fresh;		/* the next run reads the kernel's list */
	/* what a run found */
	struct pf_tfs_avail *avail;
	unsigned char *sel;	/* per line: set */
	bool *hit;		/* per entry: matched a line */
	int err;
	pthread_t thread;
	bool running;
};

void tfs_match_free(struct pf_tfs_match *m)
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
	snprintf(m->sysroot, sizeof(m->sysroot), "%s", t->sysroot);
	if (pf_fcache_path(m->cache, sizeof(m->cache)))
		m->cache[0] = '\0';
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
		tfs_match_free(m);
		return -ENOMEM;
	}
	for (i = 0; i < m->n; i++) {
		err = pf_tfs_glob_parse(&m->g[i], i < c->nroots ? c->roots[i] :
					c->globs[i - c->nroots]);
		if (err) {
			tfs_match_free(m);
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
	m->err = avail_read(m->root, m->sysroot, m->cache, m->fresh,
			    &m->avail);
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
int tfs_filter_functions(struct pf_tracefs *t, char **out, size_t *len,
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
 * or went: the numbers moved), from the kernel's list if the kept copy
 * was used. 0 done, 1 cannot (the caller writes the globs), or an error.
 */
int tfs_filter_by_index(struct pf_tracefs *t, const struct pf_tfs_config *c,
			struct pf_tfs_match *m)
{
	size_t i, k, attempt, attempts = 2;
	int err = 0;

	for (attempt = 0; attempt < attempts; attempt++) {
		struct numbuf nb = { 0 };
		char *want = NULL, *got = NULL;
		size_t wlen = 0, wcap = 0, glen, gcount;
		const struct pf_tfs_avail *a;

		if (attempt) {
			m->fresh = true;
			match_run(m);
		} else {
			match_wait(m);
		}
		if (m->err == -ENOMEM)
			return tfs_fail(t, -ENOMEM, "out of memory");
		if (m->err)
			return 1;	/* no such file */
		a = m->avail;
		if (a->cached)
			attempts = 3;	/* then twice from the kernel's */
		for (i = c->nroots; i < m->n; i++) {
			if (m->hit[i] || (c->globs_optional && !m->g[i].has_mod))
				continue;
			if (a->cached)
				break;	/* the kernel's list decides */
			if (m->g[i].has_mod)
				return 1;	/* ftrace keeps it for the module */
			return tfs_fail(t, PF_TFS_EGLOB,
					"--functions: the kernel refuses '%s': no function it can trace matches it",
					c->globs[i - c->nroots]);
		}
		if (i < m->n)
			continue;	/* a miss in the kept copy */
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
		if (!err)
			err = tfs_filter_functions(t, &got, &glen, &gcount);
		if (!err && glen == wlen && (!wlen || !memcmp(got, want, wlen))) {
			free(got);
			t->nfuncs = gcount;
			t->by_index = true;
			t->by_kept_copy = a->cached;
			free(nb.buf);
			free(want);
			return 0;
		}
		free(nb.buf);
		free(got);
		free(want);
		if (err == -ENOMEM)
			return tfs_fail(t, -ENOMEM, "out of memory");
		err = 0;	/* refused, or not as meant: once more */
	}
	return 1;
}

int pf_tracefs_prefetch(struct pf_tracefs *t, const struct pf_tfs_config *c)
{
	int err;

	tfs_match_free(t->match);
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
