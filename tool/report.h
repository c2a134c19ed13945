/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "pktfilt report": render a saved function_graph trace, offline.
 */
#ifndef PKTFILT_REPORT_H
#define PKTFILT_REPORT_H

struct pf_cmd;

/* For main.c's command table and help. */
extern const char pf_report_synopsis[];
extern const char pf_report_help[];
extern const char pf_report_examples[];

/*
 * Run "pktfilt report" with its arguments (after "report"). Returns the
 * exit status: 0 all packets complete, 1 incomplete packets, lost events
 * or an I/O error, 2 usage error. @cmd is not used.
 */
int pf_report_run(const struct pf_cmd *cmd, int argc, char **argv);

#endif /* PKTFILT_REPORT_H */
