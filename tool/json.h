/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON reader (RFC 8259) for pktfilt's own output read back
 * ("pktfilt diff" on report --format json; the tests of --format chrome):
 * a document into a tree of values. Bounded: nesting deeper than
 * @max_depth or more than @max_values values is refused, so hostile input
 * costs at most that. Strings are UTF-8 ("\u" escapes decoded, surrogate
 * pairs joined; a lone surrogate or invalid UTF-8 is an error), NUL bytes
 * in strings are refused. Pure: no I/O.
 */
#ifndef PKTFILT_JSON_H
#define PKTFILT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pf_jtype {
	PF_J_NULL,
	PF_J_BOOL,
	PF_J_NUM,
	PF_J_STR,
	PF_J_ARR,
	PF_J_OBJ,
};

struct pf_json {
	enum pf_jtype type;
	bool b;			/* PF_J_BOOL */
	double num;		/* PF_J_NUM */
	bool is_u64;		/* ... an integer 0..UINT64_MAX, exactly: */
	uint64_t u64;
	char *str;		/* PF_J_STR, NUL-terminated */
	struct pf_json **items;	/* PF_J_ARR, PF_J_OBJ: the values */
	char **keys;		/* PF_J_OBJ: their names */
	size_t n;
};

/*
 * Parse @len bytes (one value, blanks around it). NULL on error, with a
 * message ("line 1, byte 17: ...") in @err.
 */
struct pf_json *pf_json_parse(const char *s, size_t len, size_t max_depth,
			      size_t max_values, char *err, size_t errlen);
void pf_json_free(struct pf_json *v);

/* The member @key of object @obj (the last one if repeated), or NULL. */
const struct pf_json *pf_json_get(const struct pf_json *obj, const char *key);

#endif /* PKTFILT_JSON_H */
