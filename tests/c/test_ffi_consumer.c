/*
 * A non-Python consumer of the native protocol: it receives a
 * (HurrayBufferList, HurrayTensorContext) pair, checks the ABI version
 * first, decodes the descriptor the context carries, and finds every buffer
 * the descriptor references in the list (count, order, sizes, placement).
 *
 * The producer side builds each descriptor from its own buffers
 * (hurray_buffer_wire_handle -> hurray_descriptor_from_fields -> encode),
 * which is how a runtime exports a tensor through the C ABI.
 */
#include <string.h>

#include "testutil.h"

/* ---- producer ------------------------------------------------------------- */

static int g_owner_releases;
static void owner_release(void *owner) {
  (void)owner;
  g_owner_releases++;
}

/* Buffers of the given sizes, filled with 1, 2, 3, ... per buffer, pushed
 * in order; the descriptor `f` gets their wire handles and is encoded into a
 * context. */
static void produce(HurrayDescriptorFields *f, const uint64_t *sizes, uint32_t n,
                    HurrayBufferList **out_list, HurrayTensorContext **out_ctx) {
  HurrayBufferHandle handles[8];
  assert_true(n <= 8);
  assert_int_equal(hurray_buffer_list_new(n, out_list), HURRAY_OK);
  for (uint32_t i = 0; i < n; i++) {
    HurrayBuffer *b = NULL;
    assert_int_equal(hurray_buffer_new(sizes[i], 64, 0, &b, NULL), HURRAY_OK);
    void *data = NULL;
    assert_int_equal(hurray_buffer_data_ptr(b, &data), HURRAY_OK);
    if (sizes[i] != 0) memset(data, (int)(i + 1), (size_t)sizes[i]);
    assert_int_equal(hurray_buffer_wire_handle(b, &handles[i]), HURRAY_OK);
    assert_int_equal(hurray_buffer_list_push(*out_list, b), HURRAY_OK);
  }
  f->buffer_count = n;
  f->buffers = handles;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  HurrayStatus st = hurray_descriptor_from_fields(f, HURRAY_DECODE_STRICT, &d, &e);
  if (st != HURRAY_OK) fail_msg("from_fields: %s", e.message);
  uint64_t len = 0;
  assert_int_equal(hurray_descriptor_encoded_len(d, &len), HURRAY_OK);
  uint8_t bytes[512];
  assert_true(len <= sizeof bytes);
  assert_int_equal(hurray_descriptor_encode(d, bytes, sizeof bytes, &len), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  assert_int_equal(hurray_tensor_context_new(HURRAY_C_ABI_VERSION, bytes, len, &g_owner_releases,
                                             owner_release, out_ctx),
                   HURRAY_OK);
  /* bytes goes out of scope here: the context holds its own copy. */
}

/* ---- consumer ------------------------------------------------------------- */

typedef struct Received {
  uint8_t type_tag;
  uint8_t layout_tag;
  uint32_t rank;
  uint32_t count;
  uint64_t sizes[8];
  uint8_t first_byte[8];
} Received;

/* What a consumer in any language does with a capsule's pair. */
static HurrayStatus consume(const HurrayBufferList *list, const HurrayTensorContext *ctx,
                            Received *r) {
  /* 1. The ABI version first: nothing else is trusted before it matches. */
  uint32_t abi = 0;
  HurrayStatus st = hurray_tensor_context_abi_version(ctx, &abi);
  if (st != HURRAY_OK) return st;
  if (abi != HURRAY_C_ABI_VERSION) return HURRAY_ERR_UNSUPPORTED;

  /* 2. The descriptor: borrowed from the context, decoded here. */
  const uint8_t *bytes = NULL;
  uint64_t len = 0;
  st = hurray_tensor_context_descriptor(ctx, &bytes, &len);
  if (st != HURRAY_OK) return st;
  if (len == 0) return HURRAY_ERR_INVALID_ARGUMENT;
  HurrayDescriptor *d = NULL;
  st = hurray_descriptor_decode(bytes, (uintptr_t)len, &d);
  if (st != HURRAY_OK) return st;

  /* 3. Every buffer the descriptor references is in the list, in order. */
  uint64_t n = 0;
  if ((st = hurray_descriptor_element_type_tag(d, &r->type_tag)) != HURRAY_OK ||
      (st = hurray_descriptor_layout_tag(d, &r->layout_tag)) != HURRAY_OK ||
      (st = hurray_descriptor_rank(d, &r->rank)) != HURRAY_OK ||
      (st = hurray_descriptor_buffer_count(d, &r->count)) != HURRAY_OK ||
      (st = hurray_buffer_list_len(list, &n)) != HURRAY_OK)
    goto done;
  if (n != r->count || r->count > 8) {
    st = HURRAY_ERR_INVALID_BUFFER_TABLE;
    goto done;
  }
  for (uint32_t i = 0; i < r->count; i++) {
    const HurrayBufferHandle *declared = NULL;
    HurrayBuffer *b = NULL; /* borrowed from the list: never destroyed here */
    uint64_t size = 0;
    uint32_t align = 0;
    uint8_t dev = 0;
    void *data = NULL;
    if ((st = hurray_descriptor_buffer(d, i, &declared)) != HURRAY_OK ||
        (st = hurray_buffer_list_get(list, i, &b)) != HURRAY_OK ||
        (st = hurray_buffer_byte_size(b, &size)) != HURRAY_OK ||
        (st = hurray_buffer_alignment(b, &align)) != HURRAY_OK ||
        (st = hurray_buffer_device_tag(b, &dev)) != HURRAY_OK ||
        (st = hurray_buffer_data_ptr(b, &data)) != HURRAY_OK)
      goto done;
    if (size < declared->byte_size) {
      st = HURRAY_ERR_BUFFER_SIZE;
      goto done;
    }
    if (align < declared->alignment) {
      st = HURRAY_ERR_MISALIGNED;
      goto done;
    }
    if (dev != declared->device_tag) {
      st = HURRAY_ERR_INVALID_TYPE;
      goto done;
    }
    r->sizes[i] = size;
    r->first_byte[i] = size != 0 ? *(const uint8_t *)data : 0;
  }
done:
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  return st;
}

/* ---- the two tensors ------------------------------------------------------ */

/* int8 weights [4, 16] with per-channel float32 scales (symmetric): buffer 0
 * the weights, buffer 1 the four scales (scale_buffer_index 1). */
static const uint64_t k_shape_w[2] = {4, 16};
static const uint64_t k_sizes_w[2] = {64, 16};

static void fields_per_channel(HurrayDescriptorFields *f, HurrayQuantization *q) {
  memset(f, 0, sizeof *f);
  memset(q, 0, sizeof *q);
  q->scheme = HURRAY_QUANT_PER_CHANNEL_AFFINE;
  q->version = HURRAY_QUANT_SCHEME_VERSION;
  q->flags = HURRAY_QUANT_FLAG_SYMMETRIC;
  q->u.per_channel.axis = 0;
  q->u.per_channel.scale_buffer_index = 1;
  q->u.per_channel.zero_point_buffer_index = HURRAY_QUANT_NO_BUFFER;
  q->u.per_channel.scale_type = HURRAY_QUANT_SCALE_F32;
  f->type_tag = HURRAY_DTYPE_INT8;
  f->rank = 2;
  f->shape = k_shape_w;
  f->layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f->quantization = q;
}

/* float32 CSR [3, 3] with 2 non-zeros: values, column indices, row pointers. */
static const uint64_t k_shape_csr[2] = {3, 3};
static const uint64_t k_sizes_csr[3] = {8, 16, 32};

static void fields_csr(HurrayDescriptorFields *f) {
  memset(f, 0, sizeof *f);
  f->type_tag = HURRAY_DTYPE_FLOAT32;
  f->rank = 2;
  f->shape = k_shape_csr;
  f->layout.tag = HURRAY_LAYOUT_CSR;
  f->layout.u.csr.nnz = 2;
}

static void check_received(const Received *r, const uint64_t *sizes, uint32_t n) {
  assert_int_equal(r->count, n);
  for (uint32_t i = 0; i < n; i++) {
    assert_int_equal(r->sizes[i], sizes[i]);
    assert_int_equal(r->first_byte[i], i + 1); /* buffer i is producer buffer i */
  }
}

static void test_per_channel_weights(void **state) {
  (void)state;
  g_owner_releases = 0;
  HurrayDescriptorFields f;
  HurrayQuantization q;
  fields_per_channel(&f, &q);
  HurrayBufferList *list = NULL;
  HurrayTensorContext *ctx = NULL;
  produce(&f, k_sizes_w, 2, &list, &ctx);
  Received r;
  memset(&r, 0, sizeof r);
  assert_int_equal(consume(list, ctx, &r), HURRAY_OK);
  assert_int_equal(r.type_tag, HURRAY_DTYPE_INT8);
  assert_int_equal(r.layout_tag, HURRAY_LAYOUT_ROW_MAJOR);
  assert_int_equal(r.rank, 2);
  check_received(&r, k_sizes_w, 2);
  assert_int_equal(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_destroy(&list), HURRAY_OK);
  assert_int_equal(g_owner_releases, 1);
}

static void test_csr(void **state) {
  (void)state;
  HurrayDescriptorFields f;
  fields_csr(&f);
  HurrayBufferList *list = NULL;
  HurrayTensorContext *ctx = NULL;
  produce(&f, k_sizes_csr, 3, &list, &ctx);
  Received r;
  memset(&r, 0, sizeof r);
  assert_int_equal(consume(list, ctx, &r), HURRAY_OK);
  assert_int_equal(r.layout_tag, HURRAY_LAYOUT_CSR);
  check_received(&r, k_sizes_csr, 3);
  assert_int_equal(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_destroy(&list), HURRAY_OK);
}

static void test_a_dropped_buffer_is_noticed(void **state) {
  (void)state;
  HurrayDescriptorFields f;
  fields_csr(&f);
  HurrayBufferList *full = NULL;
  HurrayTensorContext *ctx = NULL;
  produce(&f, k_sizes_csr, 3, &full, &ctx);
  /* A transport that lost the last buffer: the first two, retained and
   * moved into a shorter list. */
  HurrayBufferList *partial = NULL;
  assert_int_equal(hurray_buffer_list_new(2, &partial), HURRAY_OK);
  for (uint64_t i = 0; i < 2; i++) {
    HurrayBuffer *b = NULL;
    assert_int_equal(hurray_buffer_list_get(full, i, &b), HURRAY_OK);
    assert_int_equal(hurray_buffer_retain(b), HURRAY_OK);
    assert_int_equal(hurray_buffer_list_push(partial, b), HURRAY_OK);
  }
  Received r;
  memset(&r, 0, sizeof r);
  assert_int_equal(consume(partial, ctx, &r), HURRAY_ERR_INVALID_BUFFER_TABLE);
  assert_int_equal(hurray_buffer_list_destroy(&partial), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_destroy(&full), HURRAY_OK);
  assert_int_equal(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
}

static void test_a_short_buffer_is_noticed(void **state) {
  (void)state;
  HurrayDescriptorFields f;
  HurrayQuantization q;
  fields_per_channel(&f, &q);
  HurrayBufferList *list = NULL;
  HurrayTensorContext *ctx = NULL;
  produce(&f, k_sizes_w, 2, &list, &ctx);
  /* Same descriptor, but the scales delivered are 8 bytes instead of 16. */
  HurrayBufferList *bad = NULL;
  assert_int_equal(hurray_buffer_list_new(2, &bad), HURRAY_OK);
  HurrayBuffer *w = NULL, *s = NULL;
  assert_int_equal(hurray_buffer_list_get(list, 0, &w), HURRAY_OK);
  assert_int_equal(hurray_buffer_retain(w), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_push(bad, w), HURRAY_OK);
  assert_int_equal(hurray_buffer_new(8, 64, HURRAY_BUFFER_ZEROED, &s, NULL), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_push(bad, s), HURRAY_OK);
  Received r;
  memset(&r, 0, sizeof r);
  assert_int_equal(consume(bad, ctx, &r), HURRAY_ERR_BUFFER_SIZE);
  assert_int_equal(hurray_buffer_list_destroy(&bad), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_destroy(&list), HURRAY_OK);
  assert_int_equal(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
}

static void test_version_is_checked_before_the_descriptor(void **state) {
  (void)state;
  /* A context from another ABI version whose bytes are not even a
   * descriptor: the consumer must stop at the version, not at the magic. */
  HurrayTensorContext *ctx = NULL;
  static const uint8_t junk[] = {0, 1, 2, 3, 4, 5, 6, 7};
  assert_int_equal(hurray_tensor_context_new(3, junk, sizeof junk, NULL, NULL, &ctx), HURRAY_OK);
  HurrayBufferList *list = NULL;
  assert_int_equal(hurray_buffer_list_new(0, &list), HURRAY_OK);
  Received r;
  assert_int_equal(consume(list, ctx, &r), HURRAY_ERR_UNSUPPORTED);
  /* The same bytes under the right version reach the decoder, which refuses them. */
  HurrayTensorContext *ctx4 = NULL;
  assert_int_equal(hurray_tensor_context_new(HURRAY_C_ABI_VERSION, junk, sizeof junk, NULL,
                                             NULL, &ctx4),
                   HURRAY_OK);
  assert_int_not_equal(consume(list, ctx4, &r), HURRAY_OK);
  assert_int_not_equal(consume(list, ctx4, &r), HURRAY_ERR_UNSUPPORTED);
  assert_int_equal(hurray_tensor_context_destroy(&ctx4), HURRAY_OK);
  assert_int_equal(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_destroy(&list), HURRAY_OK);
}

static int setup(void **state) {
  (void)state;
  tu_alloc_install();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tu_alloc_reset();
  assert_int_equal(tu_alloc_live(), 0);
  hurray_set_allocator(NULL);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_per_channel_weights, setup, teardown),
      cmocka_unit_test_setup_teardown(test_csr, setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_dropped_buffer_is_noticed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_short_buffer_is_noticed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_version_is_checked_before_the_descriptor, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
