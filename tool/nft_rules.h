/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text of the nftables rules a trace's pktfilt_nft events name, from
 * the ruleset when the trace is captured (nft_rules.c).
 */
#ifndef PKTFILT_NFT_RULES_H
#define PKTFILT_NFT_RULES_H

#include <stdint.h>
#include <stdio.h>

/*
 * Copies the trace @in to @out, each pktfilt_nft line that names a rule
 * with " rule=TEXT" added (before its closing comment mark), the text of
 * the rule as nft lists it now in the event's namespace (without its
 * counters' values). Without libnftables, or the namespace, or the rule,
 * the line is copied as it is. 0, or -errno.
 */
int pf_nft_annotate(FILE *in, FILE *out);

/*
 * In @ruleset, `nft --handle --stateless list ruleset`'s text, the rule
 * of @handle in chain @chain of table @family @table: its text without
 * "# handle N" into @buf. 0, or -ENOENT.
 */
int pf_nft_rule_find(const char *ruleset, const char *family,
		     const char *table, const char *chain, uint64_t handle,
		     char *buf, size_t len);

#endif /* PKTFILT_NFT_RULES_H */
