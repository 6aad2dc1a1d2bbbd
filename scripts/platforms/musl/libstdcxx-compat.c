/* Two libstdc++ functions Bun's musl build imports that the older musl
 * libstdc++ the platform scripts run it with (from a musllinux_1_1 wheel)
 * lacks. Both are reached only on a failed allocation size or a failed
 * internal assertion, where stopping the process is the honest outcome. */
#include <stdio.h>
#include <stdlib.h>

/* std::__throw_bad_array_new_length() */
void _ZSt28__throw_bad_array_new_lengthv(void) {
    fputs("libstdc++ compat: bad array new length\n", stderr);
    abort();
}

/* std::__glibcxx_assert_fail(const char*, int, const char*, const char*) */
void _ZSt21__glibcxx_assert_failPKciS0_S0_(const char *file, int line, const char *function, const char *condition) {
    fprintf(stderr, "%s:%d: %s: assertion '%s' failed\n", file, line, function, condition);
    abort();
}
