/* What a partial read takes and gives (hurray_file_slice_plan, src/file/slice_source.c):
 * the ranges and bytes of a NumPy basic index, the descriptor of the result (shape,
 * device, the sections that travel and those that do not), the refusal of a view that
 * repeats its base's elements, and the errors of the checks it runs first. */
#include <string.h>

#include "testutil.h"

#include "hurray/hurray.h"

static HurrayIndexItem integer(int64_t v) { return (HurrayIndexItem){HURRAY_INDEX_INTEGER, v, 0, 0}; }
static HurrayIndexItem slice(int64_t a, int64_t b, int64_t s) {
  return (HurrayIndexItem){HURRAY_INDEX_SLICE, a, b, s};
}
static const HurrayIndexItem NEWAXIS = {HURRAY_INDEX_NEWAXIS, 0, 0, 0};

/* A float32 tensor of shape (6, 4), row-major, on a CUDA pinned buffer, with a
 * per-tensor scale, statistics and a shard section. */
typedef struct Src {
  uint64_t shape[2];
  uint64_t parent[2];
  uint64_t offset[2];
  HurrayBufferHandle h;
  HurrayQuantization q;
  HurrayStatistics stats;
  HurrayShard shard;
  HurrayDescriptorFields f;
} Src;

static void make_src(Src *s) {
  memset(s, 0, sizeof *s);
  s->shape[0] = 6;
  s->shape[1] = 4;
  s->parent[0] = 12;
  s->parent[1] = 4;
  s->offset[0] = 6;
  s->h.byte_size = 6 * 4 * 4;
  s->h.alignment = 64;
  s->h.device_tag = HURRAY_DEVICE_CUDA;
  s->h.memory_class = HURRAY_MEMORY_HOST_PINNED;
  s->q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  s->q.version = 1;
  s->q.u.per_tensor.scale = 0.5f;
  s->stats.computed_mask = 0;
  s->shard.parent_shape = s->parent;
  s->shard.offset = s->offset;
  s->f.version_major = 1;
  s->f.type_tag = HURRAY_DTYPE_INT8;
  s->f.rank = 2;
  s->f.shape = s->shape;
  s->f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  s->f.buffer_count = 1;
  s->f.buffers = &s->h;
  s->f.quantization = &s->q;
  s->f.statistics = &s->stats;
  s->f.shard = &s->shard;
}

static void test_result_descriptor(void **state) {
  (void)state;
  Src s;
  make_src(&s);
  s.h.byte_size = 6 * 4; /* int8 */
  /* x[1:5:2, None, -1]: shape (2, 1), two bytes */
  HurrayIndexItem items[3] = {slice(1, 5, 2), NEWAXIS, integer(-1)};
  HurraySliceRange r[2];
  uint64_t bytes = 99;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_slice_plan(&s.f, false, items, 3, r, &bytes, &d, &e), HURRAY_OK);
  assert_non_null(d);
  assert_int_equal(bytes, 2);
  assert_int_equal(r[0].start, 1);
  assert_int_equal(r[0].step, 2);
  assert_int_equal(r[1].start, 3);
  assert_int_equal(r[1].stop, 4);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.type_tag, HURRAY_DTYPE_INT8);
  assert_int_equal(f.layout.tag, HURRAY_LAYOUT_ROW_MAJOR);
  assert_int_equal(f.rank, 2);
  assert_int_equal(f.shape[0], 2);
  assert_int_equal(f.shape[1], 1);
  assert_int_equal(f.byte_offset, 0);
  assert_int_equal(f.buffer_count, 1);
  assert_int_equal(f.buffers[0].byte_size, 2);
  assert_int_equal(f.buffers[0].alignment, 64);
  /* the device kind and memory class travel */
  assert_int_equal(f.buffers[0].device_tag, HURRAY_DEVICE_CUDA);
  assert_int_equal(f.buffers[0].memory_class, HURRAY_MEMORY_HOST_PINNED);
  /* a per-tensor scale holds for every element; shard and statistics describe the whole */
  assert_non_null(f.quantization);
  assert_int_equal(f.quantization->scheme, HURRAY_QUANT_PER_TENSOR_AFFINE);
  assert_true(f.quantization->u.per_tensor.scale == 0.5f);
  assert_null(f.statistics);
  assert_null(f.shard);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);

  /* an empty selection: no bytes, a valid descriptor all the same */
  HurrayIndexItem empty[1] = {slice(3, 3, 1)};
  assert_int_equal(hurray_file_slice_plan(&s.f, false, empty, 1, r, &bytes, &d, &e), HURRAY_OK);
  assert_int_equal(bytes, 0);
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.shape[0], 0);
  assert_int_equal(f.shape[1], 4);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

/* A view with a zero stride over a 4-byte base: a selection of more than the
 * base's bytes is refused before anything is allocated; one within it is not,
 * and a stored tensor is never refused for it. */
static void test_view_repeating_its_base(void **state) {
  (void)state;
  uint64_t shape[1] = {(uint64_t)1 << 31};
  int64_t strides[1] = {0};
  HurrayBufferHandle h;
  memset(&h, 0, sizeof h);
  h.byte_size = 4;
  h.alignment = 64;
  HurrayDescriptorFields v;
  memset(&v, 0, sizeof v);
  v.version_major = 1;
  v.type_tag = HURRAY_DTYPE_FLOAT32;
  v.rank = 1;
  v.shape = shape;
  v.layout.tag = HURRAY_LAYOUT_STRIDED;
  v.layout.u.strided.strides = strides;
  v.buffer_count = 1;
  v.buffers = &h;
  HurrayIndexItem all[1] = {slice(0, INT64_MAX, 1)};
  HurraySliceRange r[1];
  uint64_t bytes = 99;
  HurrayDescriptor *d = (HurrayDescriptor *)&h; /* not NULL: set to NULL on failure */
  HurrayError e;
  assert_int_equal(hurray_file_slice_plan(&v, true, all, 1, r, &bytes, &d, &e),
                   HURRAY_ERR_UNSUPPORTED);
  assert_null(d);
  assert_int_equal(bytes, 0);
  assert_non_null(strstr(e.reason, "the view repeats elements of its base"));
  assert_non_null(strstr(e.reason, "8589934592 bytes out of a base of 4"));
  HurrayIndexItem one[1] = {slice(5, 6, 1)};
  assert_int_equal(hurray_file_slice_plan(&v, true, one, 1, r, &bytes, &d, &e), HURRAY_OK);
  assert_int_equal(bytes, 4);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  HurrayIndexItem two[1] = {slice(5, 7, 1)};
  assert_int_equal(hurray_file_slice_plan(&v, true, two, 1, r, &bytes, &d, &e),
                   HURRAY_ERR_UNSUPPORTED);
  assert_int_equal(hurray_file_slice_plan(&v, false, two, 1, r, &bytes, &d, &e), HURRAY_OK);
  assert_int_equal(bytes, 8);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_errors(void **state) {
  (void)state;
  Src s;
  make_src(&s);
  s.h.byte_size = 6 * 4;
  HurraySliceRange r[2];
  uint64_t bytes = 0;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  HurrayIndexItem items[1] = {integer(6)};
  /* the index: the words hurray_layout_basic_index uses */
  assert_int_equal(hurray_file_slice_plan(&s.f, false, items, 1, r, &bytes, &d, &e),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_null(d);
  assert_non_null(strstr(e.message, "index 6 is out of bounds for axis 0 with size 6"));
  /* what cannot be sliced at all: as hurray_file_slice_check says */
  s.q.scheme = HURRAY_QUANT_PER_CHANNEL_AFFINE;
  items[0] = integer(0);
  assert_int_equal(hurray_file_slice_plan(&s.f, false, items, 1, r, &bytes, &d, &e),
                   HURRAY_ERR_UNSUPPORTED);
  assert_non_null(strstr(e.reason, "per_tensor_affine"));
  s.q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  /* NULL pointers */
  assert_int_equal(hurray_file_slice_plan(NULL, false, items, 1, r, &bytes, &d, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_slice_plan(&s.f, false, NULL, 1, r, &bytes, &d, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_slice_plan(&s.f, false, items, 1, NULL, &bytes, &d, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_slice_plan(&s.f, false, items, 1, r, NULL, &d, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_slice_plan(&s.f, false, items, 1, r, &bytes, NULL, &e),
                   HURRAY_ERR_NULL_POINTER);
  /* no items: the whole tensor */
  assert_int_equal(hurray_file_slice_plan(&s.f, false, NULL, 0, r, &bytes, &d, NULL), HURRAY_OK);
  assert_int_equal(bytes, 24);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_result_descriptor),
      cmocka_unit_test(test_view_repeating_its_base),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
