/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "pktfilt check": the running kernel's configuration against
 * common/pktfilt.config (kconfig_table.c, made from it by mkkconfig.awk).
 */
#ifndef PKTFILT_KCHECK_H
#define PKTFILT_KCHECK_H

#include <stddef.h>

struct pf_cmd;

struct pf_kconfig {
	const char *name;	/* CONFIG_... */
	int need;		/* 1: "# need:", 0: "# want:" */
	const char *why;	/* what it is for, what is lost without it */
};

extern const struct pf_kconfig pf_kconfig[];
extern const size_t pf_kconfig_n;

/* For main.c's command table and help. */
extern const char pf_check_synopsis[];
extern const char pf_check_help[];
extern const char pf_check_examples[];

/* Returns the exit status: 0 all needed set, 1 not or unreadable, 2 usage. */
int pf_check_run(const struct pf_cmd *cmd, int argc, char **argv);

#endif /* PKTFILT_KCHECK_H */
