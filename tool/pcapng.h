/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A pcapng writer of traced packets' bytes (pcapng.c): Wireshark's
 * frame.packet_id is the packet id, frame.comment names the graph.
 */
#ifndef PKTFILT_PCAPNG_H
#define PKTFILT_PCAPNG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fgraph.h"

struct pf_pcapng;

struct pf_resolver;

/*
 * Writes the section header to @out: NULL with errno set on failure.
 * @names (may be NULL) names the interfaces it can find.
 */
struct pf_pcapng *pf_pcapng_new(FILE *out, const struct pf_resolver *names);
/*
 * One frame of @pkt, its interface's block first if new: 0 or -errno. A
 * packet without bytes (an event of a module of version 5 or older) is
 * not written, only counted (pf_pcapng_skipped()).
 */
int pf_pcapng_packet(struct pf_pcapng *w, const struct pf_packet *pkt);
/*
 * For a writer of its own interfaces (pktfilt merge: one per machine and
 * stage), not to be mixed with pf_pcapng_packet()'s: an interface (its
 * block written), its id or -errno; a frame on it, 0 or -errno. The
 * timestamp in ns, @comment its frame.comment, @packet_id its
 * frame.packet_id.
 */
int64_t pf_pcapng_interface(struct pf_pcapng *w, const char *name,
			    const char *description);
int pf_pcapng_frame(struct pf_pcapng *w, uint32_t ifid, uint64_t ts_ns,
		    const unsigned char *data, uint32_t caplen, uint32_t len,
		    bool outbound, uint64_t packet_id, const char *comment);
uint64_t pf_pcapng_written(const struct pf_pcapng *w);
uint64_t pf_pcapng_skipped(const struct pf_pcapng *w);
/* Frees @w; the caller flushes or closes its FILE. */
void pf_pcapng_free(struct pf_pcapng *w);

#endif /* PKTFILT_PCAPNG_H */
