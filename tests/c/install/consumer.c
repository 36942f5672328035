/* Uses the installed headers and library, nothing of the source tree. */
#include <hurray/hurray.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  uint8_t bytes[32];
  memset(bytes, 0, sizeof bytes);
  memcpy(bytes, "XXXX", 4);
  HurrayDescriptor *d = NULL;
  HurrayError e;
  hurray_error_clear(&e);
  HurrayStatus st = hurray_descriptor_decode_ex(bytes, sizeof bytes, 0, &d, &e);
  if (st != HURRAY_ERR_INVALID_MAGIC || d != NULL || strcmp(e.field, "magic") != 0) {
    fprintf(stderr, "unexpected: %s (%s)\n", hurray_status_name(st), e.message);
    return 1;
  }
  printf("%s: %s\n", hurray_status_name(st), e.message);
  return 0;
}
