// SPDX-License-Identifier: GPL-2.0
/*
 * "pktfilt report": read a function_graph trace saved from tracefs and
 * render its packets (render.h) as text, JSON Lines, folded stacks, a
 * chrome timeline or an HTML page, and/or an SVG flame graph and an HTML
 * page. Needs neither the module nor privileges.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fgraph.h"
#include "render.h"
#include "report.h"

#define EXIT_OK		0
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

const char pf_report_synopsis[] =
"pktfilt report [--format FORMAT] [--svg FILE] [--html FILE] [-o FILE]\n"
"                  TRACEFILE";

const char pf_report_help[] =
"    pktfilt report [--format FORMAT] [--svg FILE] [--html FILE] [-o FILE]\n"
"                   TRACEFILE\n"
"        Render the packets of a function_graph trace that pktfilt made,\n"
"        saved from tracefs (cat trace or trace_pipe > TRACEFILE; - reads\n"
"        standard input). A packet is its pktfilt_packet event and the\n"
"        graph that follows it on the same CPU, rooted at the function the\n"
"        event's root= names (netif_receive_skb_core, ip_rcv or ipv6_rcv\n"
"        at stage rx, nf_hook_slow at tx; ip_local_out or ip6_local_out\n"
"        from a module of version 4 or older) or, in traces of pktfilt version 1\n"
"        (events without stage=, id=, root=: stage l4, the seq for an id),\n"
"        at a protocol handler (tcp_v4_rcv, udp_rcv, ...); the lines of\n"
"        other CPUs, interleaved with it in the trace, are taken out.\n"
"        A packet followed through several stages (see 'pktfilt help\n"
"        set', STAGES) is one such packet per stage, all with its id.\n"
"        Its fate is the first pktfilt_free event of its id, inside a\n"
"        graph or not, on any CPU: \"dropped\" with the kernel's drop\n"
"        reason and the function that dropped it, or \"consumed\" (a\n"
"        normal end). A packet whose graph ended before its free waits\n"
"        for it while 64 later packets do; unknown if none came.\n"
"        Works offline: needs neither the module nor privileges.\n"
"\n"
"        --format text|json|folded|chrome|html|pcapng\n"
"            text (the default): for each packet a header line,\n"
"              # packet SEQ (STAGE, id ID): PROTO SADDR:SPORT ->\n"
"                DADDR:DPORT ifindex N netns INODE cpu N\n"
"                [INCOMPLETE: WHY]\n"
"            (on one line), if its fate is known a second one,\n"
"              # dropped: REASON in FUNCTION    or    # consumed\n"
"            (\"in FUNCTION\" only when the kernel says), then its lines\n"
"            as the kernel printed them, durations and markers included,\n"
"            and a pktfilt_free inside the graph at its point.\n"
"            nftables verdicts: for each nf_tables chain the packet\n"
"            traverses inside its graph, a line at its place,\n"
"              /* nft FAMILY TABLE CHAIN handle N: VERDICT [RULE] */\n"
"            (\"policy: accept\" for a chain's policy; VERDICT accept,\n"
"            drop, queue, continue, return, or jump/goto and the target\n"
"            chain), from the module's pktfilt_nft events; RULE, the\n"
"            rule's text, where 'pktfilt trace' wrote it into the trace\n"
"            when it captured it. nftables' own tracing functions, which\n"
"            run only because pktfilt traces the packet, are left out.\n"
"            A packet dropped by a rule says so in its fate line:\n"
"              # dropped: REASON by FAMILY TABLE CHAIN handle N: RULE\n"
"            json: JSON Lines, one object per packet, with the event's\n"
"            seq, stage, id, cpu, proto, saddr, daddr, sport, dport,\n"
"            ifindex and netns, fate (\"dropped\", \"consumed\" or null),\n"
"            drop ({\"reason\": R, \"func\": F or null} when dropped,\n"
"            else null), complete (true or false), incomplete (why, or\n"
"            null), nft (its nftables verdicts, in order: [{\"family\",\n"
"            \"table\", \"chain\", \"handle\" (null for a policy),\n"
"            \"type\" (rule, return, policy), \"verdict\", \"target\"\n"
"            (a jump's chain, or null), \"rule\" (its text, or null),\n"
"            \"in\" (the call it happened in)}, ...]) and graph, the\n"
"            root's call tree (or null):\n"
"              {\"func\": NAME, \"duration_ns\": N, \"children\": [...]}\n"
"            with duration_ns null for a call whose return is missing,\n"
"            and where the trace has them (ftrace's funcgraph-args and\n"
"            funcgraph-retval, which trace sets when asked) the call's\n"
"            \"args\", {\"skb\": \"0xffff8881...\", \"len\": \"42\"},\n"
"            and \"ret\", \"0x0\" or \"-22\": strings as ftrace printed\n"
"            them (an argument without a name is \"argN\", N counted\n"
"            from 0; ftrace's \"...\" for those past the sixth is \"...\").\n"
"            The last member, filter, is the filter that traced the\n"
"            packets, as 'pktfilt show' prints it after 'pktfilt set'\n"
"            (\"--proto udp --count 1 --at rx 'udp port 53'\"), when\n"
"            'pktfilt trace' prints them; null here: a trace file does\n"
"            not tell it.\n"
"            folded: one \"ROOT;CALLEE;...;CALL NS\" line per distinct call\n"
"            stack, sorted, for flamegraph.pl, inferno or speedscope. NS\n"
"            is the self time of the last call of the stack in\n"
"            nanoseconds: its duration minus its callees' durations,\n"
"            summed over ALL the packets of the trace (identical stacks\n"
"            of different packets merge into one line). See DURATIONS.\n"
"            The stage is in the root frame: each stage has its own root\n"
"            functions (rx netif_receive_skb_core, ip_rcv, ipv6_rcv; tx\n"
"            nf_hook_slow; l4 the protocol handlers), so the graphs of\n"
"            one stage merge, and never with another stage's. Where the\n"
"            trace tells how a packet ended, its stacks start with a\n"
"            frame saying so, \"[consumed]\" or \"[dropped: REASON in\n"
"            FUNC]\" (weight 0), so that packets group by their fate.\n"
"            chrome: a timeline in the Trace Event Format, one JSON\n"
"            object {\"traceEvents\": [...]}, for ui.perfetto.dev or\n"
"            chrome://tracing (open the file there). One track per CPU\n"
"            (pid 1, tid = the CPU, named \"CPU N\"); each call is a\n"
"            complete event (\"ph\": \"X\", \"ts\" and \"dur\" in\n"
"            microseconds, to the nanosecond) nested in its caller's.\n"
"            The root's slice has \"cat\": \"packet\" and the packet in\n"
"            its args: seq, stage, id, proto, saddr, daddr, sport, dport,\n"
"            ifindex, netns, cpu, fate, drop_reason, drop_func, complete\n"
"            (search for \"id\" to see a packet's stages), drop_by (the\n"
"            nftables rule that dropped it); each nftables verdict is an\n"
"            instant (\"ph\": \"i\", \"cat\": \"nft\") at its place, its\n"
"            fields in its args, as json's nft; a call with\n"
"            arguments or a return value has them in its args too\n"
"            (\"args\", \"ret\", as in json). Durations are\n"
"            the kernel's; start times are not, unless the trace has\n"
"            funcgraph-abstime (pktfilt trace turns it off): times\n"
"            within a graph are reconstructed from the durations, each\n"
"            call's callees one after the other from its start, and the\n"
"            packets one after the other, 10 us apart, in the order of\n"
"            their events. With abstime each call starts at its\n"
"            timestamp (microseconds). A callee is cut to end within its\n"
"            caller (args.duration_ns keeps its own duration); a call\n"
"            whose return is missing lasts to its last callee's end\n"
"            (args.returned false). Incomplete packets are included.\n"
"            \"otherData\" holds \"filter\", as json's.\n"
"            html: one self-contained page to explore the packets in a\n"
"            browser (its data and script inside it: nothing is fetched,\n"
"            it opens from file:// offline; write it with -o FILE): the\n"
"            packet list (stage, id, tuple, fate, duration), and for the\n"
"            packet chosen its call tree in call order, each call with\n"
"            its duration and self time (its duration less its callees',\n"
"            0 at least), opened and closed by node, to a depth, or along\n"
"            the path to the call that dropped it; the calls with a self\n"
"            time of 5% of the packet or more marked slow, the fate at\n"
"            its place, calls that did not return and incomplete packets\n"
"            marked. A search by name (a substring, or a glob with *, ?,\n"
"            [...]) counts the matches, highlights them and steps through\n"
"            them, opening their path. Below, the same graph as an icicle\n"
"            graph: click a call to zoom to it and see it in the tree,\n"
"            double-click one in the tree to zoom to it; back and reset\n"
"            zoom out. Only the rows in view are drawn, so a graph of\n"
"            thousands of calls opens at once; the page is written packet\n"
"            by packet, as json is. Incomplete packets are included.\n"
"            Prefer it to --svg to explore a packet (a tree to open, the\n"
"            fate at its place, a search stepped through); the SVG is a\n"
"            picture to embed, with flamegraph.pl's zoom and search.\n"
"            pcapng: the packets' bytes, for Wireshark or tshark (binary:\n"
"            with -o FILE, or standard output redirected). One interface\n"
"            per ifindex and netns (named \"ifindex N netns INODE\"; pktfilt\n"
"            trace names the devices it finds), link\n"
"            type raw IP (the bytes start at the IP header), one frame\n"
"            per packet and stage: its timestamp the wall-clock time of\n"
"            its event, its captured bytes those the event carries\n"
"            (trace's --snaplen, 256 by default), its length the\n"
"            packet's from the IP header, its direction inbound (rx, l4)\n"
"            or outbound (tx), frame.packet_id its packet id, and\n"
"            frame.comment \"pktfilt id=ID seq=SEQ stage=STAGE cpu=CPU\n"
"            root=ROOT\" and its fate if known. Events of a module older\n"
"            than version 6 carry no bytes: their packets are left out,\n"
"            and said so on standard error.\n"
"\n"
"        --svg FILE\n"
"            Also write a flame graph to FILE: a self-contained SVG with,\n"
"            for each packet, a header (its seq, stage, id, tuple, total\n"
"            time and fate, as text prints them) over an icicle graph:\n"
"            the root on top, the calls it made below it\n"
"            in call order from the left, each as wide as its duration.\n"
"            Each packet has its own time scale. Hovering over a call\n"
"            shows its name, duration and share of the packet; clicking\n"
"            it zooms its packet's graph to it (\"Reset zoom\" at the top\n"
"            undoes it), and \"Search\" highlights the calls whose name\n"
"            matches a regular expression and counts them, as\n"
"            flamegraph.pl's SVGs do. Given alone, without --format or\n"
"            -o, it is the only output.\n"
"\n"
"        --html FILE\n"
"            Also write the page of --format html to FILE. As --svg,\n"
"            without --format or -o it is the only output.\n"
"\n"
"        -o FILE, --output FILE\n"
"            Write the --format rendering to FILE, not standard output.\n"
"\n"
"        INCOMPLETE PACKETS. A packet is complete when its handler\n"
"        returned within the trace and nothing of its graph is missing.\n"
"        It is not when the ring buffer overran while it was traced (the\n"
"        trace says \"CPU:N [LOST M EVENTS]\": make buffer_size_kb larger),\n"
"        when the trace ends (or was cut) inside its graph, when no graph\n"
"        follows its event, or when calls or returns are missing. text\n"
"        and json mark such packets; folded and --svg leave them out,\n"
"        with a warning. Exit status 1 tells that any packet was\n"
"        incomplete or any events were lost, with the counts on stderr.\n"
"\n"
"        DURATIONS. ftrace prints microseconds, with 3 decimals below\n"
"        10 ms (exact to the nanosecond), fewer above (\"12345.67 us\");\n"
"        the missing digits count as zeros. So callees can add up to a\n"
"        little more than their caller: the self time is then 0, and the\n"
"        difference is taken off the handler's own self time (then off\n"
"        its callees', first called first, should that not suffice), so\n"
"        that the folded weights of one packet always add up exactly to\n"
"        its handler's duration_ns.\n";

const char pf_report_examples[] =
"    Save a trace, read its packets, draw them:\n"
"        cat /sys/kernel/tracing/trace > trace.txt\n"
"        pktfilt report trace.txt\n"
"        pktfilt report --svg packets.svg trace.txt\n"
"\n"
"    The handler's duration of each packet, and a flame graph of them all\n"
"    with flamegraph.pl:\n"
"        pktfilt report --format json trace.txt | jq .graph.duration_ns\n"
"        pktfilt report --format folded trace.txt | flamegraph.pl > fg.svg\n"
"\n"
"    A timeline to open in ui.perfetto.dev or chrome://tracing:\n"
"        pktfilt report --format chrome -o timeline.json trace.txt\n"
"\n"
"    A page to explore the packets in a browser, offline:\n"
"        pktfilt report --format html -o packets.html trace.txt\n";

struct pf_report_opts {
	const char *format;	/* NULL: not given */
	const char *svg;
	const char *html;
	const char *output;
	const char *input;
};

static int report_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "pktfilt: report: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\ntry 'pktfilt report --help'\n");
	return EXIT_USAGE;
}

/*
 * @arg is --NAME or --NAME=VALUE (or @short): its value into *@val, taking
 * the next argument if need be. 1 if @arg is that option, 0 if not, or a
 * usage error's exit status.
 */
static int take_opt(const char *name, const char *shortname, int argc,
		    char **argv, int *i, const char **val)
{
	const char *arg = argv[*i];
	size_t len = strlen(name);

	if (!strncmp(arg, name, len) && arg[len] == '=') {
		if (*val)
			return report_usage("%s given twice", name);
		*val = arg + len + 1;
		return 1;
	}
	if (strcmp(arg, name) && (!shortname || strcmp(arg, shortname)))
		return 0;
	if (*val)
		return report_usage("%s given twice", name);
	if (*i + 1 >= argc)
		return report_usage("%s needs a value", arg);
	*val = argv[++*i];
	return 1;
}

static int parse_args(int argc, char **argv, struct pf_report_opts *o)
{
	bool dashdash = false;
	int i, r;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < argc; i++) {
		const char *arg = argv[i];

		if (!dashdash && arg[0] == '-' && arg[1]) {
			if (!strcmp(arg, "--")) {
				dashdash = true;
				continue;
			}
			r = take_opt("--format", NULL, argc, argv, &i,
				     &o->format);
			if (!r)
				r = take_opt("--svg", NULL, argc, argv, &i,
					     &o->svg);
			if (!r)
				r = take_opt("--html", NULL, argc, argv, &i,
					     &o->html);
			if (!r)
				r = take_opt("--output", "-o", argc, argv, &i,
					     &o->output);
			if (r == 1)
				continue;
			if (r)
				return r;
			return report_usage("unknown option '%s'", arg);
		}
		if (o->input)
			return report_usage("unexpected argument '%s' (one TRACEFILE only)",
					    arg);
		o->input = arg;
	}
	if (!o->input)
		return report_usage("%s", "no TRACEFILE given (- for standard input)");
	if (o->format && strcmp(o->format, "text") &&
	    strcmp(o->format, "json") && strcmp(o->format, "folded") &&
	    strcmp(o->format, "chrome") && strcmp(o->format, "html") &&
	    strcmp(o->format, "pcapng"))
		return report_usage("unknown --format '%s': text, json, folded, chrome, html or pcapng",
				    o->format);
	if (o->format && !strcmp(o->format, "pcapng") &&
	    (!o->output || !strcmp(o->output, "-")) && isatty(STDOUT_FILENO))
		return report_usage("%s", "--format pcapng is binary: give -o FILE or redirect standard output");
	if (o->svg && !o->svg[0])
		return report_usage("%s", "--svg needs a file name");
	if (o->html && !o->html[0])
		return report_usage("%s", "--html needs a file name");
	if (o->output && !o->output[0])
		return report_usage("%s", "--output needs a file name");
	return EXIT_OK;
}

static enum pf_format format_of(const char *format)
{
	if (!strcmp(format, "json"))
		return PF_FORMAT_JSON;
	if (!strcmp(format, "folded"))
		return PF_FORMAT_FOLDED;
	if (!strcmp(format, "chrome"))
		return PF_FORMAT_CHROME;
	if (!strcmp(format, "html"))
		return PF_FORMAT_HTML;
	if (!strcmp(format, "pcapng"))
		return PF_FORMAT_PCAPNG;
	return PF_FORMAT_TEXT;
}

/* One output: the --format one or the SVG. */
struct report_out {
	const char *path;	/* "-": standard output */
	FILE *file;
	struct pf_render *r;
	int err;		/* the first error writing it */
};

/* The renderers, each packet given to both as soon as it is complete. */
struct report_run {
	struct report_out outs[3];
	size_t nouts;
};

static int out_open(struct report_out *o, const char *path,
		    enum pf_format fmt)
{
	bool std = !strcmp(path, "-");

	o->path = path;
	o->file = std ? stdout : fopen(path, "w");
	if (!o->file) {
		fprintf(stderr, "pktfilt: report: cannot write %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	/* A trace read from a file does not tell the filter: null. */
	o->r = pf_render_new(fmt, o->file, NULL);
	if (!o->r) {
		fprintf(stderr, "pktfilt: report: %s: %s\n", path,
			strerror(errno));
		if (!std)
			fclose(o->file);
		o->file = NULL;
		return -1;
	}
	return 0;
}

static void out_error(const struct report_out *o, int err)
{
	fprintf(stderr, "pktfilt: report: writing %s: %s\n",
		strcmp(o->path, "-") ? o->path : "standard output",
		strerror(-err));
}

/* Finish and close @o: 0 or EXIT_RUNTIME. */
static int out_close(struct report_out *o)
{
	bool std = !strcmp(o->path, "-");
	int err = pf_render_end(o->r);

	if (!std && fclose(o->file) && !err)
		err = errno ? -errno : -EIO;
	if (err && !o->err)
		out_error(o, err);
	return err || o->err ? EXIT_RUNTIME : EXIT_OK;
}

static int on_packet(void *arg, const struct pf_packet *pkt)
{
	struct report_run *run = arg;
	size_t i;
	int err;

	for (i = 0; i < run->nouts; i++) {
		struct report_out *o = &run->outs[i];

		if (o->err)
			continue;
		err = pf_render_packet(o->r, pkt);
		if (err) {
			o->err = err;
			out_error(o, err);
			return err;	/* stop reading */
		}
	}
	return 0;
}

/*
 * Read the trace once, in chunks, through the streaming parser: each
 * packet is rendered as soon as it is complete, and memory holds only
 * the packets still open. NULL on a read or write error (said on stderr).
 */
static struct pf_trace *read_trace(const char *path, FILE *in,
				   struct report_run *run)
{
	bool std = !strcmp(path, "-");
	struct pf_fgraph *p;
	struct pf_trace *t = NULL;
	static char buf[1 << 20];
	size_t n;
	int err = 0;

	p = pf_fgraph_new_stream(on_packet, run);
	if (!p) {
		err = ENOMEM;
		goto out;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		err = -pf_fgraph_feed(p, buf, n);
		if (err)
			break;
	}
	if (!err && ferror(in)) {
		err = errno ? errno : EIO;
		pf_fgraph_free(p);
	} else if (!err) {
		t = pf_fgraph_finish(p);
		if (!t)
			err = errno;
	} else {
		pf_fgraph_free(p);
	}
out:
	/* A write error was said where it happened. */
	if (err && err != ECANCELED && !(run->nouts &&
					 (run->outs[0].err ||
					  run->outs[run->nouts - 1].err)))
		fprintf(stderr, "pktfilt: report: reading %s: %s\n",
			std ? "standard input" : path, strerror(err));
	if (!std)
		fclose(in);
	return err ? NULL : t;
}

int pf_report_run(const struct pf_cmd *cmd, int argc, char **argv)
{
	struct pf_report_opts o;
	struct report_run run = { .nouts = 0 };
	struct pf_trace *t;
	size_t bad, i, npackets;
	FILE *in;
	int ret;

	(void)cmd;
	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret;
	in = strcmp(o.input, "-") ? fopen(o.input, "r") : stdin;
	if (!in) {
		fprintf(stderr, "pktfilt: report: cannot read %s: %s\n",
			o.input, strerror(errno));
		return EXIT_RUNTIME;
	}

	if (o.format || o.output || !(o.svg || o.html)) {
		if (out_open(&run.outs[run.nouts],
			     o.output ? o.output : "-",
			     format_of(o.format ? o.format : "text"))) {
			if (in != stdin)
				fclose(in);
			return EXIT_RUNTIME;
		}
		run.nouts++;
	}
	if (o.svg) {
		if (out_open(&run.outs[run.nouts], o.svg, PF_FORMAT_SVG)) {
			for (i = 0; i < run.nouts; i++)
				out_close(&run.outs[i]);
			if (in != stdin)
				fclose(in);
			return EXIT_RUNTIME;
		}
		run.nouts++;
	}
	if (o.html) {
		if (out_open(&run.outs[run.nouts], o.html, PF_FORMAT_HTML)) {
			for (i = 0; i < run.nouts; i++)
				out_close(&run.outs[i]);
			if (in != stdin)
				fclose(in);
			return EXIT_RUNTIME;
		}
		run.nouts++;
	}
	t = read_trace(o.input, in, &run);
	for (i = 0; i < run.nouts; i++)
		if (out_close(&run.outs[i]))
			ret = EXIT_RUNTIME;
	if (!t)
		return EXIT_RUNTIME;
	if (ret) {
		pf_trace_free(t);
		return ret;
	}

	bad = pf_trace_incomplete(t);
	npackets = pf_trace_packets(t);
	if (!npackets)
		fprintf(stderr,
			"pktfilt: report: no pktfilt_packet event in %s (were events/pktfilt enabled?)\n",
			strcmp(o.input, "-") ? o.input : "standard input");
	if (bad || pf_trace_lost(t)) {
		fprintf(stderr, "pktfilt: report: %zu of %zu packet%s incomplete",
			bad, npackets, npackets == 1 ? "" : "s");
		if (pf_trace_lost(t))
			fprintf(stderr, ", %s%" PRIu64 " event%s lost%s",
				t->stats.lost_saturated ? "at least " : "",
				t->stats.lost_events,
				t->stats.lost_events == 1 ? "" : "s",
				t->stats.lost_unknown ? " (and more, uncounted)" : "");
		fprintf(stderr, "\npktfilt: report: ");
		pf_trace_summary(stderr, t);
		ret = EXIT_RUNTIME;
	}
	pf_trace_free(t);
	return ret;
}
