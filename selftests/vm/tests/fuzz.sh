# SPDX-License-Identifier: GPL-2.0
# The generic netlink fuzzer (selftests/vm/pffuzz.c) against the pktfilt
# family, as root and as an unprivileged user; then the module must still
# work: show, consistent counters, one real filter giving exactly one graph,
# rmmod, a clean dmesg.
# Sourced (FUZZ_SOURCED=1, after lib.sh, common.sh and core.sh, with
# topo_setup done) for fuzz_cases; also runnable alone:
#
#	selftests/vm/run --kernel 6.12 --timeout 900 -- sh selftests/vm/tests/fuzz.sh
#
# Knobs (environment): FUZZ_COUNT (messages per run, 100000: make soak's;
# make check passes 20000, selftests/check), FUZZ_SEED
# (default: a new seed per run; pffuzz prints it, and the same seed sends
# the same messages again).

# fuzz_run NAME [PFFUZZ ARGS...]: one pffuzz run, ok or fail from its exit
# status; its summary line is printed and left in $FUZZ_LINE.
fuzz_run() {
	_name=$1
	shift
	_t0=$(date +%s)
	pffuzz --count "${FUZZ_COUNT:-100000}" ${FUZZ_SEED:+--seed "$FUZZ_SEED"} "$@" \
		> /tmp/pffuzz.out 2>&1
	_rc=$?
	FUZZ_LINE=$(grep '^pffuzz: sent=' /tmp/pffuzz.out)
	echo "# $_name: $(($(date +%s) - _t0)) s"
	echo "$FUZZ_LINE"
	if [ "$_rc" -eq 0 ]; then
		ok "$_name: no violation, no missing answer"
	else
		# The family, the violations in detail, the summary.
		grep -v '^pffuzz: sent=' /tmp/pffuzz.out | head -80 | sed 's/^/# /'
		fail "$_name" "pffuzz exited $_rc"
	fi
}

# fuzz_field NAME: a counter of the last summary line ("" if absent).
fuzz_field() {
	echo "$FUZZ_LINE" | sed -n "s/.* $1=\([0-9][0-9]*\).*/\1/p"
}

fuzz_cases() {
	insmod "$PKTFILT_KO" || { fail "fuzz: insmod"; return; }
	# set_ftrace_pid set: the fuzzer's valid SETs really arm.
	trace_start

	fuzz_run "fuzz: as root"
	if [ "$(fuzz_field set_ok)" -gt 0 ] 2>/dev/null; then
		ok "fuzz: as root, valid SETs armed ($(fuzz_field set_ok) SET, $(fuzz_field clear_ok) CLEAR)"
	else
		fail "fuzz: as root, valid SETs armed" "set_ok=$(fuzz_field set_ok)"
	fi

	fuzz_run "fuzz: as uid 65534" --uid 65534
	expect_eq "fuzz: as uid 65534, no SET or CLEAR succeeded" \
		"set_ok=$(fuzz_field set_ok) clear_ok=$(fuzz_field clear_ok)" "set_ok=0 clear_ok=0"
	if [ "$(fuzz_field eperm)" -gt 0 ] 2>/dev/null; then
		ok "fuzz: as uid 65534, SET/CLEAR refused with EPERM ($(fuzz_field eperm) times)"
	else
		fail "fuzz: as uid 65534, SET/CLEAR refused with EPERM" "eperm=$(fuzz_field eperm)"
	fi

	# Still sane: clear, show, counters.
	check "fuzz: then pktfilt clear" pktfilt clear
	if out=$(pktfilt show 2>&1) && echo "$out" | grep -q '^state: *idle'; then
		ok "fuzz: then pktfilt show: idle"
	else
		fail "fuzz: then pktfilt show: idle" "$(echo "$out" | tr '\n' ';')"
	fi
	# An expression's limit is 1024 characters, the NUL not counted, in
	# the tool, the policy and the parser alike (the parser refused the
	# 1024 characters the policy let through).
	e=$(printf 'udp%1021s' '')
	if out=$(pktfilt set "$e" 2>&1); then
		ok "fuzz: then an expression of ${#e} characters arms"
	else
		fail "fuzz: then an expression of ${#e} characters arms" "$out"
	fi
	pktfilt clear
	seen=$(pf_stat seen) matched=$(pf_stat matched) traced=$(pf_stat traced)
	if [ -n "$seen" ] && [ -n "$matched" ] && [ -n "$traced" ] &&
	   [ "$traced" -le "$matched" ] && [ "$matched" -le "$seen" ]; then
		ok "fuzz: counters consistent (traced $traced <= matched $matched <= seen $seen)"
	else
		fail "fuzz: counters consistent" "seen=$seen matched=$matched traced=$traced"
	fi

	# A real filter still gives exactly its one graph.
	trace_stop
	trace_start
	if pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 1; then
		ok "fuzz: then pktfilt set"
	else
		fail "fuzz: then pktfilt set"
	fi
	send a udp 4 10.9.0.1 10.9.0.2 4000 9001 50
	send a tcp 4 10.9.0.1 10.9.0.2 4000 9000 5
	send a udp 4 10.9.0.1 10.9.0.2 4000 9000 1
	send a udp 4 10.9.0.1 10.9.0.2 4000 9000 20
	sleep 1
	trace_stop
	expect_graphs "fuzz: then one matching packet" udp_rcv 1
	expect_eq "fuzz: then the traced counter" "$(pf_stat traced)" $((traced + 1))
	if rmmod pktfilt; then ok "fuzz: then rmmod"; else fail "fuzz: then rmmod"; fi
	check_dmesg "fuzz: dmesg clean"
}

if [ -z "${FUZZ_SOURCED:-}" ]; then
	. /pktfilt/selftests/vm/lib.sh
	. /pktfilt/selftests/vm/tests/common.sh
	. /pktfilt/selftests/vm/tests/core.sh
	echo "kernel $(uname -r)"
	topo_setup
	fuzz_cases
	# No trace_teardown: the VM ends here, and every tracer switch is a
	# chance of the emulator fault of selftests/vm/README.md.
	check_dmesg
	summary
fi
