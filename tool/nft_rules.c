// SPDX-License-Identifier: GPL-2.0
/*
 * The text of the nftables rules a trace's verdicts name (pktfilt_nft
 * events, module/nft.c), from the ruleset as it is when the trace is
 * captured: rule handles are reused once a rule is deleted, so `pktfilt
 * trace` writes the text into the saved trace (rule=, last on the event's
 * line), and a later report needs no ruleset.
 *
 * The ruleset is listed by libnftables, nftables' own library, in each
 * event's network namespace (netns=, an inode: found under /run/netns or
 * /proc/PID/ns/net), as `nft --handle --stateless list ruleset` prints it,
 * and a rule is found there by its table (family, name), chain and
 * handle: the "# handle N" nft puts at the end of each rule's line. The
 * library is opened with dlopen(): without it (libnftables1 is not
 * installed) the verdicts are there without their rules' text.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* setns() */
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <nftables/libnftables.h>

#include "nft_rules.h"

/* libnftables' functions, from dlopen(). */
static struct {
	bool tried;
	void *lib;
	__typeof__(&nft_ctx_new) ctx_new;
	__typeof__(&nft_ctx_free) ctx_free;
	__typeof__(&nft_ctx_output_set_flags) set_flags;
	__typeof__(&nft_ctx_buffer_output) buffer_output;
	__typeof__(&nft_ctx_buffer_error) buffer_error;
	__typeof__(&nft_ctx_get_output_buffer) output_buffer;
	__typeof__(&nft_run_cmd_from_buffer) run;
} nft;

static bool nft_open(void)
{
	if (nft.tried)
		return nft.lib;
	nft.tried = true;
	nft.lib = dlopen("libnftables.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!nft.lib)
		return false;
	nft.ctx_new = (__typeof__(nft.ctx_new))dlsym(nft.lib, "nft_ctx_new");
	nft.ctx_free = (__typeof__(nft.ctx_free))dlsym(nft.lib, "nft_ctx_free");
	nft.set_flags = (__typeof__(nft.set_flags))dlsym(nft.lib,
						     "nft_ctx_output_set_flags");
	nft.buffer_output = (__typeof__(nft.buffer_output))dlsym(nft.lib,
							     "nft_ctx_buffer_output");
	nft.buffer_error = (__typeof__(nft.buffer_error))dlsym(nft.lib,
							   "nft_ctx_buffer_error");
	nft.output_buffer = (__typeof__(nft.output_buffer))dlsym(nft.lib,
							     "nft_ctx_get_output_buffer");
	nft.run = (__typeof__(nft.run))dlsym(nft.lib, "nft_run_cmd_from_buffer");
	if (!nft.ctx_new || !nft.ctx_free || !nft.set_flags ||
	    !nft.buffer_output || !nft.buffer_error || !nft.output_buffer ||
	    !nft.run) {
		dlclose(nft.lib);
		nft.lib = NULL;
	}
	return nft.lib;
}

/* `nft -a -s list ruleset` in this namespace: a new string, or NULL. */
static char *nft_list(void)
{
	struct nft_ctx *ctx = nft.ctx_new(NFT_CTX_DEFAULT);
	char *text = NULL;

	if (!ctx)
		return NULL;
	nft.set_flags(ctx, NFT_CTX_OUTPUT_HANDLE | NFT_CTX_OUTPUT_STATELESS);
	if (!nft.buffer_output(ctx) && !nft.buffer_error(ctx) &&
	    !nft.run(ctx, "list ruleset")) {
		const char *out = nft.output_buffer(ctx);

		text = strdup(out ? out : "");
	}
	nft.ctx_free(ctx);
	return text;
}

/* An open fd of the network namespace of inode @ino, or -1. */
static int netns_open(unsigned long ino)
{
	static const char *const dirs[] = { "/run/netns", "/proc" };
	char path[PATH_MAX];
	struct stat st;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;

		if (!d)
			continue;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			if (i)
				snprintf(path, sizeof(path), "/proc/%s/ns/net",
					 e->d_name);
			else
				snprintf(path, sizeof(path), "/run/netns/%s",
					 e->d_name);
			if (stat(path, &st) || st.st_ino != ino)
				continue;
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				closedir(d);
				return fd;
			}
		}
		closedir(d);
	}
	return -1;
}

/* The ruleset of namespace @ino, listed: a new string, or NULL. */
static char *ruleset_of(unsigned long ino)
{
	struct stat st;
	char *text;
	int self, fd;

	if (!stat("/proc/self/ns/net", &st) && st.st_ino == ino)
		return nft_list();
	fd = netns_open(ino);
	if (fd < 0)
		return NULL;
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0 || setns(fd, CLONE_NEWNET)) {
		if (self >= 0)
			close(self);
		close(fd);
		return NULL;
	}
	text = nft_list();
	/* Back home: if that fails, later lookups are in the wrong place. */
	if (setns(self, CLONE_NEWNET)) {
		free(text);
		text = NULL;
	}
	close(self);
	close(fd);
	return text;
}

/* The name at @s, "quoted" (nft quotes names with spaces) or not, into @buf. */
static const char *word(const char *s, char *buf, size_t len)
{
	size_t n;

	if (s[0] == '"') {
		s++;
		n = strcspn(s, "\"\n");
	} else {
		n = strcspn(s, " \t{\n");
	}
	snprintf(buf, len, "%.*s", (int)n, s);
	return buf;
}

/* Past the name at @s, quoted or not, and the space after it. */
static const char *past_word(const char *s)
{
	size_t n = s[0] == '"' ? 2 + strcspn(s + 1, "\"\n") :
		   strcspn(s, " \t{\n");

	n = n < strlen(s) ? n : strlen(s);
	return s[n] == ' ' ? s + n + 1 : s + n;
}

int pf_nft_rule_find(const char *ruleset, const char *family,
		     const char *table, const char *chain, uint64_t handle,
		     char *buf, size_t len)
{
	char fam[16] = "", tab[256] = "", ch[256] = "";
	bool in_chain = false;
	const char *line = ruleset, *end;

	for (; line && *line; line = end ? end + 1 : NULL) {
		const char *s = line, *h;
		size_t tabs = 0, n;
		uint64_t v;
		char *e;

		end = strchr(line, '\n');
		n = end ? (size_t)(end - line) : strlen(line);
		while (tabs < n && s[tabs] == '\t')
			tabs++;
		s += tabs;
		n -= tabs;
		if (tabs == 0 && n > 6 && !strncmp(s, "table ", 6)) {
			word(s + 6, fam, sizeof(fam));
			word(past_word(s + 6), tab, sizeof(tab));
			in_chain = false;
		} else if (tabs == 1) {
			in_chain = n > 6 && !strncmp(s, "chain ", 6);
			if (in_chain)
				word(s + 6, ch, sizeof(ch));
		} else if (tabs == 2 && in_chain && !strcmp(fam, family) &&
			   !strcmp(tab, table) && !strcmp(ch, chain)) {
			/* "RULE # handle N" */
			for (h = s + n; h > s && h[-1] != '#'; h--)
				;
			if (h == s || strncmp(h, " handle ", 8))
				continue;
			errno = 0;
			v = strtoull(h + 8, &e, 10);
			if (errno || e != s + n || v != handle)
				continue;
			h--;
			while (h > s && h[-1] == ' ')
				h--;
			snprintf(buf, len, "%.*s", (int)(h - s), s);
			return 0;
		}
	}
	return -ENOENT;
}

/* The value of " KEY=VALUE" in @line, into @buf; false if none. */
static bool field(const char *line, const char *key, char *buf, size_t len)
{
	char pat[32];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	if (!p)
		return false;
	p += strlen(pat);
	snprintf(buf, len, "%.*s", (int)strcspn(p, " \n"), p);
	return true;
}

struct ruleset {
	unsigned long netns;
	char *text;		/* NULL: not to be had */
};

int pf_nft_annotate(FILE *in, FILE *out)
{
	struct ruleset *sets = NULL;
	size_t nsets = 0, cap = 0, i;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t n;
	int err = 0;

	while ((n = getline(&line, &lcap, in)) > 0) {
		char fam[16], tab[256], ch[256], num[32], ino[32], rule[4096];
		const char *text = NULL, *tail;
		unsigned long netns;
		uint64_t handle;

		tail = strstr(line, "pktfilt_nft: ");
		if (!tail || strstr(tail, " rule=") ||
		    !field(tail, "family", fam, sizeof(fam)) ||
		    !field(tail, "table", tab, sizeof(tab)) ||
		    !field(tail, "chain", ch, sizeof(ch)) ||
		    !field(tail, "handle", num, sizeof(num)) ||
		    !field(tail, "netns", ino, sizeof(ino)) ||
		    !(handle = strtoull(num, NULL, 10)) || !nft_open()) {
			if (fwrite(line, 1, (size_t)n, out) != (size_t)n)
				err = -EIO;
			continue;
		}
		netns = strtoul(ino, NULL, 10);
		for (i = 0; i < nsets && sets[i].netns != netns; i++)
			;
		if (i == nsets) {
			if (nsets == cap) {
				struct ruleset *t;

				cap = cap ? 2 * cap : 4;
				t = realloc(sets, cap * sizeof(*sets));
				if (!t) {
					err = -ENOMEM;
					break;
				}
				sets = t;
			}
			sets[nsets].netns = netns;
			sets[nsets++].text = ruleset_of(netns);
		}
		if (sets[i].text &&
		    !pf_nft_rule_find(sets[i].text, fam, tab, ch, handle, rule,
				      sizeof(rule)))
			text = rule;
		if (text) {
			/* Before the closing comment mark and the newline, or at the end. */
			size_t k = (size_t)n;
			char *c = strstr(line, " */");

			if (c && (size_t)(c - line) < k)
				k = (size_t)(c - line);
			if (fprintf(out, "%.*s rule=%s%s", (int)k, line, text,
				    line + k) < 0)
				err = -EIO;
		} else if (fwrite(line, 1, (size_t)n, out) != (size_t)n) {
			err = -EIO;
		}
	}
	if (ferror(in))
		err = -EIO;
	for (i = 0; i < nsets; i++)
		free(sets[i].text);
	free(sets);
	free(line);
	return err;
}
