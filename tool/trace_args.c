// SPDX-License-Identifier: GPL-2.0
/*
 * "pktfilt trace": its arguments, into struct trace_opts.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "trace_run.h"

#define PF_MAX_TIMEOUT		(365UL * 24 * 3600)
/* --hold: the module's bound is 60 s (PF_HOLD_MS_MAX). */
#define PF_DEFAULT_HOLD		5
#define PF_MAX_HOLD		60

static int trace_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "pktfilt: trace: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\ntry 'pktfilt trace --help'\n");
	return EXIT_USAGE;
}

/*
 * argv[*i] is @name or @shortname with a value, or "@name=value": 1 and
 * *val set, 0 if it is another option, or a usage error's status.
 */
static int take_opt(const char *name, const char *shortname, int argc,
		    char **argv, int *i, const char **val)
{
	const char *arg = argv[*i];
	size_t len = strlen(name);

	if (!strncmp(arg, name, len) && arg[len] == '=') {
		if (*val)
			return trace_usage("%s given twice", name);
		*val = arg + len + 1;
	} else if (!strcmp(arg, name) || (shortname && !strcmp(arg, shortname))) {
		if (*val)
			return trace_usage("%s given twice", name);
		if (*i + 1 >= argc)
			return trace_usage("%s needs a value", arg);
		*val = argv[++*i];
	} else {
		return 0;
	}
	if (!**val)
		return trace_usage("%s: empty value", name);
	return 1;
}

static int split_globs(struct trace_opts *o)
{
	char *s, *tok, *save = NULL;
	size_t n = 1;
	const char *p;

	for (p = o->functions; *p; p++)
		n += *p == ',';
	o->globs = calloc(n, sizeof(*o->globs));
	s = strdup(o->functions);
	if (!o->globs || !s) {
		free(s);
		fprintf(stderr, "pktfilt: trace: out of memory\n");
		return EXIT_RUNTIME;
	}
	/* strtok_r would skip empty globs; they are mistakes. */
	for (p = o->functions; ; p++) {
		if (*p == ',' && (p == o->functions || p[1] == ',' || !p[1])) {
			free(s);
			return trace_usage("--functions %s: an empty glob",
					   o->functions);
		}
		if (!*p)
			break;
	}
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strchr(tok, ' ') || strchr(tok, '\t') || strchr(tok, '\n')) {
			char msg[300];

			snprintf(msg, sizeof(msg), "%s", tok);
			free(s);
			return trace_usage("--functions: '%s': a glob has no blanks",
					   msg);
		}
		o->globs[o->nglobs] = strdup(tok);
		if (!o->globs[o->nglobs]) {
			free(s);
			fprintf(stderr, "pktfilt: trace: out of memory\n");
			return EXIT_RUNTIME;
		}
		o->nglobs++;
	}
	free(s);
	return EXIT_OK;
}

int trace_parse_args(int argc, char **argv, struct trace_opts *o)
{
	const char *timeout = NULL, *hold = NULL;
	struct pf_parser p;
	enum pf_parse_status st;
	unsigned long v;
	int end = argc, i = 0, r;

	memset(o, 0, sizeof(*o));
	pf_parser_init(&p, &o->filter, &pf_system_resolver);
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			end = i;
			if (i + 1 >= argc)
				return trace_usage("%s", "-- must be followed by a COMMAND");
			o->cmd = argv + i + 1;
			break;
		}
	}
	i = 0;
	while (i < end) {
		st = pf_parse_arg(&p, end, argv, &i);
		if (st == PF_PARSE_OK)
			continue;
		if (st == PF_PARSE_SYNTAX)
			return trace_usage("%s", p.err);
		if (st != PF_PARSE_UNKNOWN) {
			fprintf(stderr, "pktfilt: trace: %s\n", p.err);
			return st == PF_PARSE_SYSTEM ? EXIT_RUNTIME : EXIT_USAGE;
		}
		r = take_opt("--timeout", NULL, end, argv, &i, &timeout);
		if (!r)
			r = take_opt("--hold", NULL, end, argv, &i, &hold);
		if (!r)
			r = take_opt("--format", NULL, end, argv, &i, &o->format);
		if (!r)
			r = take_opt("--output", "-o", end, argv, &i, &o->output);
		if (!r)
			r = take_opt("--raw", NULL, end, argv, &i, &o->raw);
		if (!r)
			r = take_opt("--svg", NULL, end, argv, &i, &o->svg);
		if (!r)
			r = take_opt("--html", NULL, end, argv, &i, &o->html);
		if (!r)
			r = take_opt("--pcap", NULL, end, argv, &i, &o->pcap);
		if (!r)
			r = take_opt("--functions", NULL, end, argv, &i,
				     &o->functions);
		if (r > 1)
			return r;
		if (r == 1) {
			i++;
			continue;
		}
		if (!strcmp(argv[i], "--eager")) {
			o->eager = true;
			i++;
			continue;
		}
		if (!strcmp(argv[i], "--all-functions")) {
			o->all_functions = true;
			i++;
			continue;
		}
		if (!strcmp(argv[i], "--args")) {
			o->args = true;
			i++;
			continue;
		}
		if (!strcmp(argv[i], "--retval")) {
			o->retval = true;
			i++;
			continue;
		}
		if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
			o->quiet = true;
			i++;
			continue;
		}
		if (pf_is_option(argv[i]))
			return trace_usage("unknown option '%s'", argv[i]);
		/* A word of the filter expression (a COMMAND goes after --). */
		st = pf_parse_word(&p, argv[i++]);
		if (st != PF_PARSE_OK) {
			fprintf(stderr, "pktfilt: trace: %s\n", p.err);
			return EXIT_USAGE;
		}
	}
	st = pf_parse_finish(&p);
	if (st != PF_PARSE_OK) {
		fprintf(stderr, "pktfilt: trace: %s\n", p.err);
		return st == PF_PARSE_SYSTEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	if (timeout) {
		if (pf_parse_decimal(timeout, PF_MAX_TIMEOUT, &v))
			return trace_usage("--timeout %s: a number of seconds, 0 for no limit",
					   timeout);
		o->timeout = v;
	}
	o->hold = PF_DEFAULT_HOLD;
	if (hold) {
		if (pf_parse_decimal(hold, PF_MAX_HOLD, &v) || !v)
			return trace_usage("--hold %s: a number of seconds, 1 to 60",
					   hold);
		if (o->eager)
			return trace_usage("%s", "--hold is for the lazy default: --eager holds no packet");
		o->hold = v;
	}
	if (!o->format)
		o->format = "text";
	if (strcmp(o->format, "text") && strcmp(o->format, "json") &&
	    strcmp(o->format, "folded") && strcmp(o->format, "chrome") &&
	    strcmp(o->format, "html"))
		return trace_usage("unknown --format '%s': text, json, folded, chrome or html",
				   o->format);
	if (o->functions && o->all_functions)
		return trace_usage("%s", "--functions and --all-functions exclude each other");
	if (o->functions)
		return split_globs(o);
	return EXIT_OK;
}
