# SPDX-License-Identifier: GPL-2.0
#
# make               module/pktfilt.ko for the running kernel, and tool/pktfilt
# make KDIR=DIR      the module against another kernel's headers, or your
#                    own tree (O=DIR: its build directory; a tree configured
#                    with clang gets LLVM=1): docs/install.md, "Your own kernel"
# make check, demo, soak, bench, deb: first scripts/host-deps TARGET, which
#                    installs what the target needs (as root, apt-get)
# make check         the host suites, then every VM group on Debian's 6.1,
#                    6.12 and sid's 7.2 and a smoke group on 5.10 and the
#                    PREEMPT_RT flavours, within 40 minutes (TESTING.md,
#                    "Tiers")
# make soak          every VM group on 5.10 and the PREEMPT_RT flavours, and
#                    the long counts: 200 unload cycles, 100,000 fuzzed
#                    messages per user, 20 runs of --count 1000, the host
#                    fuzzers for 30 minutes each, make bench-check, make
#                    check-debug and the groups on upstream 7.2 built as a
#                    developer does, clang kCFI+ThinLTO and gcc with the
#                    debug options (selftests/vm/own-kernel)
#                    (PKTFILT_SOAK_PARTS picks some: TESTING.md)
# make check-debug   the VM tests on Debian's 6.1 built with KASAN, lockdep,
#                    KMEMLEAK and DEBUG_ATOMIC_SLEEP (built once, cached), at
#                    the full counts
# make bench         what pktfilt costs, against function_graph and bpftrace, in
#                    the VM on 6.1, 6.12 and 7.2 (lazy and --eager trace, the
#                    lazy hold's latency): BENCHMARKS.md, bench.png; then the
#                    trace reader on the host (selftests/host/reader-bench:
#                    judged against md5sum's CPU time, not absolute MiB/s)
# make bench-check   (make soak) icount bench vs selftests/vm/bench-reference;
#                    make bench takes BENCH_MODE=icount|realtime BENCH_KERNELS=6.1
# make bench-reader  the trace reader's bench alone (no VM)
# make demo          one packet's graph among background traffic, in the VM
# make install       the module (into /lib/modules/KVER/extra) and the tool
# make deb           Debian packages pktfilt and pktfilt-dkms (debian/) built
#                    from a copy of the tracked files, into build/deb/
# make version-check VERSION, dkms.conf, module/main.c and debian/changelog
#                    agree (scripts/version-check)

KVER	?= $(shell uname -r)
KDIR	?= /lib/modules/$(KVER)/build
PREFIX	?= /usr/local
PWD	:= $(CURDIR)

all: module tool

# Your own tree: KDIR=its source, O=its build directory if it has one. A
# tree configured with clang (CONFIG_CC_IS_CLANG) builds its modules with
# LLVM=1, as it was built: given here unless the command line says LLVM=.
PF_KOBJ := $(or $(O),$(KDIR))
PF_CLANG := $(shell grep -qs '^CONFIG_CC_IS_CLANG=y' $(PF_KOBJ)/include/config/auto.conf $(PF_KOBJ)/.config && echo y)
PF_KMAKE = $(MAKE) -C $(KDIR) $(if $(O),O=$(O)) M=$(PWD) $(if $(and $(PF_CLANG),$(if $(LLVM),,y)),LLVM=1)

module:
	@test -d "$(KDIR)" || { echo "no kernel headers at $(KDIR): install linux-headers-$(KVER) or pass KDIR=" >&2; exit 1; }
	@test -f "$(PF_KOBJ)/include/config/auto.conf" || { echo "$(PF_KOBJ) is not a configured kernel tree (no include/config/auto.conf): run make modules_prepare there$(if $(O),, or pass its build directory as O=)" >&2; exit 1; }
	@if [ -n "$(PF_CLANG)" ] && [ -z "$(LLVM)" ]; then echo "$(PF_KOBJ) was configured with clang: building with LLVM=1"; fi
	$(PF_KMAKE) modules

tool:
	$(MAKE) -C tool

# What a target needs on this machine, installed first (scripts/host-deps:
# Debian packages as root, and the kernels the VM tests boot).
HOST_DEPS = scripts/host-deps

check:
	$(HOST_DEPS) check
	selftests/check

soak:
	$(HOST_DEPS) soak
	selftests/soak

# Hours under TCG, so not part of make check (TESTING.md, "make check-debug");
# part of make soak.
check-debug:
	$(HOST_DEPS) check-debug
	selftests/vm/debug-kernel
	PKTFILT_KERNELS=6.1-debug PKTFILT_RT_KERNELS= PKTFILT_SMOKE_KERNELS= PKTFILT_ARM64_KERNELS= PKTFILT_CHECK_HOST=0 \
	PKTFILT_COUNTS=$${PKTFILT_COUNTS:-soak} \
	PKTFILT_VM_TIMEOUT=$${PKTFILT_VM_TIMEOUT:-7200} PKTFILT_VM_MEM=$${PKTFILT_VM_MEM:-2048} \
		selftests/check
	selftests/vm/fault-soak

bench-check:
	$(HOST_DEPS) bench
	selftests/vm/bench-check

demo:
	$(HOST_DEPS) demo
	selftests/vm/demo

bench:
	$(HOST_DEPS) bench
	BENCH_MODE="$(BENCH_MODE)" BENCH_KERNELS="$(BENCH_KERNELS)" selftests/vm/bench
	if [ -x selftests/host/reader-bench ]; then selftests/host/reader-bench; fi

bench-reader:
	selftests/host/reader-bench

modules_install: module
	$(PF_KMAKE) modules_install

install: modules_install
	$(MAKE) -C tool install PREFIX=$(PREFIX)

version-check:
	scripts/version-check

# dpkg-buildpackage writes its results into the parent of the tree it
# builds: build it in a copy of the tracked files (and the untracked ones
# not ignored), build/deb/pktfilt-VERSION, so the results land in build/deb/
# and this tree stays clean, with the native source package (.dsc and
# .tar.xz) but no -dbgsym package: build/deb/*.deb is the two packages
# (DEB_BUILD_OPTIONS adds to noautodbgsym). Needs debhelper, dh-dkms and
# the build dependencies in debian/control (dpkg-checkbuilddeps names any
# missing).
PF_DEB_VERSION := $(shell cat VERSION 2>/dev/null)
PF_DEB_TREE := build/deb/pktfilt-$(PF_DEB_VERSION)
deb: version-check
	$(HOST_DEPS) deb
	@git rev-parse --is-inside-work-tree >/dev/null 2>&1 || \
		{ echo "make deb copies the files git tracks: run it in a git checkout" >&2; exit 1; }
	rm -rf build/deb
	mkdir -p $(PF_DEB_TREE)
	git ls-files -z --cached --others --exclude-standard | \
		tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C $(PF_DEB_TREE)
	cd $(PF_DEB_TREE) && DEB_BUILD_OPTIONS="noautodbgsym $$DEB_BUILD_OPTIONS" \
		dpkg-buildpackage -us -uc
	@ls -l build/deb/*.deb

# make deb for arm64, cross-built here (selftests/lib/arm64-deb): the arm64
# pktfilt package and pktfilt-dkms into build/deb-arm64/, the arm64
# libraries from Debian's packages unpacked under build/arm64/ (nothing
# installed on this machine).
deb-arm64: version-check
	$(HOST_DEPS) deb-arm64
	selftests/lib/arm64-deb

# Not kbuild's "make M=$(PWD) clean": that deletes every *.ko and *.o below
# the directory, the VM kernel cache and the debug kernel's tree in build/
# among them.
clean:
	rm -f module/*.o module/*.ko module/*.mod module/*.mod.c \
		module/.*.cmd module/modules.order \
		Module.symvers modules.order .Module.symvers.cmd .modules.order.cmd
	$(MAKE) -C tool clean
	$(MAKE) -C selftests/unit clean

.PHONY: all module tool check soak check-debug bench bench-check bench-reader demo modules_install install clean \
	version-check deb deb-arm64
