/*
 * Compiled (never run) by the ctest tests nodiscard_*: a status ignored on
 * purpose. With HURRAY_CHECK_RESULTS, HURRAY_NODISCARD (hurray/export.h) makes
 * that a warning; without it the headers ask nothing of the caller; the
 * documented way to drop a status, (void)!, is accepted either way.
 */
#include <hurray/hurray.h>

int main(void) {
#if defined(DROP_WITH_NOT)
  (void)!hurray_descriptor_destroy(NULL);
#else
  hurray_descriptor_destroy(NULL);
#endif
  return 0;
}
