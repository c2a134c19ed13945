// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of the kept copy of available_filter_functions
 * (tool/funcs_cache.c): the input is the file's bytes, loaded under a
 * state of two segments ("vmlinux" 0xab, "veth" 0xcd). A list it accepts
 * must be NUL-terminated and no longer than the file; kept again (merged
 * with the hostile file's other segments) and reloaded it must read the
 * same, and under another key it is refused (-ESTALE).
 */
#include <errno.h>
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
	seg[1].key++;
	if (pf_fcache_load(path, &st, &buf2, &len2) != -ESTALE)
		abort();	/* another key */
	free(buf);
	return 0;
}
