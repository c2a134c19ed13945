# SPDX-License-Identifier: GPL-2.0
#
# html_page.c from html/page.css and html/page.js: each as one C string,
# pf_html_css and pf_html_js, for render_html.c. The generated file is
# committed (the unit tests and fuzzers compile tool/*.c as they are);
# make remakes it when a source is newer.
#
#   awk -f mkpage.awk html/page.css html/page.js > html_page.c
#
# POSIX awk. The script must not hold "</script" or "<!--" (it is inline
# in the page): refused here.
BEGIN {
	print "/* SPDX-License-Identifier: GPL-2.0 */"
	print "/* Made by mkpage.awk from html/page.css and html/page.js: edit those. */"
	n = 0
}
FNR == 1 {
	if (n++)
		print ";"
	name = FILENAME ~ /\.css$/ ? "pf_html_css" : "pf_html_js"
	print "const char " name "[] ="
	print "\"\""
}
{
	if (tolower($0) ~ /<\/script|<!--/) {
		print FILENAME ":" FNR ": </script or <!-- in the page's script" > "/dev/stderr"
		bad = 1
	}
	# char by char: gsub()'s backslashes differ between awks
	line = ""
	for (i = 1; i <= length($0); i++) {
		c = substr($0, i, 1)
		if (c == "\\" || c == "\"")
			line = line "\\" c
		else
			line = line c
	}
	print "\"" line "\\n\""
}
END {
	print ";"
	if (bad)
		exit 1
}
