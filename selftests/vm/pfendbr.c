// SPDX-License-Identifier: GPL-2.0
/*
 * pfendbr - does each named kernel symbol start with ENDBR64?
 *
 *   pfendbr SYMBOL...
 *   pfendbr --bytes N SYMBOL    its first N bytes (at most 32), in hex
 *
 * Looks each SYMBOL up in /proc/kallsyms (a module's symbol too: the first
 * line of that name) and reads its first 4 bytes from /proc/kcore. Prints
 * one line per symbol, "SYMBOL endbr", "SYMBOL no-endbr" or "SYMBOL
 * missing", and exits 0, or 2 if kallsyms or kcore cannot be read (root
 * with kptr_restrict allowing addresses is needed). On an IBT kernel an
 * indirect call must land on ENDBR64 (f3 0f 1e fa); QEMU TCG does not
 * enforce it, so the VM tests read the bytes instead.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The address of each of the @n @names into @addr (0: not found), from one
 * pass of /proc/kallsyms (under TCG a pass takes seconds): the first line
 * of each name.
 */
static void lookup(char **names, int n, unsigned long long *addr)
{
	char line[512], sym[256], type;
	unsigned long long a;
	int left = n;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f) {
		perror("pfendbr: /proc/kallsyms");
		exit(2);
	}
	memset(addr, 0, n * sizeof(*addr));
	while (left && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) != 3)
			continue;
		for (int i = 0; i < n; i++) {
			if (addr[i] || strcmp(sym, names[i]))
				continue;
			if (!a) {
				fprintf(stderr, "pfendbr: kallsyms hides addresses\n");
				exit(2);
			}
			addr[i] = a;
			left--;
		}
	}
	fclose(f);
}

/* Reads @n bytes at kernel address @addr from /proc/kcore; 0 on success. */
static int read_kcore(int fd, const Elf64_Ehdr *eh, unsigned long long addr,
		      unsigned char *out, size_t n)
{
	for (int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), eh->e_phoff + i * sizeof(ph)) !=
		    sizeof(ph))
			return -1;
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr ||
		    addr + n > ph.p_vaddr + ph.p_filesz)
			continue;
		return pread(fd, out, n, ph.p_offset + (addr - ph.p_vaddr)) ==
		       (ssize_t)n ? 0 : -1;
	}
	return -1;
}

int main(int argc, char **argv)
{
	static const unsigned char endbr[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	Elf64_Ehdr eh;
	int fd = open("/proc/kcore", O_RDONLY);

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
		perror("pfendbr: /proc/kcore");
		return 2;
	}
	if (argc == 4 && !strcmp(argv[1], "--bytes")) {
		size_t n = strtoul(argv[2], NULL, 0);
		unsigned long long addr;
		unsigned char b[32];

		lookup(&argv[3], 1, &addr);

		if (!n || n > sizeof(b) || !addr ||
		    read_kcore(fd, &eh, addr, b, n)) {
			fprintf(stderr, "pfendbr: %s: cannot read %zu bytes\n",
				argv[3], n);
			return 2;
		}
		printf("%s", argv[3]);
		for (size_t i = 0; i < n; i++)
			printf(" %02x", b[i]);
		printf("\n");
		return 0;
	}
	unsigned long long *addrs = calloc(argc, sizeof(*addrs));

	if (!addrs) {
		perror("pfendbr");
		return 2;
	}
	lookup(&argv[1], argc - 1, &addrs[1]);
	for (int i = 1; i < argc; i++) {
		unsigned long long addr = addrs[i];
		unsigned char b[4];

		if (!addr) {
			printf("%s missing\n", argv[i]);
			continue;
		}
		if (read_kcore(fd, &eh, addr, b, 4)) {
			fprintf(stderr, "pfendbr: %s at %llx: not in /proc/kcore\n",
				argv[i], addr);
			return 2;
		}
		printf("%s %s\n", argv[i], memcmp(b, endbr, 4) ? "no-endbr" : "endbr");
	}
	free(addrs);
	close(fd);
	return 0;
}
