/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Command-line predicates <-> struct pf_filter.
 *
 * Pure parsing: the only contact with the system is through a struct
 * pf_resolver (interface names, namespace files), so that the unit tests can
 * drive every path with fakes. Nothing here knows about netlink.
 */
#ifndef PKTFILT_PARSE_H
#define PKTFILT_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "pktfilt.h"
#include "match.h"
#include "expr.h"

/* What "pktfilt set" sends: the predicates plus how many packets to trace. */
struct pf_filter {
	struct pf_spec spec;
	__u32 count;		/* packets to trace, 0 = no limit */
	__u32 flags;		/* PKTFILT_F_*: never set by "set" itself */
	__u32 hold_ms;		/* PKTFILT_F_LAZY: the hold's bound, 0: default */
	/*
	 * Bits 1 << PKTFILT_STAGE_* (--at), 0 if --at was not given: then
	 * pf_stages_compat() makes it the command's default
	 * (PF_SET_DEFAULT_STAGES, PF_TRACE_DEFAULT_STAGES), or leaves it 0
	 * for a version 1 module (which traces at l4 only and is sent no
	 * PKTFILT_A_STAGES).
	 */
	__u32 stages;
	/*
	 * --snaplen: bytes of each traced packet its event carries (version
	 * 6), sent only if given (snaplen_set): else the module's default,
	 * PKTFILT_SNAPLEN_DEFAULT.
	 */
	__u32 snaplen;
	bool snaplen_set;
	/*
	 * The filter expression as the user wrote it (the words that are not
	 * options, joined by spaces), "" if none, and its program.
	 */
	char expr[PF_EXPR_MAX + 1];
	unsigned int bpf_len;
	struct sock_filter bpf[PF_BPF_MAX];
};

#define PF_DEFAULT_COUNT	1
/*
 * set: l4, what version 1 did, so that a recipe written for it (its
 * set_graph_function on the protocol handlers) keeps working; trace sets
 * tracefs up itself and shows more by default (docs/usage.md, "Where:
 * stages").
 */
#define PF_SET_DEFAULT_STAGES	(1U << PKTFILT_STAGE_L4)
#define PF_TRACE_DEFAULT_STAGES	(1U << PKTFILT_STAGE_RX)

/*
 * The system lookups the parser needs. Each returns 0 or a negative errno;
 * pf_system_resolver is the real thing, tests pass their own.
 */
struct pf_resolver {
	/*
	 * Inode number of the network namespace file @path. -ENOENT etc. as
	 * from open(2); -EINVAL if @path is not a network namespace.
	 */
	int (*netns_ino)(const char *path, __u32 *ino);
	/*
	 * A path naming the network namespace with inode @ino: our own
	 * namespace or one under /run/netns. -ENOENT if there is none.
	 */
	int (*netns_path)(__u32 ino, char *buf, size_t len);
	/*
	 * Index of interface @name in the namespace at @netns_path (NULL:
	 * the one we run in). -ENODEV if there is no such interface.
	 */
	int (*ifindex)(const char *name, const char *netns_path, __u32 *ifindex);
	/* Name of interface @ifindex, as above; -ENODEV if none. */
	int (*ifname)(__u32 ifindex, const char *netns_path, char *buf,
		      size_t len);
};

extern const struct pf_resolver pf_system_resolver;

/*
 * Outcome of parsing, mapped to exit statuses by the caller:
 * INVALID	a bad or inconsistent value: exit 2
 * SYNTAX	unknown option, stray or missing argument: exit 2, and point
 *		at --help
 * SYSTEM	a lookup failed for reasons other than the user's input
 *		(permissions...): exit 1
 * UNKNOWN	pf_parse_arg() only: not a predicate option
 */
enum pf_parse_status {
	PF_PARSE_OK = 0,
	PF_PARSE_INVALID,
	PF_PARSE_SYNTAX,
	PF_PARSE_SYSTEM,
	PF_PARSE_UNKNOWN,
};

/*
 * Incremental parser, so that a command can mix predicates with options of
 * its own: call pf_parse_arg() on each argument, handle PF_PARSE_UNKNOWN
 * yourself, then pf_parse_finish().
 */
struct pf_parser {
	struct pf_filter *filter;
	const struct pf_resolver *res;
	unsigned int given;		/* bit per option: catches repeats */
	const char *dev;		/* resolved by pf_parse_finish() */
	const char *netns;		/* as typed: a path or an inode number */
	const char *saddr, *daddr, *sport, *dport;	/* for messages */
	char err[PF_EXPR_MAX + 512];	/* why, without the "pktfilt: " */
};

void pf_parser_init(struct pf_parser *p, struct pf_filter *filter,
		    const struct pf_resolver *res);
/*
 * Parse the option at argv[*i] ("--opt value" or "--opt=value") and advance
 * *i past what it used. Returns PF_PARSE_UNKNOWN, leaving *i alone, if
 * argv[*i] is not a predicate option.
 */
enum pf_parse_status pf_parse_arg(struct pf_parser *p, int argc,
				  char *const *argv, int *i);
/*
 * A word that is not an option: part of the filter expression (tcpdump's
 * language), which may come in one quoted argument or in several words.
 */
enum pf_parse_status pf_parse_word(struct pf_parser *p, const char *word);
/*
 * Is @arg an option ("-x", "--name", "--name=value")? No option holds a
 * blank: an argument that starts with '-' and holds one is a filter
 * expression's text, as pf_format_filter() prints it in one word ("- 402
 * > 5" is an expression), and must parse back as such.
 */
bool pf_is_option(const char *arg);
/*
 * Resolve names, check the predicates against each other, compile the
 * expression.
 */
enum pf_parse_status pf_parse_finish(struct pf_parser *p);

/*
 * Parse a whole argument vector of predicates and --count, as "pktfilt set"
 * takes them. @err receives the message on failure.
 */
enum pf_parse_status pf_parse_filter(int argc, char *const *argv,
				     struct pf_filter *filter,
				     const struct pf_resolver *res,
				     char *err, size_t errlen);

/*
 * The inverse: @filter as "set" arguments, e.g. "--proto tcp --dport 80
 * --count 1", so that "pktfilt show" prints something one can paste.
 * Returns the length it wanted, like snprintf().
 */
int pf_format_filter(const struct pf_filter *filter,
		     const struct pf_resolver *res, char *buf, size_t len);

/*
 * --at's value, "rx,tx": 0 and the bits in *@stages, or -1 with the
 * message (naming the offending value) in @err.
 */
int pf_parse_stages(const char *val, __u32 *stages, char *err, size_t len);
/* "l4,rx": the stages of @stages in their order; like snprintf(). */
int pf_format_stages(__u32 stages, char *buf, size_t len);

/*
 * The filter against the loaded module's family @version (0: unknown,
 * taken as ours). Fills @msg and returns:
 *  PF_COMPAT_OK	nothing to say; @f->stages is what to send
 *  PF_COMPAT_NOTE	a version 1 module, --at not given: @f traces at l4
 *			(stages 0: no PKTFILT_A_STAGES sent); say @msg
 *  PF_COMPAT_WARN	a module newer than this tool: say @msg, go on
 *  PF_COMPAT_FAIL	a version 1 module asked for another stage than l4
 */
enum pf_compat {
	PF_COMPAT_OK,
	PF_COMPAT_NOTE,
	PF_COMPAT_WARN,
	PF_COMPAT_FAIL,
};

enum pf_compat pf_stages_compat(struct pf_filter *f, unsigned int version,
				__u32 default_stages,
				char *msg, size_t len);

/* Value parsers, exported for the tests. Return 0 or -1. */
int pf_parse_u32(const char *s, __u32 *val);	/* decimal or 0x hex */
int pf_parse_decimal(const char *s, unsigned long max, unsigned long *val);

#endif /* PKTFILT_PARSE_H */
