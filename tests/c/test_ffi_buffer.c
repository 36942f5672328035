/* C ABI buffers: validation, getters, reference counting, release callback,
 * owned allocation, NULL arguments, destroyed-handle detection. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* ---- helpers ---------------------------------------------------------------- */

typedef struct ReleaseLog {
  int calls;
  void *data;
  void *ctx;
} ReleaseLog;

static void log_release(void *data, void *ctx) {
  ReleaseLog *log = ctx;
  log->calls++;
  log->data = data;
  log->ctx = ctx;
}

/* Page-aligned scratch memory: any declared alignment up to 4096 is true of
 * g_page, and g_page + k is exactly as aligned as k. */
static _Alignas(4096) uint8_t g_page[2 * 4096];

/* A fake device address that is aligned to exactly `a` bytes (never read). */
static void *fake_address(uintptr_t a) { return (void *)(uintptr_t)(0x100000u + a); }

static HurrayStatus make(void *data, uint64_t size, uint32_t align, uint8_t dev, uint8_t sync,
                         uint8_t cls, HurrayBuffer **out) {
  return hurray_buffer_from_ptr(data, size, align, dev, sync, cls, NULL, NULL, out);
}

/* Creates, checks OK, destroys. */
static void expect_ok(void *data, uint64_t size, uint32_t align, uint8_t dev, uint8_t sync,
                      uint8_t cls) {
  HurrayBuffer *b = NULL;
  assert_int_equal(make(data, size, align, dev, sync, cls, &b), HURRAY_OK);
  assert_non_null(b);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
}

/* Expects `want`, *out reset to NULL. */
static void expect_fail(HurrayStatus want, void *data, uint64_t size, uint32_t align,
                        uint8_t dev, uint8_t sync, uint8_t cls) {
  HurrayBuffer *b = (HurrayBuffer *)(uintptr_t)0x1;
  assert_int_equal(make(data, size, align, dev, sync, cls, &b), want);
  assert_null(b);
}

static int setup(void **state) {
  (void)state;
  tu_alloc_install();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tu_alloc_reset();
  assert_int_equal(tu_alloc_live(), 0); /* every test returns what it took */
  hurray_set_allocator(NULL);
  return 0;
}

/* ---- construction and getters --------------------------------------------- */

static void test_from_ptr_getters_and_release(void **state) {
  (void)state;
  ReleaseLog log = {0, NULL, NULL};
  HurrayBuffer *b = NULL;
  assert_int_equal(hurray_buffer_from_ptr(g_page, 256, 4096, HURRAY_DEVICE_CPU,
                                          HURRAY_SYNC_PRODUCER_SYNCED, HURRAY_MEMORY_HOST_PINNED,
                                          log_release, &log, &b),
                   HURRAY_OK);
  void *data = NULL;
  uint64_t size = 0;
  uint32_t align = 0;
  uint8_t dev = 0xAA, sync = 0xAA, cls = 0xAA;
  assert_int_equal(hurray_buffer_data_ptr(b, &data), HURRAY_OK);
  assert_int_equal(hurray_buffer_byte_size(b, &size), HURRAY_OK);
  assert_int_equal(hurray_buffer_alignment(b, &align), HURRAY_OK);
  assert_int_equal(hurray_buffer_device_tag(b, &dev), HURRAY_OK);
  assert_int_equal(hurray_buffer_sync_mode(b, &sync), HURRAY_OK);
  assert_int_equal(hurray_buffer_memory_class(b, &cls), HURRAY_OK);
  assert_ptr_equal(data, g_page);
  assert_int_equal(size, 256);
  assert_int_equal(align, 4096);
  assert_int_equal(dev, HURRAY_DEVICE_CPU);
  assert_int_equal(sync, HURRAY_SYNC_PRODUCER_SYNCED);
  assert_int_equal(cls, HURRAY_MEMORY_HOST_PINNED);

  HurrayBufferHandle h;
  memset(&h, 0xEE, sizeof h);
  assert_int_equal(hurray_buffer_wire_handle(b, &h), HURRAY_OK);
  assert_int_equal(h.byte_size, 256);
  assert_int_equal(h.alignment, 4096);
  assert_int_equal(h.device_tag, HURRAY_DEVICE_CPU);
  assert_int_equal(h.sync_mode, HURRAY_SYNC_PRODUCER_SYNCED);
  assert_int_equal(h.memory_class, HURRAY_MEMORY_HOST_PINNED);
  assert_int_equal(h.reserved, 0);

  assert_int_equal(log.calls, 0);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
  assert_int_equal(log.calls, 1);
  assert_ptr_equal(log.data, g_page); /* the exact values given at construction */
  assert_ptr_equal(log.ctx, &log);
}

static void test_no_release_callback(void **state) {
  (void)state;
  /* release NULL: nothing is called, the caller keeps its memory. */
  expect_ok(g_page, 64, 64, HURRAY_DEVICE_CPU, 0, 0);
}

static void test_alignment_values(void **state) {
  (void)state;
  const uint8_t cpu = HURRAY_DEVICE_CPU;
  /* Non-empty: a power of two of at least 64. */
  expect_fail(HURRAY_ERR_INVALID_LAYOUT, g_page, 64, 0, cpu, 0, 0);
  expect_fail(HURRAY_ERR_INVALID_LAYOUT, g_page, 64, 3, cpu, 0, 0);
  expect_fail(HURRAY_ERR_INVALID_LAYOUT, g_page, 64, 32, cpu, 0, 0);
  expect_fail(HURRAY_ERR_INVALID_LAYOUT, g_page, 64, 96, cpu, 0, 0);
  expect_fail(HURRAY_ERR_INVALID_LAYOUT, g_page, 1, 1, cpu, 0, 0);
  expect_ok(g_page, 64, 64, cpu, 0, 0);
  expect_ok(g_page, 1, 128, cpu, 0, 0);
  expect_ok(g_page, 64, 4096, cpu, 0, 0);
  /* Empty: any power of two, 1 included; still not 0 or 3. */
  expect_ok(g_page, 0, 1, cpu, 0, 0);
  expect_ok(g_page, 0, 2, cpu, 0, 0);
  expect_ok(g_page, 0, 32, cpu, 0, 0);
  expect_fail(HURRAY_ERR_INVALID_LAYOUT, g_page, 0, 0, cpu, 0, 0);
  expect_fail(HURRAY_ERR_INVALID_LAYOUT, g_page, 0, 3, cpu, 0, 0);
  /* The largest u32 power of two is a valid declaration (address 0 is not
   * involved: g_page is not that aligned, so use an empty NULL buffer). */
  expect_ok(NULL, 0, 0x80000000u, cpu, 0, 0);
}

static void test_empty_buffer_null_data(void **state) {
  (void)state;
  HurrayBuffer *b = NULL;
  ReleaseLog log = {0, NULL, NULL};
  assert_int_equal(hurray_buffer_from_ptr(NULL, 0, 1, HURRAY_DEVICE_CPU, 0, 0, log_release,
                                          &log, &b),
                   HURRAY_OK);
  void *data = g_page;
  assert_int_equal(hurray_buffer_data_ptr(b, &data), HURRAY_OK);
  assert_null(data);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
  assert_int_equal(log.calls, 1); /* the callback runs, with NULL data */
  assert_null(log.data);
  /* A non-empty buffer needs its data. */
  b = (HurrayBuffer *)(uintptr_t)0x1;
  assert_int_equal(make(NULL, 1, 64, HURRAY_DEVICE_CPU, 0, 0, &b), HURRAY_ERR_NULL_POINTER);
  assert_ptr_equal(b, (HurrayBuffer *)(uintptr_t)0x1); /* untouched */
}

static void test_address_must_honour_alignment(void **state) {
  (void)state;
  const uint8_t cpu = HURRAY_DEVICE_CPU;
  expect_fail(HURRAY_ERR_MISALIGNED, g_page + 1, 64, 64, cpu, 0, 0);
  expect_fail(HURRAY_ERR_MISALIGNED, g_page + 32, 64, 64, cpu, 0, 0);
  expect_ok(g_page + 64, 64, 64, cpu, 0, 0);
  expect_fail(HURRAY_ERR_MISALIGNED, g_page + 64, 64, 128, cpu, 0, 0);
  expect_fail(HURRAY_ERR_MISALIGNED, g_page + 2048, 64, 4096, cpu, 0, 0);
  expect_ok(g_page + 4096, 64, 4096, cpu, 0, 0);
  /* An empty buffer with an address: its declaration must still be true. */
  expect_fail(HURRAY_ERR_MISALIGNED, g_page + 1, 0, 64, cpu, 0, 0);
  expect_ok(g_page + 1, 0, 1, cpu, 0, 0);
  /* Device pointers are addresses too (never dereferenced here). */
  expect_fail(HURRAY_ERR_MISALIGNED, fake_address(32), 64, 64, HURRAY_DEVICE_CUDA, 0, 0);
  expect_ok(fake_address(256), 64, 256, HURRAY_DEVICE_CUDA, 0, 0);
  expect_fail(HURRAY_ERR_MISALIGNED, fake_address(64), 64, 128, HURRAY_DEVICE_ROCM, 0, 0);
  expect_fail(HURRAY_ERR_MISALIGNED, fake_address(64), 64, 128, HURRAY_DEVICE_HEXAGON, 0, 0);
  expect_fail(HURRAY_ERR_MISALIGNED, fake_address(64), 64, 128, HURRAY_DEVICE_LEVEL_ZERO, 0,
              0);
  /* Devices that may pass an opaque resource handle are not checked. */
  expect_ok(fake_address(8), 64, 64, HURRAY_DEVICE_METAL, 0, 0);
  expect_ok(fake_address(8), 64, 64, HURRAY_DEVICE_VULKAN, 0, 0);
  expect_ok(fake_address(8), 64, 64, HURRAY_DEVICE_WEBGPU, 0, 0);
  expect_ok(fake_address(8), 64, 64, HURRAY_DEVICE_OPENCL, 0, 0);
  expect_ok(fake_address(8), 64, 64, 0xF3, 0, 0);
}

static void test_address_range_must_not_wrap(void **state) {
  (void)state;
  void *top = (void *)(uintptr_t)(UINTPTR_MAX & ~(uintptr_t)4095);
  uint64_t room = (uint64_t)(UINTPTR_MAX - (uintptr_t)top);
  expect_fail(HURRAY_ERR_INVALID_ARGUMENT, top, room + 1, 4096, HURRAY_DEVICE_CUDA, 0, 0);
  expect_ok(top, room, 4096, HURRAY_DEVICE_CUDA, 0, 0);
  expect_fail(HURRAY_ERR_INVALID_ARGUMENT, top, UINT64_MAX, 64, HURRAY_DEVICE_CPU, 0, 0);
}

static void test_tag_domains(void **state) {
  (void)state;
  void *p = fake_address(4096);
  /* device tag: named and private accepted; reserved and 0xFF rejected. */
  expect_ok(p, 64, 64, HURRAY_DEVICE_OPENCL, 0, 0);
  expect_fail(HURRAY_ERR_INVALID_TYPE, p, 64, 64, 0x09, 0, 0);
  expect_fail(HURRAY_ERR_INVALID_TYPE, p, 64, 64, 0xEF, 0, 0);
  expect_ok(p, 64, 64, 0xF0, 0, 0);
  expect_ok(p, 64, 64, 0xFE, 0, 0);
  expect_fail(HURRAY_ERR_INVALID_TYPE, p, 64, 64, 0xFF, 0, 0);
  /* sync mode: 0..2 accepted; 3..0xFE reserved, 0xFF invalid. */
  expect_ok(p, 64, 64, HURRAY_DEVICE_CUDA, HURRAY_SYNC_CONSUMER_STREAM, 0);
  expect_fail(HURRAY_ERR_INVALID_SYNC_MODE, p, 64, 64, HURRAY_DEVICE_CUDA, 0x03, 0);
  expect_fail(HURRAY_ERR_INVALID_SYNC_MODE, p, 64, 64, HURRAY_DEVICE_CUDA, 0xFE, 0);
  expect_fail(HURRAY_ERR_INVALID_SYNC_MODE, p, 64, 64, HURRAY_DEVICE_CUDA, 0xFF, 0);
  /* memory class: 0..3 and private accepted (where valid); reserved and 0xFF not. */
  expect_ok(p, 64, 64, HURRAY_DEVICE_CUDA, 0, HURRAY_MEMORY_PEER);
  expect_fail(HURRAY_ERR_INVALID_TYPE, p, 64, 64, HURRAY_DEVICE_CUDA, 0, 0x04);
  expect_fail(HURRAY_ERR_INVALID_TYPE, p, 64, 64, HURRAY_DEVICE_CUDA, 0, 0xEF);
  expect_fail(HURRAY_ERR_INVALID_TYPE, p, 64, 64, HURRAY_DEVICE_CUDA, 0, 0xFF);
  expect_ok(p, 64, 64, 0xF0, 0, 0xF0);
  expect_fail(HURRAY_ERR_INVALID_TYPE, p, 64, 64, 0xF0, 0, 0xFF);
}

static void test_cpu_is_producer_synced(void **state) {
  (void)state;
  expect_ok(g_page, 64, 64, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED, 0);
  expect_fail(HURRAY_ERR_INVALID_SYNC_MODE, g_page, 64, 64, HURRAY_DEVICE_CPU,
              HURRAY_SYNC_EVENT, 0);
  expect_fail(HURRAY_ERR_INVALID_SYNC_MODE, g_page, 64, 64, HURRAY_DEVICE_CPU,
              HURRAY_SYNC_CONSUMER_STREAM, 0);
  /* Empty CPU buffers too. */
  expect_fail(HURRAY_ERR_INVALID_SYNC_MODE, NULL, 0, 1, HURRAY_DEVICE_CPU, HURRAY_SYNC_EVENT,
              0);
  expect_ok(g_page, 64, 64, HURRAY_DEVICE_CUDA, HURRAY_SYNC_EVENT, 0);
}

static void test_device_memory_class_table(void **state) {
  (void)state;
  static const uint8_t devices[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 0xF0, 0xFE};
  static const uint8_t classes[] = {0, 1, 2, 3, 0xF0, 0xFE};
  int accepted = 0, rejected = 0;
  for (size_t d = 0; d < sizeof devices; d++) {
    for (size_t c = 0; c < sizeof classes; c++) {
      HurrayBuffer *b = NULL;
      HurrayStatus st = make(g_page, 64, 64, devices[d], 0, classes[c], &b);
      if (hurray_device_memory_class_valid(devices[d], classes[c])) {
        assert_int_equal(st, HURRAY_OK);
        assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
        accepted++;
      } else {
        assert_int_equal(st, HURRAY_ERR_INVALID_TYPE);
        assert_null(b);
        rejected++;
      }
    }
  }
  /* Spot checks of the table itself, so the loop cannot pass vacuously. */
  expect_fail(HURRAY_ERR_INVALID_TYPE, g_page, 64, 64, HURRAY_DEVICE_CPU, 0, HURRAY_MEMORY_PEER);
  expect_fail(HURRAY_ERR_INVALID_TYPE, g_page, 64, 64, HURRAY_DEVICE_WEBGPU, 0,
              HURRAY_MEMORY_HOST_PINNED);
  expect_fail(HURRAY_ERR_INVALID_TYPE, g_page, 64, 64, HURRAY_DEVICE_CUDA, 0, 0xF0);
  expect_ok(g_page, 64, 64, HURRAY_DEVICE_CPU, 0, HURRAY_MEMORY_UNIFIED);
  expect_ok(g_page, 64, 64, 0xF5, 0, HURRAY_MEMORY_STANDARD);
  expect_fail(HURRAY_ERR_INVALID_TYPE, g_page, 64, 64, 0xF5, 0, HURRAY_MEMORY_PEER);
  assert_true(accepted > 20);
  assert_true(rejected > 20);
}

static void test_error_detail(void **state) {
  (void)state;
  HurrayBuffer *b = NULL;
  HurrayError e;
  hurray_error_clear(&e);
  assert_int_equal(hurray_buffer_from_ptr_ex(g_page, 64, 48, 0, 0, 0, NULL, NULL, &b, &e),
                   HURRAY_ERR_INVALID_LAYOUT);
  assert_int_equal(e.status, HURRAY_ERR_INVALID_LAYOUT);
  assert_string_equal(e.field, "alignment");
  assert_true(e.offset == HURRAY_NO_OFFSET);
  assert_non_null(strstr(e.message, "power of two"));

  assert_int_equal(hurray_buffer_from_ptr_ex(g_page, 64, 32, 0, 0, 0, NULL, NULL, &b, &e),
                   HURRAY_ERR_INVALID_LAYOUT);
  assert_non_null(strstr(e.message, "64"));
  assert_int_equal(hurray_buffer_from_ptr_ex(g_page, 64, 64, 0x20, 0, 0, NULL, NULL, &b, &e),
                   HURRAY_ERR_INVALID_TYPE);
  assert_string_equal(e.field, "device_tag");
  assert_non_null(strstr(e.message, "reserved"));
  assert_int_equal(hurray_buffer_from_ptr_ex(g_page, 64, 64, 0, 7, 0, NULL, NULL, &b, &e),
                   HURRAY_ERR_INVALID_SYNC_MODE);
  assert_string_equal(e.field, "sync_mode");
  assert_int_equal(hurray_buffer_from_ptr_ex(g_page, 64, 64, 0, 0, 0x10, NULL, NULL, &b, &e),
                   HURRAY_ERR_INVALID_TYPE);
  assert_string_equal(e.field, "memory_class");
  assert_int_equal(hurray_buffer_from_ptr_ex(g_page, 64, 64, 0, 1, 0, NULL, NULL, &b, &e),
                   HURRAY_ERR_INVALID_SYNC_MODE);
  assert_non_null(strstr(e.message, "CPU"));
  assert_int_equal(hurray_buffer_from_ptr_ex(g_page + 8, 64, 64, 0, 0, 0, NULL, NULL, &b, &e),
                   HURRAY_ERR_MISALIGNED);
  assert_string_equal(e.field, "data");
  assert_null(b);
  /* err may be NULL. */
  assert_int_equal(hurray_buffer_from_ptr_ex(g_page, 64, 48, 0, 0, 0, NULL, NULL, &b, NULL),
                   HURRAY_ERR_INVALID_LAYOUT);
}

static void test_failure_never_releases(void **state) {
  (void)state;
  ReleaseLog log = {0, NULL, NULL};
  HurrayBuffer *b = NULL;
  assert_int_equal(hurray_buffer_from_ptr(g_page, 64, 3, 0, 0, 0, log_release, &log, &b),
                   HURRAY_ERR_INVALID_LAYOUT);
  assert_int_equal(hurray_buffer_from_ptr(g_page, 64, 64, 0xFF, 0, 0, log_release, &log, &b),
                   HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_buffer_from_ptr(g_page, 64, 64, 0, 0, 0, log_release, &log, NULL),
                   HURRAY_ERR_NULL_POINTER);
  /* Allocation failure of the handle itself: no leak, no release. */
  tu_fail_alloc_after(0);
  assert_int_equal(hurray_buffer_from_ptr(g_page, 64, 64, 0, 0, 0, log_release, &log, &b),
                   HURRAY_ERR_OUT_OF_MEMORY);
  tu_alloc_reset();
  assert_null(b);
  assert_int_equal(log.calls, 0);
  assert_int_equal(tu_alloc_live(), 0);
}

/* ---- NULL arguments -------------------------------------------------------- */

static void test_null_arguments(void **state) {
  (void)state;
  HurrayBuffer *b = NULL;
  assert_int_equal(make(g_page, 64, 64, 0, 0, 0, &b), HURRAY_OK);
  void *data = g_page;
  uint64_t u64 = 7;
  uint32_t u32 = 7;
  uint8_t u8 = 7;
  HurrayBufferHandle h = {7, 7, 7, 7, 7, 7};
  assert_int_equal(hurray_buffer_data_ptr(NULL, &data), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_data_ptr(b, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_byte_size(NULL, &u64), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_byte_size(b, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_alignment(NULL, &u32), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_alignment(b, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_device_tag(NULL, &u8), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_device_tag(b, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_sync_mode(NULL, &u8), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_sync_mode(b, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_memory_class(NULL, &u8), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_memory_class(b, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_wire_handle(NULL, &h), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_wire_handle(b, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_retain(NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_destroy(NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_new(64, 64, 0, NULL, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(make(g_page, 64, 64, 0, 0, 0, NULL), HURRAY_ERR_NULL_POINTER);
  /* Nothing was written. */
  assert_ptr_equal(data, g_page);
  assert_int_equal(u64, 7);
  assert_int_equal(u32, 7);
  assert_int_equal(u8, 7);
  assert_int_equal(h.byte_size, 7);
  assert_int_equal(h.reserved, 7);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
}

/* ---- references ----------------------------------------------------------- */

static void test_retain_release_exactly_once(void **state) {
  (void)state;
  ReleaseLog log = {0, NULL, NULL};
  HurrayBuffer *b = NULL;
  assert_int_equal(hurray_buffer_from_ptr(g_page, 64, 64, 0, 0, 0, log_release, &log, &b),
                   HURRAY_OK);
  assert_int_equal(hurray_buffer_retain(b), HURRAY_OK);
  assert_int_equal(hurray_buffer_retain(b), HURRAY_OK);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
  assert_int_equal(log.calls, 0); /* one reference left */
  uint64_t size = 0;
  assert_int_equal(hurray_buffer_byte_size(b, &size), HURRAY_OK);
  assert_int_equal(size, 64);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
  assert_int_equal(log.calls, 1);
}

typedef struct DropJob {
  HurrayBuffer *b;
  int n;
  int failures;
} DropJob;

static void *drop_references(void *arg) {
  DropJob *job = arg;
  for (int i = 0; i < job->n; i++)
    if (hurray_buffer_destroy(job->b) != HURRAY_OK) job->failures++;
  return NULL;
}

static void test_references_dropped_on_many_threads(void **state) {
  (void)state;
  enum { THREADS = 4, PER_THREAD = 2000 };
  ReleaseLog log = {0, NULL, NULL};
  HurrayBuffer *b = NULL;
  assert_int_equal(hurray_buffer_from_ptr(g_page, 64, 64, 0, 0, 0, log_release, &log, &b),
                   HURRAY_OK);
  for (int i = 0; i < THREADS * PER_THREAD - 1; i++)
    assert_int_equal(hurray_buffer_retain(b), HURRAY_OK);
  pthread_t tids[THREADS];
  DropJob jobs[THREADS];
  for (int t = 0; t < THREADS; t++) {
    jobs[t] = (DropJob){b, PER_THREAD, 0};
    assert_int_equal(pthread_create(&tids[t], NULL, drop_references, &jobs[t]), 0);
  }
  for (int t = 0; t < THREADS; t++) {
    assert_int_equal(pthread_join(tids[t], NULL), 0);
    assert_int_equal(jobs[t].failures, 0);
  }
  assert_int_equal(log.calls, 1);
}

/* ---- owned allocation ----------------------------------------------------- */

static void test_buffer_new(void **state) {
  (void)state;
  static const uint32_t aligns[] = {64, 128, 4096, 65536};
  for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
    HurrayBuffer *b = NULL;
    assert_int_equal(hurray_buffer_new(1000, aligns[i], HURRAY_BUFFER_ZEROED, &b, NULL),
                     HURRAY_OK);
    uint8_t *data = NULL;
    void *vp = NULL;
    assert_int_equal(hurray_buffer_data_ptr(b, &vp), HURRAY_OK);
    data = vp;
    assert_non_null(data);
    assert_int_equal((uintptr_t)data % aligns[i], 0);
    for (size_t k = 0; k < 1000; k++) assert_int_equal(data[k], 0);
    memset(data, 0x5A, 1000); /* writable, all of it */
    uint32_t align = 0;
    uint8_t dev = 9, sync = 9, cls = 9;
    uint64_t size = 0;
    assert_int_equal(hurray_buffer_alignment(b, &align), HURRAY_OK);
    assert_int_equal(hurray_buffer_byte_size(b, &size), HURRAY_OK);
    assert_int_equal(hurray_buffer_device_tag(b, &dev), HURRAY_OK);
    assert_int_equal(hurray_buffer_sync_mode(b, &sync), HURRAY_OK);
    assert_int_equal(hurray_buffer_memory_class(b, &cls), HURRAY_OK);
    assert_int_equal(align, aligns[i]);
    assert_int_equal(size, 1000);
    assert_int_equal(dev, HURRAY_DEVICE_CPU);
    assert_int_equal(sync, HURRAY_SYNC_PRODUCER_SYNCED);
    assert_int_equal(cls, HURRAY_MEMORY_STANDARD);
    assert_int_equal(tu_alloc_live(), 2); /* handle + bytes, through the hook */
    assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
    assert_int_equal(tu_alloc_live(), 0);
  }
  /* Unzeroed also works. */
  HurrayBuffer *b = NULL;
  assert_int_equal(hurray_buffer_new(64, 64, 0, &b, NULL), HURRAY_OK);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
}

static void test_buffer_new_empty_and_rejects(void **state) {
  (void)state;
  HurrayBuffer *b = NULL;
  assert_int_equal(hurray_buffer_new(0, 1, 0, &b, NULL), HURRAY_OK);
  void *data = g_page;
  assert_int_equal(hurray_buffer_data_ptr(b, &data), HURRAY_OK);
  assert_null(data);
  assert_int_equal(tu_alloc_live(), 1); /* the handle only */
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);

  HurrayError e;
  b = (HurrayBuffer *)(uintptr_t)0x1;
  assert_int_equal(hurray_buffer_new(64, 32, 0, &b, &e), HURRAY_ERR_INVALID_LAYOUT);
  assert_null(b);
  assert_string_equal(e.field, "alignment");
  assert_int_equal(hurray_buffer_new(64, 100, 0, &b, NULL), HURRAY_ERR_INVALID_LAYOUT);
  assert_int_equal(hurray_buffer_new(0, 0, 0, &b, NULL), HURRAY_ERR_INVALID_LAYOUT);
  assert_int_equal(hurray_buffer_new(64, 64, 0x2, &b, &e), HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "flags");
  assert_int_equal(hurray_buffer_new(UINT64_MAX, 64, 0, &b, &e), HURRAY_ERR_OUT_OF_MEMORY);
  assert_null(b);
  assert_string_equal(e.field, "byte_size");
  long asked = tu_alloc_count();
  assert_int_equal(hurray_buffer_new((uint64_t)PTRDIFF_MAX + 1u, 64, 0, &b, &e),
                   HURRAY_ERR_OUT_OF_MEMORY);
  assert_int_equal(tu_alloc_count(), asked); /* refused before the allocator was asked */
  assert_int_equal(tu_alloc_live(), 0);
}

static void test_buffer_new_allocation_failures(void **state) {
  (void)state;
  int failures = 0;
  for (long n = 0;; n++) {
    HurrayBuffer *b = (HurrayBuffer *)(uintptr_t)0x1;
    tu_fail_alloc_after(n);
    HurrayStatus st = hurray_buffer_new(4096, 4096, HURRAY_BUFFER_ZEROED, &b, NULL);
    tu_alloc_reset();
    if (st == HURRAY_OK) {
      assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
      break;
    }
    assert_int_equal(st, HURRAY_ERR_OUT_OF_MEMORY);
    assert_null(b);
    assert_int_equal(tu_alloc_live(), 0); /* nothing leaked on this path */
    failures++;
  }
  assert_int_equal(failures, 2); /* the bytes, then the handle */
  assert_int_equal(tu_alloc_live(), 0);
}

/* An allocator that breaks its promise: returns 16 bytes past an aligned
 * block (and frees the block correctly). */
static int g_liar_live;
static void *liar_alloc(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  void *p = tu_aligned_alloc(alignment < 64 ? 64 : alignment, size + 64);
  if (p == NULL) return NULL;
  g_liar_live++;
  return (uint8_t *)p + (alignment >= 64 ? 16 : 0);
}
static void liar_free(void *ctx, void *p) {
  (void)ctx;
  if (p == NULL) return;
  uintptr_t a = (uintptr_t)p;
  if (a % 64 == 16) a -= 16;
  g_liar_live--;
  tu_aligned_free((void *)a);
}

static void test_buffer_new_checks_the_allocator(void **state) {
  (void)state;
  const HurrayAllocator liar = {liar_alloc, liar_free, NULL};
  hurray_set_allocator(&liar);
  g_liar_live = 0;
  HurrayBuffer *b = NULL;
  HurrayError e;
  HurrayStatus st = hurray_buffer_new(256, 64, 0, &b, &e);
  tu_alloc_install(); /* back to the counting allocator for teardown */
  assert_int_equal(st, HURRAY_ERR_MISALIGNED);
  assert_null(b);
  assert_string_equal(e.field, "data");
  assert_int_equal(g_liar_live, 0); /* the bad block was given back */
}

/* ---- destroyed and foreign handles ---------------------------------------- */

static void test_destroyed_handle_is_reported(void **state) {
  (void)state;
  if (!hurray_handle_checks_enabled()) skip();
  ReleaseLog log = {0, NULL, NULL};
  HurrayBuffer *b = NULL;
  assert_int_equal(hurray_buffer_from_ptr(g_page, 64, 64, 0, 0, 0, log_release, &log, &b),
                   HURRAY_OK);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
  assert_int_equal(log.calls, 1);
  /* Used again: reported, memory untouched (ASan/valgrind would say otherwise). */
  uint64_t size = 99;
  void *data = NULL;
  HurrayBufferHandle h;
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_ERR_INTERNAL);
  assert_int_equal(hurray_buffer_retain(b), HURRAY_ERR_INTERNAL);
  assert_int_equal(hurray_buffer_byte_size(b, &size), HURRAY_ERR_INTERNAL);
  assert_int_equal(hurray_buffer_data_ptr(b, &data), HURRAY_ERR_INTERNAL);
  assert_int_equal(hurray_buffer_wire_handle(b, &h), HURRAY_ERR_INTERNAL);
  assert_int_equal(hurray_buffer_handoff_producer_synced(b), HURRAY_ERR_INTERNAL);
  assert_int_equal(size, 99);
  assert_int_equal(log.calls, 1); /* still exactly once */

  /* An owned buffer too. */
  assert_int_equal(hurray_buffer_new(64, 64, 0, &b, NULL), HURRAY_OK);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_ERR_INTERNAL);
  assert_int_equal(tu_alloc_live(), 0);
}

static void test_foreign_object_is_reported(void **state) {
  (void)state;
  /* A list is not a buffer: its identity field says so. */
  HurrayBufferList *list = NULL;
  assert_int_equal(hurray_buffer_list_new(0, &list), HURRAY_OK);
  HurrayBuffer *fake = (HurrayBuffer *)(void *)list;
  uint64_t size = 5;
  assert_int_equal(hurray_buffer_byte_size(fake, &size), HURRAY_ERR_INTERNAL);
  assert_int_equal(hurray_buffer_destroy(fake), HURRAY_ERR_INTERNAL);
  assert_int_equal(size, 5);
  assert_int_equal(hurray_buffer_list_destroy(&list), HURRAY_OK);
  /* Plain memory is not a buffer either. */
  _Alignas(16) uint8_t junk[64];
  memset(junk, 0x11, sizeof junk);
  assert_int_equal(hurray_buffer_destroy((HurrayBuffer *)(void *)junk), HURRAY_ERR_INTERNAL);
}

static void test_handle_checks_follow_the_build(void **state) {
  (void)state;
#ifdef NDEBUG
  assert_false(hurray_handle_checks_enabled());
#else
  assert_true(hurray_handle_checks_enabled());
#endif
}

static void test_abi_constants(void **state) {
  (void)state;
  assert_int_equal(HURRAY_C_ABI_VERSION, 4);
  assert_int_equal(hurray_c_abi_version(), 4);
  assert_int_equal(HURRAY_MIN_BUFFER_ALIGNMENT, 64);
  assert_int_equal(HURRAY_PAGE_ALIGNMENT, 4096);
  /* The payload structs are plain data with the reference field order. */
  HurraySyncEventPayload ev = {g_page, 1, NULL, NULL};
  HurraySyncConsumerStreamPayload cs = {g_page, 1};
  assert_ptr_equal(ev.sync_handle, g_page);
  assert_int_equal(ev.sync_handle_device_tag, 1);
  assert_ptr_equal(cs.consumer_stream, g_page);
  assert_int_equal(cs.consumer_stream_device_tag, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_from_ptr_getters_and_release, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_release_callback, setup, teardown),
      cmocka_unit_test_setup_teardown(test_alignment_values, setup, teardown),
      cmocka_unit_test_setup_teardown(test_empty_buffer_null_data, setup, teardown),
      cmocka_unit_test_setup_teardown(test_address_must_honour_alignment, setup, teardown),
      cmocka_unit_test_setup_teardown(test_address_range_must_not_wrap, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tag_domains, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cpu_is_producer_synced, setup, teardown),
      cmocka_unit_test_setup_teardown(test_device_memory_class_table, setup, teardown),
      cmocka_unit_test_setup_teardown(test_error_detail, setup, teardown),
      cmocka_unit_test_setup_teardown(test_failure_never_releases, setup, teardown),
      cmocka_unit_test_setup_teardown(test_null_arguments, setup, teardown),
      cmocka_unit_test_setup_teardown(test_retain_release_exactly_once, setup, teardown),
      cmocka_unit_test_setup_teardown(test_references_dropped_on_many_threads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_buffer_new, setup, teardown),
      cmocka_unit_test_setup_teardown(test_buffer_new_empty_and_rejects, setup, teardown),
      cmocka_unit_test_setup_teardown(test_buffer_new_allocation_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(test_buffer_new_checks_the_allocator, setup, teardown),
      cmocka_unit_test_setup_teardown(test_destroyed_handle_is_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(test_foreign_object_is_reported, setup, teardown),
      cmocka_unit_test(test_handle_checks_follow_the_build),
      cmocka_unit_test(test_abi_constants),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
