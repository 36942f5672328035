/* hurray-inspect: .hrry containers (HRRYFILE). */
#include "inspect.h"

int inspect_container(Report *r, const uint8_t *bytes, size_t len) {
  (void)bytes;
  report_begin(r, "hrry", ".hrry container", len);
  report_error(r, "error", HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL, NULL,
               ".hrry containers are not supported by this build", 0);
  return report_end(r);
}
