// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of the command line's filter parser (tool/parse.c):
 * the input, split at NUL bytes, is the argument vector of "pktfilt set".
 * A filter it accepts is printed back (pf_format_filter()); that text,
 * split at spaces, must parse again, and after one round (which may add
 * what was implied) print the same.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

#define MAX_ARGS 64

static int w_netns_ino(const char *path, __u32 *ino)
{
	if (!strcmp(path, "/run/netns/blue")) {
		*ino = 4026532165u;
		return 0;
	}
	if (!strcmp(path, "/proc/self/ns/net")) {	/* our own */
		*ino = 4026531840u;
		return 0;
	}
	return -2;	/* -ENOENT */
}

static int w_netns_path(__u32 ino, char *buf, size_t len)
{
	if (ino == 4026531840u) {
		snprintf(buf, len, "/proc/self/ns/net");
		return 0;
	}
	if (ino != 4026532165u)
		return -2;
	snprintf(buf, len, "/run/netns/blue");
	return 0;
}

static int w_ifindex(const char *name, const char *netns_path, __u32 *idx)
{
	(void)netns_path;
	if (strcmp(name, "eth0"))
		return -19;	/* -ENODEV */
	*idx = 2;
	return 0;
}

static int w_ifname(__u32 idx, const char *path, char *buf, size_t len)
{
	(void)path;
	if (idx != 2)
		return -19;
	snprintf(buf, len, "eth0");
	return 0;
}

static const struct pf_resolver world = {
	w_netns_ino, w_netns_path, w_ifindex, w_ifname,
};

static int split(char *s, size_t len, char sep, char **argv)
{
	int argc = 0;
	size_t i, start = 0;

	for (i = 0; i <= len && argc < MAX_ARGS; i++) {
		if (i < len && s[i] != sep)
			continue;
		s[i] = '\0';
		if (sep != ' ' || i > start)
			argv[argc++] = s + start;
		start = i + 1;
	}
	return argc;
}

/*
 * pf_format_filter()'s line as a shell splits it: blanks separate words;
 * '...' is literal (the filter expression, whose ' is written '\'').
 * In place; returns the number of words.
 */
static int split_shell(char *s, char **argv)
{
	char *out = s;
	int argc = 0;
	bool in_word = false, quoted = false;

	for (; *s; s++) {
		if (!quoted && *s == ' ') {
			if (in_word) {
				*out++ = '\0';
				in_word = false;
			}
			continue;
		}
		if (!in_word) {
			if (argc == MAX_ARGS)
				break;
			argv[argc++] = out;
			in_word = true;
		}
		if (*s == '\'') {
			quoted = !quoted;
		} else if (!quoted && *s == '\\' && s[1]) {
			*out++ = *++s;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
	return argc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *argv[MAX_ARGS];
	char err[256], text[2048], text2[2048];
	struct pf_filter f, g;
	int argc, n, round;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	argc = split(s, size, '\0', argv);
	if (pf_parse_filter(argc, argv, &f, &world, err, sizeof(err)) ==
	    PF_PARSE_OK) {
		/*
		 * Printed, it parses again; printed again, it is a fixed
		 * point (the first round may add what was implied, e.g. the
		 * netns that --dev was looked up in).
		 */
		n = pf_format_filter(&f, &world, text, sizeof(text));
		if (n < 0 || (size_t)n >= sizeof(text))
			abort();
		for (round = 0; round < 2; round++) {
			memcpy(text2, text, sizeof(text));
			argc = split_shell(text2, argv);
			if (pf_parse_filter(argc, argv, &g, &world, err,
					    sizeof(err)) != PF_PARSE_OK) {
				fprintf(stderr, "fuzz_parse: '%s' does not parse: %s\n",
					text, err);
				abort();
			}
			memcpy(text2, text, sizeof(text));
			n = pf_format_filter(&g, &world, text, sizeof(text));
			if (n < 0 || (size_t)n >= sizeof(text))
				abort();
		}
		if (strcmp(text, text2)) {
			fprintf(stderr, "fuzz_parse: '%s' then '%s'\n", text2,
				text);
			abort();
		}
	}
	free(s);
	return 0;
}
