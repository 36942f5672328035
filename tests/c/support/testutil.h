/* Helpers shared by the cmocka tests. */
#ifndef HURRAY_TESTUTIL_H
#define HURRAY_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

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

/* Hex dump of a byte range into a static buffer, for failure messages. */
const char *tu_hex(const uint8_t *p, size_t n);

#endif
