// SPDX-License-Identifier: GPL-2.0
/*
 * pf_cfitest: proof that a kernel's kCFI check can fail (CONFIG_CFI, clang's
 * -fsanitize=kcfi), for selftests/vm/tests/cfi.sh. On load it calls
 * pf_cfitest_target(), a function of type long (long), through a pointer of
 * that type; with mismatch=1 it calls it through a pointer of another type,
 * int (void *), which a kCFI kernel stops with a "CFI failure at
 * pf_cfitest_init+..." report (a BUG: insmod dies, the module stays
 * half-loaded; without CFI_PERMISSIVE a developer's kernel does the same to
 * any such call pktfilt would make). The pointer is hidden from the
 * compiler (OPTIMIZER_HIDE_VAR), so that the call stays indirect, checked.
 * Test-only: built beside pktfilt.ko by selftests/vm/run, never installed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compiler.h>
#include <linux/module.h>

static bool mismatch;
module_param(mismatch, bool, 0444);
MODULE_PARM_DESC(mismatch, "call through a pointer of the wrong type (a kCFI kernel stops it)");

typedef long (*pf_cfitest_right_fn)(long v);
typedef int (*pf_cfitest_wrong_fn)(void *p);

static noinline long pf_cfitest_target(long v)
{
	return v + 1;
}

static int __init pf_cfitest_init(void)
{
	pf_cfitest_right_fn right = pf_cfitest_target;
	pf_cfitest_wrong_fn wrong;

	OPTIMIZER_HIDE_VAR(right);
	pr_info("call through the right type: %ld\n", right(41));
	if (!mismatch)
		return 0;
	/* Through void *: no -Wcast-function-type, the type is wrong all the same. */
	wrong = (pf_cfitest_wrong_fn)(void *)pf_cfitest_target;
	OPTIMIZER_HIDE_VAR(wrong);
	pr_info("calling pf_cfitest_target through int (*)(void *)\n");
	pr_info("call through the wrong type returned %d: no kCFI check stopped it\n",
		wrong(NULL));
	return 0;
}

static void __exit pf_cfitest_exit(void)
{
}

module_init(pf_cfitest_init);
module_exit(pf_cfitest_exit);
MODULE_DESCRIPTION("pktfilt test: an indirect call through a pointer of the wrong type");
MODULE_LICENSE("GPL");
