/* The status table turned into names and messages (include/hurray/status.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal/common.h"

const char *hurray_status_name(HurrayStatus status) {
  switch (status) {
#define HURRAY_X_NAME_(name, value, msg) \
  case (value):                                  \
    return #name;
    HURRAY_STATUS_TABLE(HURRAY_X_NAME_)
#undef HURRAY_X_NAME_
    default:
      return "UNKNOWN_STATUS";
  }
}

const char *hurray_status_message(HurrayStatus status) {
  switch (status) {
#define HURRAY_X_MSG_(name, value, msg) \
  case (value):                                 \
    return msg;
    HURRAY_STATUS_TABLE(HURRAY_X_MSG_)
#undef HURRAY_X_MSG_
    default:
      return "unknown status";
  }
}

int hurray_error_os_code(const HurrayError *err) {
  /* I/O failures end their reason with "(errno N)" ("(error N)" on Windows):
   * src/file/io.c, hurray__io_fail, writes it. */
  if (err == NULL || (err->status != HURRAY_ERR_IO && err->status != HURRAY_ERR_OUT_OF_MEMORY))
    return 0;
  size_t n = strnlen(err->reason, sizeof err->reason);
  if (n < 4 || err->reason[n - 1] != ')') return 0;
  size_t i = n - 1;
  long code = 0, scale = 1;
  while (i > 0 && err->reason[i - 1] >= '0' && err->reason[i - 1] <= '9' && scale < 1000000000L) {
    code += (err->reason[i - 1] - '0') * scale;
    scale *= 10;
    i--;
  }
  if (scale == 1) return 0; /* no digits */
  static const char *const labels[2] = {"(errno ", "(error "};
  for (int k = 0; k < 2; k++) {
    size_t ln = strlen(labels[k]);
    if (i >= ln && memcmp(err->reason + i - ln, labels[k], ln) == 0) return (int)code;
  }
  return 0;
}

void hurray_error_clear(HurrayError *err) {
  if (err == NULL) return;
  err->status = HURRAY_OK;
  err->offset = HURRAY_NO_OFFSET;
  err->field[0] = '\0';
  err->message[0] = '\0';
  err->reason[0] = '\0';
}

HurrayStatus hurray__fail(HurrayError *err, HurrayStatus status, uint64_t offset,
                          const char *field, const char *fmt, ...) {
  if (err == NULL) return status;
  /* Both formatted apart first: `field` or an argument may point into *err. */
  char reason[sizeof err->reason];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  char path[sizeof err->field];
  snprintf(path, sizeof path, "%s", field != NULL ? field : "");

  err->status = status;
  err->offset = offset;
  memcpy(err->field, path, sizeof path);
  memcpy(err->reason, reason, sizeof reason);
  hurray__error_compose(err);
  return status;
}

void hurray__error_compose(HurrayError *err) {
  const char *field = err->field, *reason = err->reason;
  uint64_t offset = err->offset;
  if (field[0] != '\0' && offset != HURRAY_NO_OFFSET) {
    snprintf(err->message, sizeof err->message, "%s at byte %llu: %s", field,
             (unsigned long long)offset, reason);
  } else if (field[0] != '\0') {
    snprintf(err->message, sizeof err->message, "%s: %s", field, reason);
  } else if (offset != HURRAY_NO_OFFSET) {
    snprintf(err->message, sizeof err->message, "at byte %llu: %s",
             (unsigned long long)offset, reason);
  } else {
    snprintf(err->message, sizeof err->message, "%s", reason);
  }
}

const char *hurray__path(char *buf, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, size, fmt, ap);
  va_end(ap);
  return buf;
}
