/*
 * Readers and writers over a path, or over a duplicate of a caller's
 * descriptor (include/hurray/stream.h § transports): the descriptor the
 * stream owns is made here (src/stream/transport*.c), so a binding hands
 * over what its language gives (a path, a descriptor, a position) and never
 * closes, duplicates or seeks descriptors itself.
 */
#include <stdio.h>
#include <string.h>

#include "internal/platform.h"
#include "stream/stream_internal.h"

/* The failure of a system call on `fd` or `path`, its errno value last in
 * the reason ("(errno N)": hurray_error_os_code reads it back). */
static HurrayStatus os_fail(HurrayError *err, const char *field, int code, const char *what) {
#if defined(_WIN32)
  const char *text = strerror(code); /* a C runtime errno value, not a system error code */
#else
  char buf[128];
  const char *text = hurray__os_strerror(code, buf, sizeof buf);
#endif
  return hurray__fail(err, HURRAY_ERR_IO, HURRAY_NO_OFFSET, field, "%s: %s (errno %d)", what,
                      text, code);
}

/* A stream status without detail (the constructors over an fd give none). */
static HurrayStatus plain_fail(HurrayError *err, HurrayStatus st) {
  return hurray__fail(err, st, HURRAY_NO_OFFSET, NULL, "%s", hurray_status_message(st));
}

static HurrayStatus reader_over(int fd, const HurrayStreamReaderOptions *opts,
                                HurrayStreamReader **out, HurrayError *err) {
  HurrayStreamReaderOptions o;
  if (opts != NULL) o = *opts;
  else hurray_stream_reader_options_init(&o);
  o.flags |= HURRAY_STREAM_OWN_FD;
  HurrayStatus st = hurray_stream_reader_from_fd(fd, &o, out);
  if (st == HURRAY_OK) return HURRAY_OK;
  (void)hurray__fd_close(fd); /* not taken on failure */
  return plain_fail(err, st);
}

static HurrayStatus writer_over(int fd, uint32_t flags, HurrayStreamWriter **out,
                                HurrayError *err) {
  HurrayStatus st = hurray_stream_writer_to_fd(fd, flags | HURRAY_STREAM_OWN_FD, out);
  if (st == HURRAY_OK) return HURRAY_OK;
  (void)hurray__fd_close(fd);
  return plain_fail(err, st);
}

static HurrayStatus open_path(const char *path, bool write, int *fd, HurrayError *err) {
  if (path == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "path", "is NULL");
  int e = hurray__fd_open_path(path, write, fd);
  if (e == 0) return HURRAY_OK;
  char what[200];
  snprintf(what, sizeof what, "cannot open \"%.150s\" for %s", path, write ? "writing" : "reading");
  return os_fail(err, "path", e, what);
}

static HurrayStatus dup_fd(int fd, int64_t position, int *out, HurrayError *err) {
  *out = -1;
  if (fd < 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "fd",
                        "file descriptor %d is negative", fd);
  bool seek_failed = false;
  int e = hurray__fd_dup(fd, position, out, &seek_failed);
  if (e == 0) return HURRAY_OK;
  char what[96];
  if (seek_failed)
    snprintf(what, sizeof what, "cannot seek file descriptor %d to %lld", fd, (long long)position);
  else
    snprintf(what, sizeof what, "cannot duplicate file descriptor %d", fd);
  return os_fail(err, seek_failed ? "position" : "fd", e, what);
}

HurrayStatus hurray_stream_reader_open(const char *path, const HurrayStreamReaderOptions *opts,
                                       HurrayStreamReader **out, HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  int fd = -1;
  HURRAY_TRY(open_path(path, false, &fd, err));
  return reader_over(fd, opts, out, err);
}

HurrayStatus hurray_stream_writer_open(const char *path, uint32_t flags,
                                       HurrayStreamWriter **out, HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  int fd = -1;
  HURRAY_TRY(open_path(path, true, &fd, err));
  return writer_over(fd, flags, out, err);
}

HurrayStatus hurray_stream_reader_from_fd_dup(int fd, int64_t position,
                                              const HurrayStreamReaderOptions *opts,
                                              HurrayStreamReader **out, HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  int d = -1;
  HURRAY_TRY(dup_fd(fd, position, &d, err));
  return reader_over(d, opts, out, err);
}

HurrayStatus hurray_stream_writer_to_fd_dup(int fd, uint32_t flags, HurrayStreamWriter **out,
                                            HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  int d = -1;
  HURRAY_TRY(dup_fd(fd, -1, &d, err));
  return writer_over(d, flags, out, err);
}
