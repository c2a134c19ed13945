# SPDX-License-Identifier: GPL-2.0
# common/pktfilt.config -> kconfig_table.c: each "# need: WHY" or
# "# want: WHY" line and the CONFIG_NAME=y line after it, as a row of
# pf_kconfig[] (kcheck.h). A tag without its option line is an error.
BEGIN {
	print "/* Made from common/pktfilt.config by mkkconfig.awk: do not edit. */"
	print "#include \"kcheck.h\""
	print ""
	print "const struct pf_kconfig pf_kconfig[] = {"
	n = 0
}
tag != "" {
	if (!match($0, /^CONFIG_[A-Z0-9_]+=/)) {
		printf "%s:%d: no CONFIG_ line after \"# %s:\"\n", FILENAME, FNR, tag > "/dev/stderr"
		exit 1
	}
	name = substr($0, 1, RLENGTH - 1)
	gsub(/\\/, "\\\\", why)
	gsub(/"/, "\\\"", why)
	printf "\t{ \"%s\", %d, \"%s\" },\n", name, tag == "need", why
	n++
	tag = ""
	next
}
/^# (need|want): / {
	tag = substr($0, 3, 4)
	why = substr($0, 9)
}
END {
	if (tag != "")
		exit 1
	print "};"
	print ""
	printf "const size_t pf_kconfig_n = %d;\n", n
}
