/*
 * KV arrays built from values (file.h, hurray_kv_array_pack): a binding
 * converts each element as it converts a scalar value, and the library lays
 * the elements out as the array's C type (HurrayKvString, int64_t, uint64_t,
 * double, bool or HurrayKvBytes) and checks that they share one type.
 */
#include "internal/file.h"

HurrayStatus hurray_kv_array_pack(uint8_t elem_tag, const HurrayKvValue *elems, uint32_t count,
                                  void *storage, HurrayKvValue *out, HurrayError *err) {
  if (out == NULL || (count > 0 && (elems == NULL || storage == NULL)))
    return HURRAY_ERR_NULL_POINTER;
  if (elem_tag < HURRAY_KV_STRING || elem_tag > HURRAY_KV_BYTES)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, NULL,
                        "element tag 0x%02x is no KV scalar type", elem_tag);
  for (uint32_t i = 0; i < count; i++) {
    const HurrayKvValue *e = &elems[i];
    if (e->tag != elem_tag)
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, NULL,
                          "an array holds one type: element %u has tag 0x%02x, the array 0x%02x",
                          i, e->tag, elem_tag);
    switch (elem_tag) {
      case HURRAY_KV_STRING: ((HurrayKvString *)storage)[i] = e->v.str; break;
      case HURRAY_KV_INT64: ((int64_t *)storage)[i] = e->v.i64; break;
      case HURRAY_KV_UINT64: ((uint64_t *)storage)[i] = e->v.u64; break;
      case HURRAY_KV_FLOAT64: ((double *)storage)[i] = e->v.f64; break;
      case HURRAY_KV_BOOL: ((bool *)storage)[i] = e->v.b; break;
      default: ((HurrayKvBytes *)storage)[i] = e->v.bytes; break;
    }
  }
  *out = hurray_kv_array(elem_tag, count > 0 ? storage : NULL, count);
  return HURRAY_OK;
}
