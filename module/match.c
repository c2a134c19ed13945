// SPDX-License-Identifier: GPL-2.0
/*
 * The predicate matcher is shared with the tool and the unit tests, so it
 * lives in common/; it is compiled here, as an object of its own, so that
 * Kbuild builds nothing outside module/ and CFLAGS_REMOVE_match.o (Kbuild)
 * keeps ftrace call sites out of it.
 */
#include "../common/match.c"
