/*
 * The HURRAY_WORKERS environment variable (file.h, hurray_file_workers_env):
 * read in one place, for the reader's default (src/file/workers.c) and for
 * bindings that refuse a bad value up front.
 */
#include <stdlib.h>

#include "internal/file.h"

HurrayStatus hurray_file_workers_env(uint32_t *out, HurrayError *err) {
  if (out == NULL) return HURRAY_ERR_NULL_POINTER;
  *out = 0;
  const char *s = getenv("HURRAY_WORKERS");
  if (s == NULL || *s == '\0') return HURRAY_OK;
  uint64_t v = 0;
  const char *p = s;
  while (*p >= '0' && *p <= '9' && v <= HURRAY_FILE_MAX_WORKERS)
    v = v * 10u + (uint64_t)(*p++ - '0');
  if (*p == '\0' && v >= 1 && v <= HURRAY_FILE_MAX_WORKERS) {
    *out = (uint32_t)v;
    return HURRAY_OK;
  }
  return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, NULL,
                      "the environment variable HURRAY_WORKERS is '%.40s'; expected a whole "
                      "number from 1 to %u (threads reading the file; 1 reads one piece at a "
                      "time), or unset it for the default %u",
                      s, HURRAY_FILE_MAX_WORKERS, HURRAY_FILE_DEFAULT_WORKERS);
}
