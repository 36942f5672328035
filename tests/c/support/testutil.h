/* Helpers shared by the cmocka tests. */
#ifndef HURRAY_TESTUTIL_H
#define HURRAY_TESTUTIL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#if defined(__MINGW32__)
/* cmocka declares print_message, fail_msg & co. with format(__printf__),
 * which MinGW's GCC checks against the msvcrt printf (no %zu, no %llu);
 * cmocka itself formats with MinGW's C99 printf: check them as such. */
#define __printf__ gnu_printf
#endif
#include <cmocka.h>
#if defined(__MINGW32__)
#undef __printf__
#include <math.h>
/* MinGW's classification macros pass a double through their float branch
 * too (-Wfloat-conversion); GCC's type-generic builtins do not. */
#undef isnan
#undef isinf
#undef isfinite
#undef signbit
#define isnan(x) __builtin_isnan(x)
#define isinf(x) __builtin_isinf(x)
#define isfinite(x) __builtin_isfinite(x)
#define signbit(x) __builtin_signbit(x)
#endif

#include "hurray/hurray.h"

/* Reads a whole file into a malloc'ed buffer (free with free()). NULL if it
 * cannot be read. */
uint8_t *tu_read_file(const char *path, size_t *len);

/* Directory from an environment variable, or NULL when unset or missing. */
const char *tu_env_dir(const char *var);

/* Allocation-failure injection: after tu_fail_alloc_after(n), the n-th
 * allocation from now (0-based) and every later one fail until
 * tu_alloc_reset(). tu_alloc_live() is the number of blocks not yet freed. */
void tu_alloc_install(void);
void tu_fail_alloc_after(long n);
void tu_alloc_reset(void);
long tu_alloc_live(void);
long tu_alloc_count(void);

/* Memory aligned to `alignment` (a power of two); free with tu_aligned_free.
 * NULL when out of memory. (posix_memalign is not on Windows.) */
void *tu_aligned_alloc(size_t alignment, size_t size);
void tu_aligned_free(void *p);

/* Replaces the trailing "XXXXXX" of `templ` and creates that directory
 * (mkdtemp); NULL with errno on failure. */
char *tu_mkdtemp(char *templ);

/* The scratch root: $TMPDIR, else $TEMP or $TMP on Windows, else /tmp. Borrowed. */
const char *tu_tmp_root(void);

/* pipe(2); on Windows _pipe in binary mode with a 64 KiB buffer. */
int tu_pipe(int fds[2]);
/* True while fd is an open file descriptor. */
bool tu_fd_is_open(int fd);

/* Skips the running test, printing why: a test that cannot run on this
 * platform says so instead of passing silently. */
#define tu_skip(why)                                   \
  do {                                                 \
    print_message("[  SKIPPED ] on this platform: %s\n", (why)); \
    skip();                                            \
  } while (0)

/* Hex dump of a byte range into a static buffer, for failure messages. */
const char *tu_hex(const uint8_t *p, size_t n);

#endif
