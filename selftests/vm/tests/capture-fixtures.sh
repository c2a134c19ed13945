# SPDX-License-Identifier: GPL-2.0
# Capture real function_graph traces of pktfilt for the parser's unit tests
# (selftests/unit/fixtures/). Run in the guest by the host script
# selftests/unit/fixtures/capture:
#
#   selftests/vm/run --kernel 6.12 -- sh selftests/vm/tests/capture-fixtures.sh
#
# Each capture is printed between two marker lines:
#
#   @@pktfilt-fixture begin NAME@@
#   ... the trace, as read from tracefs ...
#   @@pktfilt-fixture end NAME lines=N md5=HEX@@
#
# so that the host can check that the console carried it intact. A capture
# whose wanted feature (interleaved CPUs, an interrupt, lost events) did not
# show is retried a few times; if it never shows, the capture is printed
# anyway and "# capture NAME: ..." says what is missing. Ends with
# "vmtest: N passed, M failed" like the other VM scripts.
#
# POSIX sh (dash in the VM; busybox sh works too).

. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh

OUT=/tmp/trace.txt

# emit NAME: print $OUT between the markers.
emit() {
	echo "@@pktfilt-fixture begin $1@@"
	cat "$OUT"
	echo "@@pktfilt-fixture end $1 lines=$(wc -l <"$OUT" | tr -d ' ')" \
	     "md5=$(md5sum <"$OUT" | cut -d' ' -f1)@@"
}

# A graph line on one CPU while a graph on the other CPU is open.
interleaved() {
	awk '
	match($0, /^ *[0-9]+\) /) {
		cpu = substr($0, RSTART, RLENGTH) + 0
		if (last != "" && cpu != last && open[last] > 0)
			found = 1
		last = cpu
		if ($0 ~ /\) \{ *$/ || $0 ~ /\) \{ \/\*.*\*\/ *$/) open[cpu]++
		else if ($0 ~ /\|  *\}/) open[cpu]--
	}
	END { exit !found }' "$OUT"
}

# udp_case NAME COUNT SENT: a --count COUNT UDP filter, SENT datagrams.
udp_case() {
	insmod $PKTFILT_KO
	trace_start
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count "$2"
	ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 \
		--sport 4000 --dport 9000 --count "$3" -q
	sleep 1
	trace_stop
	rmmod pktfilt
}

# one_case NAME PROTO FAMILY: one packet of PROTO over IPv4 or IPv6.
one_case() {
	_name=$1 _p=$2 _f=$3
	if [ "$_f" = 4 ]; then _s=10.9.0.1 _d=10.9.0.2 _six=
	else _s=fd00::1 _d=fd00::2 _six=-6; fi
	insmod $PKTFILT_KO
	trace_start
	case $_p in
	icmp*)
		pktfilt set --proto "$_p" --saddr $_s --daddr $_d
		ip netns exec a pfsend icmp $_six --src $_s --dst $_d --count 1 -q
		;;
	*)
		pktfilt set --proto "$_p" --saddr $_s --daddr $_d --dport 9000
		ip netns exec a pfsend "$_p" $_six --src $_s --dst $_d \
			--sport 4000 --dport 9000 --count 1 -q
		;;
	esac
	sleep 1
	trace_stop
	rmmod pktfilt
	expect_eq "$_name: one event" "$(trace_events | wc -l | tr -d ' ')" 1
	emit "$_name"
}

# Two senders pinned to CPU 0 and CPU 1, --count 0 for a moment: the
# graphs of both CPUs interleave line by line in the trace.
cpus2_case() {
	_try=0
	while :; do
		_try=$((_try + 1))
		insmod $PKTFILT_KO
		trace_start
		pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 0
		ip netns exec a taskset -c 0 pfsend udp --dst 10.9.0.2 \
			--sport 4000 --dport 9000 --count 4 --interval-us 300 -q &
		ip netns exec a taskset -c 1 pfsend udp --dst 10.9.0.2 \
			--sport 4001 --dport 9000 --count 4 --interval-us 300 -q
		wait
		sleep 1
		pktfilt clear
		trace_stop
		rmmod pktfilt
		if interleaved; then
			ok "cpus2: graphs of two CPUs interleave (try $_try)"
			break
		fi
		if [ $_try -ge 4 ]; then
			fail "cpus2: graphs of two CPUs interleave"
			echo "# capture cpus2: no interleaving"
			break
		fi
	done
	emit cpus2
}

# funcgraph-irqs on: an interrupt taken while a handler is traced shows
# inside its graph (on x86 the first traced function of a timer interrupt
# is __sysvec_apic_timer_interrupt: the IDT entry is noinstr, so there is
# no "==========>" line). The timer ticks every 4 ms and a graph takes
# about 1 ms under TCG: a few tries are needed.
irqs_case() {
	_try=0
	while :; do
		_try=$((_try + 1))
		insmod $PKTFILT_KO
		trace_start
		echo 1 >$T/options/funcgraph-irqs
		pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 5
		ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 \
			--sport 4000 --dport 9000 --count 5 --interval-us 3000 -q
		sleep 1
		trace_stop
		echo 0 >$T/options/funcgraph-irqs
		rmmod pktfilt
		# Deeper than the root: inside a graph.
		if grep -Eq '==========>|\|     *__sysvec_' "$OUT"; then
			ok "irqs: an interrupt inside a graph (try $_try)"
			break
		fi
		if [ $_try -ge 8 ]; then
			fail "irqs: an interrupt inside a graph"
			echo "# capture irqs: no interrupt"
			break
		fi
	done
	emit irqs
}

# An 8 KB buffer per CPU, read live through trace_pipe while two CPUs trace
# packets: the writer overruns the reader, which reports lost events.
lost_case() {
	_try=0
	while :; do
		_try=$((_try + 1))
		insmod $PKTFILT_KO
		buffer_resize 8
		trace_start
		pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 0
		cat $T/trace_pipe >"$OUT" &
		_reader=$!
		ip netns exec a taskset -c 0 pfsend udp --dst 10.9.0.2 \
			--sport 4000 --dport 9000 --count 4 --interval-us 300 -q &
		ip netns exec a taskset -c 1 pfsend udp --dst 10.9.0.2 \
			--sport 4001 --dport 9000 --count 4 --interval-us 300 -q
		sleep 2
		pktfilt clear
		echo 0 >$T/tracing_on
		sleep 2		# let the reader drain the buffer
		kill $_reader
		wait
		echo nop >$T/current_tracer
		echo 0 >$T/events/pktfilt/enable
		echo >$T/set_ftrace_pid
		buffer_restore
		echo >$T/trace
		rmmod pktfilt
		if grep -q 'LOST' "$OUT" && grep -q pktfilt_packet "$OUT"; then
			ok "lost: the trace reports lost events (try $_try)"
			break
		fi
		if [ $_try -ge 4 ]; then
			fail "lost: the trace reports lost events"
			echo "# capture lost: no LOST line"
			break
		fi
	done
	emit lost
}

echo "kernel $(uname -r)"
topo_setup

udp_case udp-count3 3 10
expect_eq "udp-count3: three events" "$(trace_events | wc -l | tr -d ' ')" 3
emit udp-count3
one_case tcp4 tcp 4
one_case tcp6 tcp 6
one_case icmp icmp 4
one_case icmpv6 icmpv6 6
cpus2_case
irqs_case
lost_case

check_dmesg
summary
