/* Streams over a path or over a duplicate of a caller's descriptor (src/stream/open.c):
 * hurray_stream_reader_open / hurray_stream_writer_open, hurray_stream_reader_from_fd_dup /
 * hurray_stream_writer_to_fd_dup: round trips, the caller's descriptor left open, a reader
 * starting at a position, and the failures with their system error codes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if !defined(_WIN32)
#include <unistd.h>
#endif

#include "test_stream_util.h"

static void expect_one(HurrayStreamReader *r, uint64_t n, unsigned seed) {
  HurrayStreamItem *it = NULL;
  HurrayError e;
  if (hurray_stream_reader_next_item(r, &it, &e) != HURRAY_OK) fail_msg("%s", e.message);
  su_check_dense(it, n, seed);
  hurray_stream_item_destroy(&it);
  assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_OK);
  assert_null(it); /* a clean end */
}

static void test_paths(void **state) {
  (void)state;
  char path[600];
  snprintf(path, sizeof path, "%s/hurray_stream_open.hrrs", tu_tmp_root());
  HurrayStreamWriter *w = NULL;
  HurrayError e;
  assert_int_equal(hurray_stream_writer_open(path, 0, &w, &e), HURRAY_OK);
  su_write_dense(w, 1000, 3);
  assert_int_equal(hurray_stream_writer_finish(w, &e), HURRAY_OK);
  hurray_stream_writer_destroy(&w);
  /* opening for writing again truncates */
  assert_int_equal(hurray_stream_writer_open(path, 0, &w, &e), HURRAY_OK);
  su_write_dense(w, 5, 4);
  hurray_stream_writer_destroy(&w); /* closes the owned descriptor */
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_open(path, NULL, &r, &e), HURRAY_OK);
  expect_one(r, 5, 4);
  hurray_stream_reader_destroy(&r);
  assert_int_equal(remove(path), 0);

  /* a missing file: ERR_IO naming the path, with the system's code */
  r = (HurrayStreamReader *)(uintptr_t)1;
  assert_int_equal(hurray_stream_reader_open(path, NULL, &r, &e), HURRAY_ERR_IO);
  assert_null(r);
  assert_string_equal(e.field, "path");
  assert_non_null(strstr(e.reason, "cannot open"));
  assert_non_null(strstr(e.reason, "for reading"));
  assert_int_equal(hurray_error_os_code(&e), ENOENT);
  char missing[700];
  snprintf(missing, sizeof missing, "%s/no such folder/x.hrrs", tu_tmp_root());
  assert_int_equal(hurray_stream_writer_open(missing, 0, &w, &e), HURRAY_ERR_IO);
  assert_null(w);
  assert_int_equal(hurray_error_os_code(&e), ENOENT);
  /* bad arguments */
  assert_int_equal(hurray_stream_reader_open(NULL, NULL, &r, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_stream_reader_open(path, NULL, NULL, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_stream_writer_open(path, 0, NULL, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_stream_writer_open(path, 0x80u, &w, &e), HURRAY_ERR_INVALID_ARGUMENT);
  assert_null(w);
  (void)remove(path); /* created before the flags were refused */
}

#if !defined(_WIN32)
static void test_duplicated_descriptors(void **state) {
  (void)state;
  char path[600];
  snprintf(path, sizeof path, "%s/hurray_stream_dup_XXXXXX", tu_tmp_root());
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  /* a prefix that is no stream, then the stream */
  assert_int_equal(write(fd, "junk!", 5), 5);
  HurrayStreamWriter *w = NULL;
  HurrayError e;
  assert_int_equal(hurray_stream_writer_to_fd_dup(fd, 0, &w, &e), HURRAY_OK);
  su_write_dense(w, 17, 1);
  assert_int_equal(hurray_stream_writer_finish(w, &e), HURRAY_OK); /* closes the duplicate */
  hurray_stream_writer_destroy(&w);
  assert_true(tu_fd_is_open(fd)); /* the caller's stays open */
  /* the reader starts at the position given, whatever the descriptor's */
  assert_int_equal(lseek(fd, 0, SEEK_END) > 5, true);
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_fd_dup(fd, 5, NULL, &r, &e), HURRAY_OK);
  expect_one(r, 17, 1);
  hurray_stream_reader_destroy(&r);
  assert_true(tu_fd_is_open(fd));
  /* -1: where the descriptor is */
  assert_int_equal(lseek(fd, 5, SEEK_SET), 5);
  HurrayStreamReaderOptions o;
  hurray_stream_reader_options_init(&o);
  assert_int_equal(hurray_stream_reader_from_fd_dup(fd, -1, &o, &r, &e), HURRAY_OK);
  expect_one(r, 17, 1);
  hurray_stream_reader_destroy(&r);
  assert_int_equal(close(fd), 0);

  /* failures: a negative descriptor, a closed one, a position a pipe cannot take */
  assert_int_equal(hurray_stream_reader_from_fd_dup(-1, -1, NULL, &r, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "fd");
  assert_int_equal(hurray_stream_reader_from_fd_dup(fd, -1, NULL, &r, &e), HURRAY_ERR_IO);
  assert_null(r);
  assert_string_equal(e.field, "fd");
  assert_non_null(strstr(e.reason, "cannot duplicate file descriptor"));
  assert_int_equal(hurray_error_os_code(&e), EBADF);
  assert_int_equal(hurray_stream_writer_to_fd_dup(fd, 0, &w, &e), HURRAY_ERR_IO);
  assert_null(w);
  int fds[2];
  assert_int_equal(tu_pipe(fds), 0);
  /* the lowest free descriptor, which a leaked duplicate would take */
  int probe = dup(fds[0]);
  assert_true(probe >= 0);
  assert_int_equal(close(probe), 0);
  assert_int_equal(hurray_stream_reader_from_fd_dup(fds[0], 5, NULL, &r, &e), HURRAY_ERR_IO);
  assert_null(r);
  assert_string_equal(e.field, "position");
  assert_int_equal(hurray_error_os_code(&e), ESPIPE);
  int after = dup(fds[0]);
  assert_int_equal(after, probe); /* the duplicate made before the seek failed is closed */
  assert_int_equal(close(after), 0);
  assert_int_equal(hurray_stream_writer_to_fd_dup(fds[1], 0x80u, &w, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_null(w);
  int again = dup(fds[0]);
  assert_int_equal(again, probe); /* nothing leaked by the refusal either */
  assert_int_equal(close(again), 0);
  assert_int_equal(close(fds[0]), 0);
  assert_int_equal(close(fds[1]), 0);
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_paths),
#if !defined(_WIN32)
      cmocka_unit_test(test_duplicated_descriptors),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
