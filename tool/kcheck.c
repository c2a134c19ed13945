// SPDX-License-Identifier: GPL-2.0
/*
 * "pktfilt check": does the running kernel's configuration have what
 * pktfilt needs (the module does not build or load without it) and what it
 * can use (what is lost without it)? The options and their reasons are
 * common/pktfilt.config's, the fragment a kernel developer merges into
 * their own configuration (kconfig_table.c is made from it). The
 * configuration is read with zlib, which reads /proc/config.gz and plain
 * files alike.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <zlib.h>

#include "kcheck.h"

const char pf_check_synopsis[] = "pktfilt check [--config FILE]";

const char pf_check_help[] =
"    Check the running kernel's configuration against what pktfilt needs\n"
"    (without it the module does not build or cannot work) and what it\n"
"    can use (pktfilt works without it; what is lost is named), one line\n"
"    an option: the option, its value, and why. The options are those of\n"
"    the fragment common/pktfilt.config in pktfilt's sources, to merge\n"
"    into a kernel you build yourself (scripts/kconfig/merge_config.sh,\n"
"    vng --kconfig --config). The configuration is read from\n"
"    /proc/config.gz, else /boot/config-RELEASE, else\n"
"    /lib/modules/RELEASE/build/.config (RELEASE: uname -r).\n"
"\n"
"        --config FILE\n"
"            Read this configuration instead (a .config, gzip'ed or\n"
"            not): a tree's before it is built, another machine's.\n"
"\n"
"    Exit status: 0 every option pktfilt needs is set, 1 one is not or\n"
"    no configuration could be read, 2 usage error.\n";

const char pf_check_examples[] =
"    Before building your own kernel, its configuration:\n"
"        pktfilt check --config .config\n";

/* The value of @name in @values (one "NAME=VALUE" a line), or NULL. */
static const char *config_value(char **values, size_t n, const char *name)
{
	size_t len = strlen(name), i;

	for (i = 0; i < n; i++)
		if (!strncmp(values[i], name, len) && values[i][len] == '=')
			return values[i] + len + 1;
	return NULL;
}

/*
 * Reads @path's CONFIG_ lines set to something (not "# ... is not set")
 * into @values (at most @max); the number read, or -1 with errno.
 */
static long read_config(const char *path, char **values, size_t max)
{
	char line[4096];
	size_t n = 0;
	gzFile f;

	f = gzopen(path, "rb");
	if (!f)
		return -1;
	while (n < max && gzgets(f, line, sizeof(line))) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "CONFIG_", 7) || !strchr(line, '='))
			continue;
		values[n] = strdup(line);
		if (!values[n])
			break;
		n++;
	}
	gzclose(f);
	return (long)n;
}

/* The kernel's configuration: the first of the usual places readable. */
static const char *find_config(char *buf, size_t len)
{
	struct utsname u;
	const char *fmt[] = { "/boot/config-%s", "/lib/modules/%s/build/.config" };
	FILE *f;
	size_t i;

	f = fopen("/proc/config.gz", "rb");
	if (f) {
		fclose(f);
		return "/proc/config.gz";
	}
	if (uname(&u))
		return NULL;
	for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		snprintf(buf, len, fmt[i], u.release);
		f = fopen(buf, "rb");
		if (f) {
			fclose(f);
			return buf;
		}
	}
	return NULL;
}

#define PF_CHECK_MAX_OPTIONS	100000

int pf_check_run(const struct pf_cmd *cmd, int argc, char **argv)
{
	static char *values[PF_CHECK_MAX_OPTIONS];
	unsigned int need_missing = 0, want_missing = 0;
	const char *path = NULL;
	char buf[512];
	long n;
	size_t i;
	int j;

	(void)cmd;
	for (j = 0; j < argc; j++) {
		if (!strcmp(argv[j], "--config") && j + 1 < argc) {
			path = argv[++j];
		} else if (!strcmp(argv[j], "--config")) {
			fprintf(stderr, "pktfilt: check: --config: missing value\ntry 'pktfilt --help'\n");
			return 2;
		} else {
			fprintf(stderr, "pktfilt: check: unexpected argument '%s'\ntry 'pktfilt --help'\n",
				argv[j]);
			return 2;
		}
	}
	if (!path)
		path = find_config(buf, sizeof(buf));
	if (!path) {
		fprintf(stderr,
			"pktfilt: check: no configuration of the running kernel found (/proc/config.gz, /boot/config-RELEASE, /lib/modules/RELEASE/build/.config): give one with --config\n");
		return 1;
	}
	n = read_config(path, values, PF_CHECK_MAX_OPTIONS);
	if (n < 0) {
		fprintf(stderr, "pktfilt: check: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!n) {
		fprintf(stderr, "pktfilt: check: %s: no CONFIG_ option in it: not a kernel configuration\n",
			path);
		return 1;
	}
	printf("configuration: %s\n", path);
	for (i = 0; i < pf_kconfig_n; i++) {
		const struct pf_kconfig *k = &pf_kconfig[i];
		const char *v = config_value(values, (size_t)n, k->name);
		int set = v && (!strcmp(v, "y") || !strcmp(v, "m"));

		if (!set)
			k->need ? need_missing++ : want_missing++;
		printf("%-4s  %-30s %-8s %s%s\n", k->need ? "need" : "want",
		       k->name, set ? v : "not set", k->why,
		       set ? "" : k->need ? ": pktfilt cannot work" : ": lost");
	}
	for (i = 0; i < (size_t)n; i++)
		free(values[i]);
	if (need_missing)
		printf("pktfilt check: %u option%s pktfilt needs %s not set: merge common/pktfilt.config\n",
		       need_missing, need_missing == 1 ? "" : "s",
		       need_missing == 1 ? "is" : "are");
	else
		printf("pktfilt check: every option pktfilt needs is set; %u it can use %s not\n",
		       want_missing, want_missing == 1 ? "is" : "are");
	return need_missing ? 1 : 0;
}
