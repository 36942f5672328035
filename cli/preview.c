/* hurray-inspect: decoded values of a tensor's first buffer (--preview). */
#include "inspect.h"

void report_preview(Report *r, const HurrayDescriptor *d, const uint8_t *data, uint64_t size,
                    unsigned indent) {
  (void)d;
  (void)data;
  (void)size;
  if (r->json) {
    j_str(r, "preview", NULL);
    return;
  }
  fprintf(r->out, "%*spreview: not available in this build\n", (int)indent, "");
}
