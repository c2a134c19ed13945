// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of the kept copy of available_filter_functions
 * (tool/funcs_cache.c): the input is the file's bytes. Loaded under the
 * key its header names, a copy it accepts must be the rest of the file,
 * and stored again and reloaded it must read the same.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "funcs_cache.h"

static char path[64], again[64];

static void setup(void)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/fuzz_fcache.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		abort();
	close(fd);
	snprintf(again, sizeof(again), "%s.again", path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char head[80], *buf = NULL, *buf2 = NULL;
	size_t len = 0, len2 = 0, n;
	uint64_t key = 0;
	FILE *fp;

	if (!path[0])
		setup();
	fp = fopen(path, "w");
	if (!fp)
		abort();
	if (size && fwrite(data, 1, size, fp) != size)
		abort();
	fclose(fp);
	n = size < sizeof(head) - 1 ? size : sizeof(head) - 1;
	memcpy(head, data, n);
	head[n] = '\0';
	sscanf(head, "pktfilt-functions 1 %16" SCNx64, &key);
	if (pf_fcache_load(path, key, &buf, &len) == 0) {
		if (buf[len] != '\0' || len > size)
			abort();	/* NUL-terminated, within the file */
		if (pf_fcache_store(again, key, buf, len))
			abort();
		if (pf_fcache_load(again, key, &buf2, &len2) ||
		    len2 != len || memcmp(buf, buf2, len))
			abort();
		free(buf2);
		if (pf_fcache_load(again, key + 1, &buf2, &len2) != -ESTALE)
			abort();	/* another key */
		free(buf);
	}
	return 0;
}
