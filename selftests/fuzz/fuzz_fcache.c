// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of the kept copy of available_filter_functions
 * (tool/funcs_cache.c): the input is the file's bytes, loaded under a
 * state of two segments ("vmlinux" 0xab, "veth" 0xcd). A list it accepts
 * must be NUL-terminated and no longer than the file; kept again (merged
 * with the hostile file's other segments) and reloaded it must read the
 * same, and under a key it does not name it is refused (-ESTALE).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "funcs_cache.h"

static char path[64];

static void setup(void)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/fuzz_fcache.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		abort();
	close(fd);
}

/*
 * Whether a line of @path names segment @name under @key: the copy may
 * then hold it (the hostile file's own, kept by the store), and a load
 * under that key may succeed. A body line that looks the same only makes
 * the caller try another key.
 */
static bool names_seg(const char *path, const char *name, uint64_t key)
{
	char want[64], tail[80], line[256];
	bool found = false;
	size_t n, t, l;
	FILE *fp;

	n = (size_t)snprintf(want, sizeof(want), "segment %016" PRIx64 " ", key);
	t = (size_t)snprintf(tail, sizeof(tail), " %s\n", name);
	fp = fopen(path, "r");
	if (!fp)
		abort();
	while (!found && fgets(line, sizeof(line), fp)) {
		l = strlen(line);
		found = !strncmp(line, want, n) && l >= n + t &&
			!strcmp(line + l - t, tail);
	}
	fclose(fp);
	return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pf_fcache_seg seg[] = { { "vmlinux", 0xab }, { "veth", 0xcd } };
	struct pf_fcache_state st = { seg, 2, -1 };
	char *buf = NULL, *buf2 = NULL;
	size_t len = 0, len2 = 0;
	FILE *fp;

	if (!path[0])
		setup();
	fp = fopen(path, "w");
	if (!fp)
		abort();
	if (size && fwrite(data, 1, size, fp) != size)
		abort();
	fclose(fp);
	if (pf_fcache_load(path, &st, &buf, &len))
		return 0;
	if (buf[len] != '\0' || len > size)
		abort();	/* NUL-terminated, within the file */
	/* Over the hostile file: its other segments are merged in. */
	if (!pf_fcache_store(path, &st, buf, len)) {
		if (pf_fcache_load(path, &st, &buf2, &len2) || len2 != len ||
		    memcmp(buf, buf2, len))
			abort();
		free(buf2);
	}
	do
		seg[1].key++;
	while (names_seg(path, seg[1].name, seg[1].key));
	if (pf_fcache_load(path, &st, &buf2, &len2) != -ESTALE)
		abort();	/* a key the copy does not name */
	free(buf);
	return 0;
}
