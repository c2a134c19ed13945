// SPDX-License-Identifier: GPL-2.0
/*
 * pffail - every allocation failure of pktfilt's commands, one at a time:
 * the kernel's systematic fault injection (fail-nth), as syzkaller uses it.
 *
 *   pffail [--max N] [-v] [--nth N] SCENARIO...
 *
 * For each scenario, for n = 1, 2, ...: the state the scenario starts from
 * is set up without faults; n is written to /proc/thread-self/fail-nth, so
 * that the n-th fault-injection point this thread reaches in the kernel
 * fails (a slab or page allocation with failslab or fail_page_alloc on and
 * ignore-gfp-wait off, a function marked ALLOW_ERROR_INJECTION with
 * fail_function); the scenario's one command is sent and its answer read;
 * fail-nth read back says whether the fault was injected. The sweep ends
 * at the first n the command did not reach: every allocation the command
 * makes, in pktfilt and in the kernel functions it calls (nf_tables and
 * netfilter hook registration, kprobes, ftrace filters, BPF), has failed
 * once. After each command the state is taken back without faults (CLEAR)
 * and must be clean again: GET says nothing is armed. The generic netlink
 * request is processed in the sender's thread, so fail-nth reaches it; what
 * runs later in softirqs or work items is not (the module's test_fault_*
 * parameters force those branches).
 *
 * Scenarios:
 *   eager    SET a filter at rx, tx and l4 (udp dport 9), not lazy
 *   lazy     SET it lazy (hold 1000 ms)
 *   bpf      SET it with a classic BPF program (the expression path)
 *   ready    READY for a lazy filter set before (the gate opens)
 *   replace  SET while another filter is armed (tx only before: the new
 *            one adds rx and l4)
 *   clear    CLEAR an armed filter
 *   get      GET with a filter armed (the reply's allocation)
 *
 * --nth N injects the N-th fault only, once, and says what came of it (the
 * tests read the kernel's report of that one fault, with its stack).
 *
 * Prints one line per scenario (-v: and each refusal without extack):
 *   pffail: SCENARIO: F faults injected, U not sent (the request's own
 *           skb), E refused (errno:count ...), X refused without extack,
 *           M without answer, S unclean
 * and exits 1 if any step found the state unclean afterwards, a setup
 * failed, or an answer was wrong; refusals and missing answers (the
 * answer's own allocation failed) are what faults may cause.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "../../include/pktfilt.h"

#define RCV_TIMEOUT_S	5
#define MAX_ERRNO	200

static int nl_fd;
static bool verbose;
static unsigned int only_nth;
static uint16_t family_id;
static uint32_t next_seq = 1;
static uint8_t rbuf[65536];

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("pffail: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

struct msg {
	union {
		struct nlmsghdr n;
		uint8_t buf[1024];
	};
};

static void msg_init(struct msg *m, uint16_t type, uint8_t cmd, uint8_t version)
{
	struct genlmsghdr *g;

	memset(m, 0, sizeof(*m));
	m->n.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
	m->n.nlmsg_type = type;
	m->n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	m->n.nlmsg_seq = next_seq++;
	g = NLMSG_DATA(&m->n);
	g->cmd = cmd;
	g->version = version;
}

static void put_attr(struct msg *m, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)(m->buf + NLMSG_ALIGN(m->n.nlmsg_len));
	size_t total = NLA_HDRLEN + NLA_ALIGN(len);

	if (NLMSG_ALIGN(m->n.nlmsg_len) + total > sizeof(m->buf))
		die("message too long");
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((uint8_t *)a + NLA_HDRLEN, data, len);
	m->n.nlmsg_len = (uint32_t)(NLMSG_ALIGN(m->n.nlmsg_len) + total);
}

static void put_u8(struct msg *m, uint16_t type, uint8_t v) { put_attr(m, type, &v, 1); }
static void put_u16(struct msg *m, uint16_t type, uint16_t v) { put_attr(m, type, &v, 2); }
static void put_u32(struct msg *m, uint16_t type, uint32_t v) { put_attr(m, type, &v, 4); }

/* What one request got back. */
struct answer {
	bool unsent;		/* sendto() failed: the request's skb */
	bool got;		/* the final answer (NLMSG_ERROR) came */
	int error;		/* its error, 0 for an ack */
	bool extack;		/* it carried an extack message */
	uint32_t filter_id;	/* PKTFILT_A_FILTER_ID of a GET reply */
	uint8_t state;		/* PKTFILT_A_STATE of a GET reply */
	bool has_state;
};

static const struct nlattr *attr_next(const uint8_t **p, size_t *n)
{
	const struct nlattr *a = (const struct nlattr *)*p;
	size_t step;

	if (*n < NLA_HDRLEN || a->nla_len < NLA_HDRLEN || a->nla_len > *n)
		return NULL;
	step = (size_t)NLA_ALIGN(a->nla_len);
	if (step > *n)
		step = *n;
	*p += step;
	*n -= step;
	return a;
}

static void parse_reply(const struct nlmsghdr *h, struct answer *ans)
{
	const uint8_t *p = (const uint8_t *)NLMSG_DATA(h) + GENL_HDRLEN;
	size_t n = h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	const struct nlattr *a;

	while ((a = attr_next(&p, &n))) {
		const uint8_t *d = (const uint8_t *)a + NLA_HDRLEN;

		if (a->nla_type == PKTFILT_A_FILTER_ID && a->nla_len >= NLA_HDRLEN + 4)
			memcpy(&ans->filter_id, d, 4);
		if (a->nla_type == PKTFILT_A_STATE && a->nla_len >= NLA_HDRLEN + 1) {
			ans->state = d[0];
			ans->has_state = true;
		}
	}
}

/* Does the NLMSG_ERROR carry NLMSGERR_ATTR_MSG (NETLINK_CAP_ACK on)? */
static bool error_has_extack(const struct nlmsghdr *h)
{
	const uint8_t *p;
	const struct nlattr *a;
	size_t n;

	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS) ||
	    h->nlmsg_len < NLMSG_HDRLEN + sizeof(struct nlmsgerr))
		return false;
	p = (const uint8_t *)NLMSG_DATA(h) + sizeof(struct nlmsgerr);
	n = h->nlmsg_len - NLMSG_HDRLEN - sizeof(struct nlmsgerr);
	while ((a = attr_next(&p, &n)))
		if (a->nla_type == NLMSGERR_ATTR_MSG && a->nla_len > NLA_HDRLEN + 1)
			return true;
	return false;
}

/*
 * Sends @m and reads its answers until its NLMSG_ERROR, or until none
 * comes within RCV_TIMEOUT_S (false: the send or the answer was lost).
 */
static bool transact(struct msg *m, struct answer *ans)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t n;

	memset(ans, 0, sizeof(*ans));
	do
		n = sendto(nl_fd, m->buf, m->n.nlmsg_len, 0,
			   (struct sockaddr *)&kernel, sizeof(kernel));
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		/* The request's own skb could not be allocated. */
		ans->unsent = true;
		ans->got = true;
		ans->error = -errno;
		return true;
	}
	for (;;) {
		const struct nlmsghdr *h;
		size_t left;

		n = recv(nl_fd, rbuf, sizeof(rbuf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == ENOBUFS)
				return false;
			die("recv: %s", strerror(errno));
		}
		left = (size_t)n;
		for (h = (const struct nlmsghdr *)rbuf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_seq != m->n.nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				ans->got = true;
				ans->error = e->error;
				ans->extack = e->error && error_has_extack(h);
				return true;
			}
			if (h->nlmsg_type == family_id)
				parse_reply(h, ans);
		}
	}
}

static void resolve_family(void)
{
	struct msg m;
	const char *name = PKTFILT_GENL_NAME;
	ssize_t n;

	msg_init(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	put_attr(&m, CTRL_ATTR_FAMILY_NAME, name, strlen(name) + 1);
	if (send(nl_fd, m.buf, m.n.nlmsg_len, 0) < 0)
		die("send GETFAMILY: %s", strerror(errno));
	while (!family_id) {
		const struct nlmsghdr *h;
		size_t left;

		n = recv(nl_fd, rbuf, sizeof(rbuf), 0);
		if (n < 0)
			die("resolving %s: %s", name, strerror(errno));
		left = (size_t)n;
		for (h = (const struct nlmsghdr *)rbuf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			const uint8_t *p = (const uint8_t *)NLMSG_DATA(h) + GENL_HDRLEN;
			size_t an;
			const struct nlattr *a;

			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (e->error)
					die("family %s: %s", name, strerror(-e->error));
				continue;
			}
			if (h->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
				continue;
			an = h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
			while ((a = attr_next(&p, &an)))
				if (a->nla_type == CTRL_ATTR_FAMILY_ID)
					memcpy(&family_id, (const uint8_t *)a + NLA_HDRLEN, 2);
		}
	}
}

static void nl_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = RCV_TIMEOUT_S };
	int one = 1;

	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl_fd < 0)
		die("socket: %s", strerror(errno));
	if (bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind: %s", strerror(errno));
	if (setsockopt(nl_fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)) ||
	    setsockopt(nl_fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one)) ||
	    setsockopt(nl_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		die("setsockopt: %s", strerror(errno));
	/* Connected to the kernel: send() needs no address. */
	sa.nl_pid = 0;
	if (connect(nl_fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect: %s", strerror(errno));
}

/* --- the commands ------------------------------------------------------- */

enum kind { SET_EAGER, SET_LAZY, SET_BPF, SET_TX };

static void build_set(struct msg *m, enum kind k)
{
	msg_init(m, family_id, PKTFILT_CMD_SET, PKTFILT_GENL_VERSION);
	put_u8(m, PKTFILT_A_PROTO, PKTFILT_PROTO_UDP);
	put_u16(m, PKTFILT_A_DPORT_MIN, 9);
	put_u32(m, PKTFILT_A_COUNT, 1);
	put_u32(m, PKTFILT_A_STAGES, k == SET_TX ? 1U << PKTFILT_STAGE_TX :
		PKTFILT_STAGES_ALL);
	if (k == SET_LAZY) {
		put_u32(m, PKTFILT_A_FLAGS, PKTFILT_F_LAZY);
		put_u32(m, PKTFILT_A_HOLD_MS, 1000);
	}
	if (k == SET_BPF) {
		/* "udp": ip[9] == 17 on a raw IPv4 packet, else 0. */
		static const struct sock_filter prog[] = {
			BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 9),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, 0xffff),
			BPF_STMT(BPF_RET | BPF_K, 0),
		};
		static const char expr[] = "udp";

		put_attr(m, PKTFILT_A_BPF, prog, sizeof(prog));
		put_attr(m, PKTFILT_A_EXPR, expr, sizeof(expr));
	}
}

static void build_simple(struct msg *m, uint8_t cmd)
{
	msg_init(m, family_id, cmd, PKTFILT_GENL_VERSION);
}

/* A command that must succeed (setting up or taking back, no fault). */
static struct answer must(struct msg *m, const char *what)
{
	struct answer a;

	if (!transact(m, &a))
		die("%s: no answer", what);
	if (a.error)
		die("%s: %s", what, strerror(-a.error));
	return a;
}

static uint32_t armed_id(void)
{
	struct msg m;
	struct answer a;

	build_simple(&m, PKTFILT_CMD_GET);
	a = must(&m, "GET");
	return a.has_state && a.state != PKTFILT_STATE_IDLE ? a.filter_id : 0;
}

static void clear_all(void)
{
	struct msg m;
	struct answer a;

	build_simple(&m, PKTFILT_CMD_CLEAR);
	if (!transact(&m, &a))
		die("CLEAR: no answer");
}

/* --- fail-nth ----------------------------------------------------------- */

static int nth_fd = -1;

static void nth_open(void)
{
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0)
		die("/proc/thread-self/fail-nth: %s (CONFIG_FAULT_INJECTION?)",
		    strerror(errno));
}

static void nth_write(unsigned int n)
{
	char s[16];
	int len = snprintf(s, sizeof(s), "%u", n);

	if (pwrite(nth_fd, s, (size_t)len, 0) != len)
		die("writing fail-nth: %s", strerror(errno));
}

/* Was the fault written last injected (fail-nth reads 0)? Resets it. */
static bool nth_injected(void)
{
	char s[16] = "";
	ssize_t n = pread(nth_fd, s, sizeof(s) - 1, 0);

	if (n <= 0)
		die("reading fail-nth: %s", n < 0 ? strerror(errno) : "empty");
	nth_write(0);
	return strtoul(s, NULL, 10) == 0;
}

/* --- scenarios ---------------------------------------------------------- */

struct scenario {
	const char *name;
	void (*setup)(void);
	void (*command)(struct msg *m);
};

static void setup_none(void) { }
static void setup_lazy(void)
{
	struct msg m;

	build_set(&m, SET_LAZY);
	must(&m, "setup: SET lazy");
}
static void setup_tx(void)
{
	struct msg m;

	build_set(&m, SET_TX);
	must(&m, "setup: SET tx");
}
static void setup_eager(void)
{
	struct msg m;

	build_set(&m, SET_EAGER);
	must(&m, "setup: SET");
}

static void cmd_eager(struct msg *m) { build_set(m, SET_EAGER); }
static void cmd_lazy(struct msg *m) { build_set(m, SET_LAZY); }
static void cmd_bpf(struct msg *m) { build_set(m, SET_BPF); }
static void cmd_clear(struct msg *m) { build_simple(m, PKTFILT_CMD_CLEAR); }
static void cmd_get(struct msg *m) { build_simple(m, PKTFILT_CMD_GET); }
static void cmd_ready(struct msg *m)
{
	uint32_t id = armed_id();

	if (!id)
		die("ready: no lazy filter armed after its setup");
	build_simple(m, PKTFILT_CMD_READY);
	put_u32(m, PKTFILT_A_FILTER_ID, id);
}

static const struct scenario scenarios[] = {
	{ "eager", setup_none, cmd_eager },
	{ "lazy", setup_none, cmd_lazy },
	{ "bpf", setup_none, cmd_bpf },
	{ "ready", setup_lazy, cmd_ready },
	{ "replace", setup_tx, cmd_eager },
	{ "clear", setup_eager, cmd_clear },
	{ "get", setup_eager, cmd_get },
};

static int run(const struct scenario *s, unsigned int max)
{
	unsigned int n, injected = 0, refused = 0, noextack = 0, lost = 0, unsent = 0;
	unsigned int unclean = 0, by_errno[MAX_ERRNO] = { 0 };
	char errs[512] = "";
	size_t off = 0;
	int e;

	for (n = only_nth ?: 1; n <= max; n++) {
		struct msg m;
		struct answer a;
		bool answered, hit;

		s->setup();
		s->command(&m);
		nth_write(n);
		answered = transact(&m, &a);
		hit = nth_injected();
		clear_all();
		if (only_nth) {
			printf("pffail: %s: fault %u: %s, %s%s\n", s->name, n,
			       hit ? "injected" : "not reached",
			       !answered ? "no answer" : a.unsent ? "not sent" :
			       a.error ? strerrorname_np(-a.error) ?: "?" : "ok",
			       answered && a.error && !a.extack ? " without extack" : "");
			return 0;
		}
		if (armed_id()) {
			printf("pffail: %s: fault %u: still armed after CLEAR\n", s->name, n);
			unclean++;
		}
		if (!hit) {
			/* The command ran to its end with no n-th fault point. */
			if (!answered || a.error) {
				printf("pffail: %s: without a fault: %s\n", s->name,
				       answered ? strerror(-a.error) : "no answer");
				return 1;
			}
			break;
		}
		injected++;
		if (!answered) {
			lost++;
			continue;
		}
		if (a.unsent) {
			unsent++;
			continue;
		}
		if (a.error) {
			refused++;
			if (!a.extack) {
				noextack++;
				if (verbose)
					printf("pffail: %s: fault %u: %s without extack\n",
					       s->name, n, strerrorname_np(-a.error) ?: "?");
			}
			if (-a.error > 0 && -a.error < MAX_ERRNO)
				by_errno[-a.error]++;
		}
	}
	if (n > max) {
		printf("pffail: %s: still injecting after %u faults (--max)\n", s->name, max);
		return 1;
	}
	for (e = 1; e < MAX_ERRNO && off < sizeof(errs) - 32; e++)
		if (by_errno[e])
			off += (size_t)snprintf(errs + off, sizeof(errs) - off, " %s:%u",
						strerrorname_np(e) ?: "?", by_errno[e]);
	printf("pffail: %s: %u faults injected, %u not sent, %u refused (%s), %u refused without extack, %u without answer, %u unclean\n",
	       s->name, injected, unsent, refused, off ? errs + 1 : "none", noextack, lost,
	       unclean);
	return unclean ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned int max = 2000;
	int i, ret = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--max") && i + 1 < argc)
			max = (unsigned int)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-v"))
			verbose = true;
		else if (!strcmp(argv[i], "--nth") && i + 1 < argc)
			only_nth = (unsigned int)strtoul(argv[++i], NULL, 10);
		else
			die("usage: pffail [--max N] [-v] [--nth N] SCENARIO... (eager lazy bpf ready replace clear get)");
	}
	if (i == argc)
		die("no scenario: eager lazy bpf ready replace clear get");
	nl_open();
	resolve_family();
	nth_open();
	clear_all();
	for (; i < argc; i++) {
		const struct scenario *s = NULL;
		size_t k;

		for (k = 0; k < sizeof(scenarios) / sizeof(scenarios[0]); k++)
			if (!strcmp(argv[i], scenarios[k].name))
				s = &scenarios[k];
		if (!s)
			die("unknown scenario %s", argv[i]);
		ret |= run(s, max);
	}
	return ret;
}
