/* The tables of what each layout and each scheme carries (hurray/schema.h;
 * src/layout/info.c, src/quant/info.c): every tag has its entry, the entries
 * agree with the rest of the library, and a payload filled from each table
 * alone goes through the descriptor codec and back unchanged. */
#include <string.h>

#include "testutil.h"

#define RANK_SAMPLE 3u

static uint32_t clamp_rank(const HurrayLayoutInfo *info) {
  uint32_t r = RANK_SAMPLE;
  if (r < info->min_rank) r = info->min_rank;
  if (r > info->max_rank) r = info->max_rank;
  return r;
}

/* ---- every field is well formed ---------------------------------------------------- */

static void check_fields(const HurrayFieldInfo *fields, uint32_t count, size_t base_size,
                         const char *owner) {
  for (uint32_t i = 0; i < count; i++) {
    const HurrayFieldInfo *f = &fields[i];
    assert_non_null(f->name);
    assert_non_null(f->doc);
    for (uint32_t k = 0; k < i; k++) {
      assert_string_not_equal(fields[k].name, f->name);
      /* two fields never share a value */
      if (f->kind != HURRAY_VALUE_NESTED && fields[k].kind != HURRAY_VALUE_NESTED &&
          (f->flags & HURRAY_FIELD_IN_LEVEL) == (fields[k].flags & HURRAY_FIELD_IN_LEVEL))
        assert_int_not_equal(fields[k].offset, f->offset);
    }
    assert_true(f->kind >= HURRAY_VALUE_BOOL && f->kind <= HURRAY_VALUE_NESTED);
    size_t limit = (f->flags & HURRAY_FIELD_IN_LEVEL) ? sizeof(HurrayTiledLevel) : base_size;
    if (f->kind != HURRAY_VALUE_NESTED) assert_true(f->offset < limit);
    bool array = f->kind >= HURRAY_VALUE_U32_ARRAY && f->kind <= HURRAY_VALUE_U64_ARRAY;
    if (array) assert_int_equal(f->count, HURRAY_COUNT_RANK);
    if (f->kind == HURRAY_VALUE_BYTES) {
      assert_int_equal(f->count, HURRAY_COUNT_FIELD);
      assert_true(f->count_offset + sizeof(uint32_t) <= base_size);
    }
    if (!array && f->kind != HURRAY_VALUE_BYTES) assert_int_equal(f->count, HURRAY_COUNT_ONE);
    if (f->kind == HURRAY_VALUE_ENUM || f->kind == HURRAY_VALUE_TYPE_TAG) {
      assert_true(f->value_count > 0);
      for (uint32_t k = 0; k < f->value_count; k++)
        assert_string_equal(hurray_field_value_name(f, f->values[k]), f->value_names[k]);
      if (f->flags & (HURRAY_FIELD_OPTIONAL | HURRAY_FIELD_FIXED))
        assert_non_null(hurray_field_value_name(f, (uint8_t)f->default_value));
    } else {
      assert_null(hurray_field_value_name(f, 0));
    }
    if (f->kind == HURRAY_VALUE_BUFFER_INDEX) assert_non_null(f->role);
    if (f->flags & HURRAY_FIELD_NULLABLE) assert_true(f->absent_value > f->max);
    if (f->flags & HURRAY_FIELD_SYMMETRIC) assert_true(f->flags & HURRAY_FIELD_NULLABLE);
    if (f->flags & HURRAY_FIELD_CONDITIONAL) {
      assert_true(f->when_field < count && f->when_field != i);
      assert_non_null(hurray_field_value_name(&fields[f->when_field], f->when_value));
    }
    if (f->kind == HURRAY_VALUE_NESTED) assert_true(f->flags & HURRAY_FIELD_CONDITIONAL);
    (void)owner;
  }
}

/* ---- layouts ---------------------------------------------------------------------------- */

static void test_every_layout_tag_has_its_entry(void **state) {
  (void)state;
  uint32_t named = 0;
  for (unsigned t = 0; t < 256; t++) {
    uint8_t tag = (uint8_t)t;
    const HurrayLayoutInfo *info = hurray_layout_info(tag);
    switch (hurray_layout_tag_kind(tag)) {
      case HURRAY_TAG_INVALID: assert_null(info); continue;
      case HURRAY_TAG_PRIVATE:
        assert_non_null(info);
        assert_int_equal(info->tag_kind, HURRAY_TAG_PRIVATE);
        assert_false(info->buffers_known);
        assert_ptr_equal(info, hurray_layout_info(HURRAY_LAYOUT_PRIVATE_FIRST));
        continue;
      case HURRAY_TAG_NAMED: break;
      default:
        assert_non_null(info);
        assert_int_equal(info->tag_kind, HURRAY_TAG_RESERVED);
        assert_false(info->buffers_known);
        continue;
    }
    named++;
    assert_non_null(info);
    assert_int_equal(info->tag, tag);
    assert_int_equal(info->tag_kind, HURRAY_TAG_NAMED);
    assert_string_equal(info->name, hurray_layout_name(tag));
    assert_int_equal(info->layout_class, hurray_layout_class(tag));
    assert_true(info->buffers_known);
    assert_true(info->min_rank <= info->max_rank && info->max_rank <= HURRAY_MAX_RANK);
    /* the buffer roles count what hurray_layout_buffer_count says */
    for (uint32_t r = info->min_rank; r <= info->max_rank && r < 8; r++) {
      uint32_t n = 0;
      assert_true(hurray_layout_buffer_count(tag, r, &n));
      assert_int_equal(n, info->buffer_role_count + r * info->dim_role_count);
    }
    /* the per-dimension array is the first RANK field */
    const char *rank_array = NULL;
    for (uint32_t i = 0; i < info->field_count && rank_array == NULL; i++)
      if (info->fields[i].count == HURRAY_COUNT_RANK) rank_array = info->fields[i].name;
    if (rank_array == NULL)
      assert_null(hurray_layout_rank_array(tag));
    else
      assert_string_equal(rank_array, hurray_layout_rank_array(tag));
  }
  uint32_t listed = 0;
#define COUNT_(t, NAME, name) listed++;
  HURRAY_LAYOUT_TABLE(COUNT_)
#undef COUNT_
  assert_int_equal(named, listed);
}

static void test_layout_fields_are_well_formed(void **state) {
  (void)state;
  const uint8_t tags[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                          0x09, 0x0A, 0x0B, 0x40, 0xF0, 0x0C};
  for (size_t k = 0; k < sizeof tags; k++) {
    const HurrayLayoutInfo *info = hurray_layout_info(tags[k]);
    assert_non_null(info);
    assert_true(info->field_count == 0 || info->fields != NULL);
    check_fields(info->fields, info->field_count, sizeof(HurrayLayout), info->name);
  }
}

/* Sample values that every layout's rules accept for a shape of 2s. */
static uint64_t sample(const HurrayFieldInfo *f, uint32_t rank, uint32_t entry) {
  if (strcmp(f->name, "mode_order") == 0) return entry;
  if (strcmp(f->name, "paged_axis") == 0) return 0;
  if (strcmp(f->name, "member_count") == 0) return 2;
  if (f->flags & HURRAY_FIELD_GIVES_RANK) return rank;
  if (f->kind == HURRAY_VALUE_ENUM || f->kind == HURRAY_VALUE_TYPE_TAG)
    return (f->flags & (HURRAY_FIELD_OPTIONAL | HURRAY_FIELD_FIXED)) ? f->default_value
                                                                      : f->values[0];
  return 1;
}

typedef struct {
  int64_t arrays[8][RANK_SAMPLE];
  HurrayTiledLevel level;
  uint8_t bytes[4];
} Storage;

/* Fills `base` (HurrayLayout or HurrayQuantization) from the table alone. */
static void fill(const HurrayFieldInfo *fields, uint32_t count, char *base, char *level,
                 uint32_t rank, Storage *s) {
  for (uint32_t i = 0; i < count; i++) {
    const HurrayFieldInfo *f = &fields[i];
    if (f->flags & HURRAY_FIELD_CONDITIONAL) continue; /* absent: the conditions fail */
    char *p = ((f->flags & HURRAY_FIELD_IN_LEVEL) ? level : base) + f->offset;
    uint64_t v = sample(f, rank, 0);
    switch (f->kind) {
      case HURRAY_VALUE_BOOL:
      case HURRAY_VALUE_ENUM:
      case HURRAY_VALUE_TYPE_TAG: *p = (char)(uint8_t)v; break;
      case HURRAY_VALUE_U32:
      case HURRAY_VALUE_BUFFER_INDEX: {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, sizeof x);
        break;
      }
      case HURRAY_VALUE_I32: {
        int32_t x = 0;
        memcpy(p, &x, sizeof x);
        break;
      }
      case HURRAY_VALUE_U64: memcpy(p, &v, sizeof v); break;
      case HURRAY_VALUE_F32: {
        float x = 0.5f;
        memcpy(p, &x, sizeof x);
        break;
      }
      case HURRAY_VALUE_BYTES: break;
      case HURRAY_VALUE_NESTED: break;
      default: { /* arrays of `rank` entries */
        void *a = s->arrays[i];
        for (uint32_t e = 0; e < rank; e++) {
          uint64_t x = sample(f, rank, e);
          if (f->kind == HURRAY_VALUE_U32_ARRAY) {
            uint32_t y = (uint32_t)x;
            memcpy((char *)a + 4u * e, &y, 4);
          } else {
            memcpy((char *)a + 8u * e, &x, 8);
          }
        }
        memcpy(p, &a, sizeof a);
        break;
      }
    }
  }
}

/* Every field of two structs described by one table holds the same value. */
static void assert_same_fields(const HurrayFieldInfo *fields, uint32_t count, const char *a,
                               const char *al, const char *b, const char *bl, uint32_t rank) {
  for (uint32_t i = 0; i < count; i++) {
    const HurrayFieldInfo *f = &fields[i];
    if (f->kind == HURRAY_VALUE_NESTED || f->kind == HURRAY_VALUE_BYTES) continue;
    const char *pa = ((f->flags & HURRAY_FIELD_IN_LEVEL) ? al : a) + f->offset;
    const char *pb = ((f->flags & HURRAY_FIELD_IN_LEVEL) ? bl : b) + f->offset;
    size_t width = f->kind <= HURRAY_VALUE_TYPE_TAG ? 1
                   : f->kind == HURRAY_VALUE_U64    ? 8
                                                    : 4;
    if (f->kind >= HURRAY_VALUE_U32_ARRAY) {
      const void *xa, *xb;
      memcpy(&xa, pa, sizeof xa);
      memcpy(&xb, pb, sizeof xb);
      if (xa == NULL || xb == NULL) {
        assert_ptr_equal(xa, xb);
        continue;
      }
      size_t entry = f->kind == HURRAY_VALUE_U32_ARRAY ? 4 : 8;
      assert_memory_equal(xa, xb, entry * rank);
    } else {
      assert_memory_equal(pa, pb, width);
    }
  }
}

static void test_a_layout_filled_from_its_table_round_trips(void **state) {
  (void)state;
  for (unsigned t = 1; t < 0xF0; t++) {
    uint8_t tag = (uint8_t)t;
    if (hurray_layout_tag_kind(tag) != HURRAY_TAG_NAMED) continue;
    const HurrayLayoutInfo *info = hurray_layout_info(tag);
    uint32_t rank = clamp_rank(info);
    Storage s;
    memset(&s, 0, sizeof s);
    HurrayLayout l;
    memset(&l, 0, sizeof l);
    l.tag = tag;
    fill(info->fields, info->field_count, (char *)&l, (char *)&s.level, rank, &s);
    if (tag == HURRAY_LAYOUT_TILED) {
      l.u.tiled.depth = 1;
      l.u.tiled.levels = &s.level;
    }
    uint64_t shape[RANK_SAMPLE] = {2, 2, 2};
    uint32_t nbuf = 0;
    assert_true(hurray_layout_buffer_count(tag, rank, &nbuf));
    HurrayBufferHandle handles[16];
    memset(handles, 0, sizeof handles);
    for (uint32_t i = 0; i < nbuf; i++) {
      handles[i].byte_size = 4096;
      handles[i].alignment = 64;
    }
    HurrayDescriptorFields f;
    memset(&f, 0, sizeof f);
    f.type_tag = HURRAY_DTYPE_UINT8;
    f.rank = rank;
    f.shape = shape;
    f.layout = l;
    f.buffer_count = nbuf;
    f.buffers = handles;
    HurrayDescriptor *d = NULL;
    HurrayError err;
    hurray_error_clear(&err);
    HurrayStatus rc = hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, &err);
    if (rc != HURRAY_OK) fail_msg("%s: %s (%s)", info->name, err.message, err.field);
    uint8_t wire[512];
    uint64_t len = 0;
    assert_int_equal(hurray_descriptor_encode(d, wire, sizeof wire, &len), HURRAY_OK);
    HurrayDescriptor *back = NULL;
    assert_int_equal(hurray_descriptor_decode(wire, (uintptr_t)len, &back), HURRAY_OK);
    HurrayDescriptorFields g;
    assert_int_equal(hurray_descriptor_fields(back, &g), HURRAY_OK);
    assert_true(hurray_layout_equal(&l, &g.layout, rank));
    const char *gl = tag == HURRAY_LAYOUT_TILED ? (const char *)&g.layout.u.tiled.levels[0] : NULL;
    assert_same_fields(info->fields, info->field_count, (const char *)&l, (const char *)&s.level,
                       (const char *)&g.layout, gl, rank);
    assert_int_equal(hurray_descriptor_destroy(back), HURRAY_OK);
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  }
}

static void test_enum_value_names(void **state) {
  (void)state;
  const HurrayLayoutInfo *c = hurray_layout_info(HURRAY_LAYOUT_COMPOSITE);
  const HurrayFieldInfo *rule = &c->fields[0];
  assert_string_equal(rule->name, "composition_rule");
  assert_string_equal(hurray_field_value_name(rule, HURRAY_COMPOSITE_OVERLAY), "overlay");
  assert_string_equal(hurray_field_value_name(rule, 0xF3), "private");
  assert_null(hurray_field_value_name(rule, 0x07));
  assert_null(hurray_field_value_name(NULL, 0));
  const HurrayLayoutInfo *paged = hurray_layout_info(HURRAY_LAYOUT_BLOCK_PAGED);
  assert_null(hurray_field_value_name(&paged->fields[5], 0xF3)); /* no private values */
  assert_string_equal(paged->fields[5].name, "layer_index");
}

/* ---- schemes ---------------------------------------------------------------------------- */

static void test_every_scheme_tag_has_its_entry(void **state) {
  (void)state;
  for (unsigned t = 0; t < 256; t++) {
    uint8_t s = (uint8_t)t;
    const HurrayQuantSchemeInfo *info = hurray_quant_scheme_info(s);
    HurrayTagKind kind = hurray_quant_scheme_kind(s);
    if (kind == HURRAY_TAG_INVALID) {
      assert_null(info);
    } else if (kind != HURRAY_TAG_NAMED) {
      assert_non_null(info);
      assert_int_equal(info->scheme, 0);
      assert_string_equal(info->name, "opaque");
    } else {
      assert_non_null(info);
      assert_int_equal(info->scheme, s);
      assert_string_equal(info->name, hurray_quant_scheme_name(s));
    }
  }
#define LEN_(tag, NAME, name, len) \
  assert_int_equal(hurray_quant_scheme_info(tag)->payload_len, len);
  HURRAY_QUANT_SCHEME_TABLE(LEN_)
#undef LEN_
}

static void test_scheme_fields_are_well_formed(void **state) {
  (void)state;
  for (unsigned t = 1; t <= 0xF0; t++) {
    const HurrayQuantSchemeInfo *info = hurray_quant_scheme_info((uint8_t)t);
    if (info->scheme != t && t != 0xF0) continue;
    check_fields(info->fields, info->field_count, sizeof(HurrayQuantization), info->name);
  }
}

/* Each scheme filled from its table passes the scheme's rules and goes
 * through its codec unchanged, symmetric and with zero points. */
static void test_a_scheme_filled_from_its_table_round_trips(void **state) {
  (void)state;
  for (unsigned t = 1; t < 0xF0; t++) {
    if (hurray_quant_scheme_kind((uint8_t)t) != HURRAY_TAG_NAMED) continue;
    const HurrayQuantSchemeInfo *info = hurray_quant_scheme_info((uint8_t)t);
    for (int with_zero_points = 0; with_zero_points < 2; with_zero_points++) {
      HurrayQuantization q;
      memset(&q, 0, sizeof q);
      q.scheme = info->scheme;
      q.version = HURRAY_QUANT_SCHEME_VERSION;
      Storage s;
      memset(&s, 0, sizeof s);
      fill(info->fields, info->field_count, (char *)&q, NULL, 0, &s);
      bool has_symmetric = false;
      for (uint32_t i = 0; i < info->field_count; i++) {
        const HurrayFieldInfo *f = &info->fields[i];
        if (strcmp(f->name, "block_size") == 0) {
          uint32_t k = 32;
          memcpy((char *)&q + f->offset, &k, sizeof k);
        }
        if (f->flags & HURRAY_FIELD_SYMMETRIC) {
          has_symmetric = true;
          uint32_t z = with_zero_points ? 2u : (uint32_t)f->absent_value;
          memcpy((char *)&q + f->offset, &z, sizeof z);
          if (!with_zero_points) q.flags |= HURRAY_QUANT_FLAG_SYMMETRIC;
        }
      }
      if (with_zero_points && !has_symmetric) continue;
      HurrayError err;
      hurray_error_clear(&err);
      if (hurray_quant_check(&q, HURRAY_DECODE_STRICT, &err) != HURRAY_OK)
        fail_msg("%s: %s (%s)", info->name, err.message, err.field);
      uint8_t wire[64];
      uint64_t len = 0;
      assert_int_equal(hurray_quant_encode(&q, wire, sizeof wire, &len), HURRAY_OK);
      assert_int_equal(len, info->payload_len);
      HurrayQuantization back;
      assert_int_equal(hurray_quant_decode(wire, (uintptr_t)len, HURRAY_DECODE_STRICT, &back, &err),
                       HURRAY_OK);
      assert_int_equal(back.flags, q.flags);
      assert_same_fields(info->fields, info->field_count, (const char *)&q, NULL,
                         (const char *)&back, NULL, 0);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_layout_tag_has_its_entry),
      cmocka_unit_test(test_layout_fields_are_well_formed),
      cmocka_unit_test(test_a_layout_filled_from_its_table_round_trips),
      cmocka_unit_test(test_enum_value_names),
      cmocka_unit_test(test_every_scheme_tag_has_its_entry),
      cmocka_unit_test(test_scheme_fields_are_well_formed),
      cmocka_unit_test(test_a_scheme_filled_from_its_table_round_trips),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
