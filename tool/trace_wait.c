// SPDX-License-Identifier: GPL-2.0
/*
 * "pktfilt trace", step 4: the module's PACKET notifications counted
 * until --count, --timeout, a signal or COMMAND's end.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* pipe2, sigabbrev_np, signalfd */
#endif
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pktfilt.h"
#include "nl.h"
#include "show.h"
#include "trace_run.h"

#define PF_LINGER_MS		1000	/* after COMMAND exits */
#define PF_CHECK_MS		1000	/* ask the module how it goes */
/*
 * After the Nth packet, with stages after it: the module keeps the filter
 * armed for the later stages of the packets it traced until they are
 * freed, or 2 s (module/filter.c PF_EXHAUSTED_WAIT); wait for its disarm,
 * asking every PF_FOLLOW_CHECK_MS, PF_FOLLOW_MS at most.
 */
#define PF_FOLLOW_MS		3000
#define PF_FOLLOW_CHECK_MS	50

/* ------------------------------------------------------------------ */
/* Notifications */

/*
 * A packet id seen: 1 if new, 0 if not, -ENOMEM. Ids are >= 1; one of 0
 * (a version 1 module sends none) is a packet of its own each time.
 */
static int id_add(struct trace_run *r, uint64_t id)
{
	size_t i, mask;

	if (!id) {
		r->nids++;
		return 1;
	}
	if (2 * (r->nids + 1) > r->idcap) {
		size_t cap = r->idcap ? 2 * r->idcap : 64, k;
		uint64_t *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (k = 0; k < r->idcap; k++) {
			if (!r->ids[k])
				continue;
			for (i = r->ids[k] & (cap - 1); n[i]; i = (i + 1) & (cap - 1))
				;
			n[i] = r->ids[k];
		}
		free(r->ids);
		r->ids = n;
		r->idcap = cap;
	}
	mask = r->idcap - 1;
	for (i = id & mask; r->ids[i]; i = (i + 1) & mask)
		if (r->ids[i] == id)
			return 0;
	r->ids[i] = id;
	r->nids++;
	return 1;
}

int trace_on_packet(struct nlattr **tb, void *arg)
{
	struct trace_run *r = arg;
	int err;

	/* HELD: our lazy filter holds a packet; the scope is patched next. */
	if (!tb[PKTFILT_A_SEQ] && tb[PKTFILT_A_HELD]) {
		if (tb[PKTFILT_A_FILTER_ID] &&
		    nla_get_u32(tb[PKTFILT_A_FILTER_ID]) == r->filter_id &&
		    !r->held) {
			r->held = true;
			r->held_at = trace_now_ms();
		}
		return 0;
	}

	if (r->nseen == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		uint64_t *n = realloc(r->seqs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->seqs = n;
		r->cap = cap;
	}
	r->seqs[r->nseen++] = tb[PKTFILT_A_SEQ] ?
			      nla_get_u64(tb[PKTFILT_A_SEQ]) : 0;
	/* Several graphs of one packet: --count counts the packets. */
	err = id_add(r, tb[PKTFILT_A_PACKET_ID] ?
		     nla_get_u64(tb[PKTFILT_A_PACKET_ID]) : 0);
	return err < 0 ? err : 0;
}

/*
 * Ask the module: is our filter still armed, how many are left? Catches
 * notifications lost to a full socket, and a filter someone replaced.
 */
int trace_check_module(struct trace_run *r)
{
	struct pf_status st;
	int err = trace_get_status(r, &st);

	if (err)
		return err;
	if (st.state == PKTFILT_STATE_ARMED && st.has_id &&
	    st.id == r->filter_id) {
		if (r->o.filter.count && st.has_remaining && !st.remaining)
			r->module_done = true;
		/* A HELD notification lost to a full socket. */
		if (r->lazy && st.has_lazy && st.lazy == PKTFILT_LAZY_HOLDING &&
		    !r->held) {
			r->held = true;
			r->held_at = trace_now_ms();
		}
		return 0;
	}
	if (r->o.filter.count && st.state == PKTFILT_STATE_IDLE &&
	    strstr(st.reason, "count reached")) {
		r->module_done = true;
		r->module_idle = true;
		return 0;
	}
	if (st.state == PKTFILT_STATE_ARMED)
		snprintf(r->gone, sizeof(r->gone),
			 "another filter replaced it (filter id %u, ours was %u)",
			 st.id, r->filter_id);
	else
		snprintf(r->gone, sizeof(r->gone), "%s",
			 st.reason[0] ? st.reason : "disarmed");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Waiting for the packets */

const char *trace_end_name(const struct trace_run *r)
{
	static char buf[32];

	switch (r->end) {
	case END_SIGNAL:
		if (sigabbrev_np(r->signo))
			snprintf(buf, sizeof(buf), "SIG%s",
				 sigabbrev_np(r->signo));
		else
			snprintf(buf, sizeof(buf), "signal %d", r->signo);
		return buf;
	case END_TIMEOUT:
		return "--timeout";
	case END_COMMAND:
		return "the end of COMMAND";
	default:
		return "?";
	}
}

int trace_wait_packets(struct trace_run *r)
{
	__u32 count = r->o.filter.count;
	long long deadline = r->deadline;
	long long linger = -1, next_check = trace_now_ms() + PF_CHECK_MS;
	long long follow = -1;
	/* Later stages of the last packet may still come: wait for them. */
	bool later = r->version >= 2 &&
		     (r->o.filter.stages & ~(1U << PKTFILT_STAGE_L4));

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = pf_nl_events_fd(r->ev), .events = POLLIN },
			{ .fd = r->sfd, .events = POLLIN },
		};
		long long now, wake;
		int err, sig;

		if (count && (r->nids >= count || r->module_done) &&
		    (!later || r->module_idle ||
		     (follow >= 0 && trace_now_ms() >= follow))) {
			r->end = END_COUNT;
			return 0;
		}
		if (count && (r->nids >= count || r->module_done) &&
		    follow < 0) {
			follow = trace_now_ms() + PF_FOLLOW_MS;
			next_check = trace_now_ms() + PF_FOLLOW_CHECK_MS;
		}
		if (r->gone[0]) {
			r->end = END_GONE;
			return 0;
		}
		now = trace_now_ms();
		if (deadline >= 0 && now >= deadline) {
			r->end = END_TIMEOUT;
			return 0;
		}
		if (linger >= 0 && now >= linger) {
			r->end = END_COMMAND;
			return 0;
		}
		wake = next_check;
		if (follow >= 0 && follow < wake)
			wake = follow;
		if (deadline >= 0 && deadline < wake)
			wake = deadline;
		if (linger >= 0 && linger < wake)
			wake = linger;
		poll(pfd, 2, wake > now ? (int)(wake - now) : 0);

		if (pfd[0].revents) {
			err = pf_nl_events_read(r->ev);
			if (err == -ENOBUFS) {
				r->overflow = true;
				next_check = 0;	/* ask the module now */
			} else if (err) {
				fprintf(stderr,
					"pktfilt: trace: reading notifications: %s\n",
					strerror(-err));
				r->end = END_ERROR;
				return -1;
			}
		}
		if (pfd[1].revents) {
			sig = trace_read_signals(r);
			if (sig) {
				r->end = END_SIGNAL;
				r->signo = sig;
				return 0;
			}
		}
		if (r->held && !r->tfs.scope_on && trace_arm_scope(r)) {
			r->end = END_ERROR;
			return -1;
		}
		if (r->child && r->child_done && linger < 0)
			linger = trace_now_ms() + PF_LINGER_MS;
		if (trace_now_ms() >= next_check) {
			err = trace_check_module(r);
			if (err) {
				trace_kernel_error(r, "asking the module", err);
				r->end = END_ERROR;
				return -1;
			}
			next_check = trace_now_ms() + (follow >= 0 ?
						 PF_FOLLOW_CHECK_MS : PF_CHECK_MS);
		}
	}
}
