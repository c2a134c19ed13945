// SPDX-License-Identifier: GPL-2.0
/*
 * A small bounded JSON reader: see json.h. Recursive descent; the
 * recursion is bounded by max_depth.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "render.h"

struct jp {
	const char *s;
	size_t n, i;
	size_t depth, max_depth;
	size_t values, max_values;
	char *err;
	size_t errlen;
	bool failed;
};

static void jp_fail(struct jp *p, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (p->failed)
		return;
	p->failed = true;
	if (!p->errlen)
		return;
	k = snprintf(p->err, p->errlen, "byte %zu: ", p->i + 1);
	if (k < 0 || (size_t)k >= p->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(p->err + k, p->errlen - (size_t)k, fmt, ap);
	va_end(ap);
}

static void jp_ws(struct jp *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
			       p->s[p->i] == '\n' || p->s[p->i] == '\r'))
		p->i++;
}

static bool jp_lit(struct jp *p, const char *lit)
{
	size_t len = strlen(lit);

	if (p->n - p->i < len || memcmp(p->s + p->i, lit, len))
		return false;
	p->i += len;
	return true;
}

static struct pf_json *jp_new(struct jp *p, enum pf_jtype type)
{
	struct pf_json *v;

	if (++p->values > p->max_values) {
		jp_fail(p, "more than %zu values", p->max_values);
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		jp_fail(p, "out of memory");
		return NULL;
	}
	v->type = type;
	return v;
}

static bool jp_hex4(struct jp *p, unsigned int *cp)
{
	unsigned int v = 0;
	size_t k;

	if (p->n - p->i < 4)
		return false;
	for (k = 0; k < 4; k++) {
		int h = pf_hex_digit(p->s[p->i + k]);

		if (h < 0)
			return false;
		v = v << 4 | (unsigned int)h;
	}
	p->i += 4;
	*cp = v;
	return true;
}

static size_t put_utf8(char *d, unsigned int cp)
{
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xc0 | cp >> 6);
		d[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (char)(0xe0 | cp >> 12);
		d[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		d[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	d[0] = (char)(0xf0 | cp >> 18);
	d[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	d[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	d[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string at p->i (the opening quote), decoded into a new buffer. */
static char *jp_string(struct jp *p)
{
	size_t start = ++p->i, end, len = 0;
	char *out;

	/* Its end first: the decoded string is never longer. */
	for (end = start; end < p->n && p->s[end] != '"'; end++)
		if (p->s[end] == '\\')
			end++;
	if (end >= p->n) {
		jp_fail(p, "string not terminated");
		return NULL;
	}
	out = malloc(end - start + 1);
	if (!out) {
		jp_fail(p, "out of memory");
		return NULL;
	}
	while (p->i < end) {
		unsigned char c = (unsigned char)p->s[p->i];
		unsigned int cp, lo;
		size_t k;

		if (c < 0x20) {
			jp_fail(p, "control character in a string");
			goto bad;
		}
		if (c != '\\') {
			k = pf_utf8_len((const unsigned char *)p->s + p->i,
				     end - p->i);
			if (!k) {
				jp_fail(p, "invalid UTF-8");
				goto bad;
			}
			memcpy(out + len, p->s + p->i, k);
			len += k;
			p->i += k;
			continue;
		}
		p->i++;
		switch (p->s[p->i++]) {
		case '"': out[len++] = '"'; break;
		case '\\': out[len++] = '\\'; break;
		case '/': out[len++] = '/'; break;
		case 'b': out[len++] = '\b'; break;
		case 'f': out[len++] = '\f'; break;
		case 'n': out[len++] = '\n'; break;
		case 'r': out[len++] = '\r'; break;
		case 't': out[len++] = '\t'; break;
		case 'u':
			if (!jp_hex4(p, &cp)) {
				jp_fail(p, "bad \\u escape");
				goto bad;
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (!jp_lit(p, "\\u") || !jp_hex4(p, &lo) ||
				    lo < 0xdc00 || lo > 0xdfff) {
					jp_fail(p, "lone surrogate");
					goto bad;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				     (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				jp_fail(p, "lone surrogate");
				goto bad;
			}
			if (!cp) {
				jp_fail(p, "NUL in a string");
				goto bad;
			}
			/* 6 bytes of escape (12 for a pair) make <= 4. */
			len += put_utf8(out + len, cp);
			break;
		default:
			p->i--;
			jp_fail(p, "bad escape");
			goto bad;
		}
	}
	if (p->i != end) {
		jp_fail(p, "bad escape at the end of a string");
		goto bad;
	}
	p->i = end + 1;
	out[len] = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

static struct pf_json *jp_number(struct jp *p)
{
	size_t start = p->i;
	bool integer = true;
	struct pf_json *v;
	char buf[64];
	char *endp;

	if (p->i < p->n && p->s[p->i] == '-')
		p->i++;
	if (p->i < p->n && p->s[p->i] == '0') {
		p->i++;
	} else if (p->i < p->n && p->s[p->i] >= '1' && p->s[p->i] <= '9') {
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
	} else {
		jp_fail(p, "bad number");
		return NULL;
	}
	if (p->i < p->n && p->s[p->i] == '.') {
		integer = false;
		p->i++;
		if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') {
			jp_fail(p, "bad number");
			return NULL;
		}
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
	}
	if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
		integer = false;
		p->i++;
		if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
			p->i++;
		if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') {
			jp_fail(p, "bad number");
			return NULL;
		}
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
	}
	if (p->i - start >= sizeof(buf)) {
		jp_fail(p, "number too long");
		return NULL;
	}
	v = jp_new(p, PF_J_NUM);
	if (!v)
		return NULL;
	memcpy(buf, p->s + start, p->i - start);
	buf[p->i - start] = '\0';
	v->num = strtod(buf, NULL);
	if (integer && buf[0] != '-') {
		errno = 0;
		v->u64 = strtoull(buf, &endp, 10);
		v->is_u64 = !errno && !*endp;
	}
	if (integer && !strcmp(buf, "-0")) {
		v->is_u64 = true;
		v->u64 = 0;
	}
	return v;
}

static struct pf_json *jp_value(struct jp *p);

static bool jp_push(struct jp *p, struct pf_json *c, struct pf_json *item,
		    char *key, size_t *cap)
{
	if (c->n == *cap) {
		size_t nc = *cap ? 2 * *cap : 4;
		struct pf_json **items = realloc(c->items, nc * sizeof(*items));

		if (!items)
			goto oom;
		c->items = items;
		if (c->type == PF_J_OBJ) {
			char **keys = realloc(c->keys, nc * sizeof(*keys));

			if (!keys)
				goto oom;
			c->keys = keys;
		}
		*cap = nc;
	}
	c->items[c->n] = item;
	if (c->type == PF_J_OBJ)
		c->keys[c->n] = key;
	c->n++;
	return true;
oom:
	jp_fail(p, "out of memory");
	return false;
}

static struct pf_json *jp_container(struct jp *p, bool obj)
{
	struct pf_json *c = jp_new(p, obj ? PF_J_OBJ : PF_J_ARR);
	size_t cap = 0;

	if (!c)
		return NULL;
	if (++p->depth > p->max_depth) {
		jp_fail(p, "nested deeper than %zu", p->max_depth);
		goto bad;
	}
	p->i++;
	jp_ws(p);
	if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) {
		p->i++;
		p->depth--;
		return c;
	}
	for (;;) {
		struct pf_json *item;
		char *key = NULL;

		jp_ws(p);
		if (obj) {
			if (p->i >= p->n || p->s[p->i] != '"') {
				jp_fail(p, "a member name expected");
				goto bad;
			}
			key = jp_string(p);
			if (!key)
				goto bad;
			jp_ws(p);
			if (p->i >= p->n || p->s[p->i] != ':') {
				free(key);
				jp_fail(p, "':' expected");
				goto bad;
			}
			p->i++;
		}
		item = jp_value(p);
		if (!item || !jp_push(p, c, item, key, &cap)) {
			free(key);
			pf_json_free(item);
			goto bad;
		}
		jp_ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) {
			p->i++;
			break;
		}
		jp_fail(p, obj ? "',' or '}' expected" : "',' or ']' expected");
		goto bad;
	}
	p->depth--;
	return c;
bad:
	pf_json_free(c);
	return NULL;
}

static struct pf_json *jp_value(struct jp *p)
{
	struct pf_json *v;

	jp_ws(p);
	if (p->i >= p->n) {
		jp_fail(p, "a value expected");
		return NULL;
	}
	switch (p->s[p->i]) {
	case '{':
		return jp_container(p, true);
	case '[':
		return jp_container(p, false);
	case '"': {
		char *str = jp_string(p);

		if (!str)
			return NULL;
		v = jp_new(p, PF_J_STR);
		if (!v) {
			free(str);
			return NULL;
		}
		v->str = str;
		return v;
	}
	case 't':
	case 'f':
	case 'n':
		if (jp_lit(p, "true") || jp_lit(p, "false")) {
			v = jp_new(p, PF_J_BOOL);
			if (v)
				v->b = p->s[p->i - 1] == 'e' &&
				       p->s[p->i - 2] == 'u';
			return v;
		}
		if (jp_lit(p, "null"))
			return jp_new(p, PF_J_NULL);
		jp_fail(p, "a value expected");
		return NULL;
	default:
		return jp_number(p);
	}
}

struct pf_json *pf_json_parse(const char *s, size_t len, size_t max_depth,
			      size_t max_values, char *err, size_t errlen)
{
	struct jp p = {
		.s = s, .n = len, .max_depth = max_depth,
		.max_values = max_values, .err = err, .errlen = errlen,
	};
	struct pf_json *v;

	if (errlen)
		err[0] = '\0';
	v = jp_value(&p);
	if (!v)
		return NULL;
	jp_ws(&p);
	if (p.i != p.n) {
		jp_fail(&p, "more after the value");
		pf_json_free(v);
		return NULL;
	}
	return v;
}

void pf_json_free(struct pf_json *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->n; i++) {
		pf_json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	free(v);
}

const struct pf_json *pf_json_get(const struct pf_json *obj, const char *key)
{
	size_t i;

	if (!obj || obj->type != PF_J_OBJ)
		return NULL;
	for (i = obj->n; i-- > 0;)
		if (!strcmp(obj->keys[i], key))
			return obj->items[i];
	return NULL;
}
