/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "pktfilt diff": compare the call trees of two packets (two graphs of
 * fgraph.h), read from raw function_graph traces or from pktfilt's JSON
 * Lines (report --format json); as text, JSON, a chrome timeline or an
 * HTML page.
 */
#ifndef PKTFILT_DIFF_H
#define PKTFILT_DIFF_H

#include <stddef.h>
#include <stdio.h>

#include "fgraph.h"

struct pf_cmd;

/* For main.c's command table and help. */
extern const char pf_diff_synopsis[];
extern const char pf_diff_help[];
extern const char pf_diff_examples[];

/*
 * Run "pktfilt diff" with its arguments (after "diff"). Returns the exit
 * status, as diff(1): 0 the two packets took the same path (same calls,
 * same nesting, same order; same fate and stage), 1 they differ, 2 usage
 * error or trouble (a file that cannot be read, a packet not found).
 */
int pf_diff_run(const struct pf_cmd *cmd, int argc, char **argv);

/* Graphs of more calls than this are refused (memory stays bounded). */
#define PF_DIFF_MAX_NODES	500000

/*
 * The engine, for the tests and the fuzzer. A packet of one's own: its
 * graph's nodes malloc()ed one by one (no raw_text, no parser chunks),
 * freed with pf_diff_packet_free().
 *
 * pf_diff_packet_json(): one line of report --format json into a new
 * packet; NULL with a message in @err if it is not such a line (bad JSON,
 * a member of the wrong type, a graph deeper than PF_FGRAPH_MAX_DEPTH or
 * larger than PF_DIFF_MAX_NODES). Members missing are taken as 0, "" or
 * null (older output).
 * pf_diff_packet_copy(): a deep copy of a parser's packet (NULL if out of
 * memory or larger than PF_DIFF_MAX_NODES; errno says which).
 */
struct pf_packet *pf_diff_packet_json(const char *line, size_t len,
				      char *err, size_t errlen);
struct pf_packet *pf_diff_packet_copy(const struct pf_packet *pkt);
void pf_diff_packet_free(struct pf_packet *pkt);

/*
 * One line of pktfilt merge --format json (a journey): each graph of
 * each machine's packet, read as pf_diff_packet_json() reads a line,
 * handed to @fn with the journey's number and the machine's name, in
 * order; a non-zero return of @fn stops and is returned. -EINVAL with
 * @err set if the line is not such a journey or a graph not such a line.
 */
typedef int (*pf_journey_fn)(void *arg, uint64_t journey,
			     const char *machine, const struct pf_packet *pkt);
int pf_diff_journey(const char *line, size_t len, pf_journey_fn fn,
		    void *arg, char *err, size_t errlen);

enum pf_diff_format {
	PF_DIFF_TEXT,
	PF_DIFF_JSON,
	PF_DIFF_CHROME,		/* both packets: render.h's chrome, 2 processes */
	PF_DIFF_HTML,		/* the aligned trees: render.h's html page */
};

struct pf_diff_opts {
	enum pf_diff_format format;
	size_t top;		/* places and durations listed, at most */
	const char *name_a;	/* how the packets are named: the files */
	const char *name_b;
};

/*
 * Compare @a and @b and write the comparison to @out. Returns 0 if they
 * are the same (see pf_diff_run()), 1 if not, or a negative errno
 * (writing, memory).
 */
int pf_diff(FILE *out, const struct pf_packet *a, const struct pf_packet *b,
	    const struct pf_diff_opts *o);

#endif /* PKTFILT_DIFF_H */
