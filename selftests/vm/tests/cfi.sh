# SPDX-License-Identifier: GPL-2.0
# kCFI can fail: on a kernel with CONFIG_CFI (selftests/vm/own-kernel
# --variant clang), pf_cfitest.ko's indirect call through a pointer of the
# right type passes, and through a pointer of the wrong type is stopped
# with a "CFI failure at pf_cfitest_init+..." report naming
# pf_cfitest_target. Proof that the clean dmesg of the other groups on that
# kernel means something. Its own boot, last thing of it (the stopped insmod
# leaves pf_cfitest half-loaded):
#   selftests/vm/run --kernel 7.2-clang -- sh selftests/vm/tests/cfi.sh
. /pktfilt/selftests/vm/lib.sh

CFITEST_KO=/pktfilt/kmod/pf_cfitest.ko
echo "kernel $(uname -r)"
if ! zcat /proc/config.gz 2>/dev/null | grep -qx 'CONFIG_CFI=y'; then
	# A kernel without kCFI: nothing to prove (6.1 and 7.2 of Debian
	# are built with gcc).
	ok "cfi: # SKIP this kernel has no CONFIG_CFI"
	summary
	exit $?
fi
[ -f $CFITEST_KO ] || { fail "cfi: no $CFITEST_KO"; summary; exit 1; }
check_dmesg "dmesg clean before the calls"

if insmod $CFITEST_KO; then
	ok "cfi: a call through the right type passes"
else
	fail "cfi: insmod pf_cfitest (right type) failed"
fi
dmesg | grep -q 'pf_cfitest: call through the right type: 42' &&
	ok "cfi: the right call returned 42" ||
	fail "cfi: the right call returned 42" "$(dmesg | grep pf_cfitest | tail -3)"
check_dmesg "cfi: no report for the right call"
rmmod pf_cfitest || fail "cfi: rmmod pf_cfitest"

# The wrong type: kCFI's trap kills insmod (a BUG without CFI_PERMISSIVE).
insmod $CFITEST_KO mismatch=1
rc=$?
echo "# insmod pf_cfitest.ko mismatch=1: exit $rc"
[ $rc -ne 0 ] && ok "cfi: insmod with the wrong call did not succeed" ||
	fail "cfi: insmod with the wrong call did not succeed" "exit 0"
report=$(dmesg | grep 'CFI failure at')
printf '%s\n' "$report" | sed 's/^/# /'
case $report in
*"CFI failure at pf_cfitest_init+"*"target: pf_cfitest_target+0x0/"*)
	ok "cfi: the wrong call is reported: CFI failure at pf_cfitest_init, target pf_cfitest_target" ;;
*"CFI failure at pf_cfitest_init+"*)
	ok "cfi: the wrong call is reported: CFI failure at pf_cfitest_init (no target information)" ;;
*) fail "cfi: no 'CFI failure at pf_cfitest_init' report" "$(dmesg | tail -20 | tr '\n' '|')" ;;
esac
if dmesg | grep -q 'no kCFI check stopped it'; then
	fail "cfi: the wrong call ran"
else
	ok "cfi: the wrong call did not run"
fi
# The expected report (BUG, Oops, Call Trace), shown above, is the test's
# own: cleared, so that the run's dmesg check still sees anything else.
_bad=$(dmesg | grep -E 'BUG|WARNING|Oops|Call Trace|CFI failure' |
	grep -vE 'CFI failure at pf_cfitest_init|Oops: invalid opcode|Call Trace|kernel BUG at|BUG: unable' )
if [ -n "$_bad" ]; then
	printf '%s\n' "$_bad" | sed 's/^/# /'
	fail "cfi: nothing but the report in dmesg"
else
	ok "cfi: nothing but the report in dmesg"
fi
echo "# dmesg from the report on:"
dmesg | sed -n '/CFI failure at/,$p' | head -40 | sed 's/^/# /'
dmesg -C
VMTEST_DMESG_SEEN=0
summary
