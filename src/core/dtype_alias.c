/*
 * The names other libraries give hurray's element types (include/hurray/dtype.h,
 * hurray_dtype_from_alias): NumPy with ml_dtypes, PyTorch and safetensors'
 * dtype codes; the foreign types that look like ours but are not, with the
 * reason; and, for a name nobody gives, the closest valid one.
 */
#include "hurray/dtype.h"

#include <stdio.h>
#include <string.h>

#include "internal/common.h"

typedef struct {
  const char *alias;
  const char *name; /* k_aliases: hurray's name; k_not_ours: why not */
} Alias;

static const Alias k_aliases[] = {
    /* ml_dtypes / NumPy and PyTorch spellings */
    {"float8_e4m3fn", "float8_e4m3"}, {"float8_e8m0fnu", "float8_e8m0"},
    {"float6_e2m3fn", "float6_e2m3"}, {"float6_e3m2fn", "float6_e3m2"},
    {"float4_e2m1fn", "float4_e2m1"}, {"bool_", "bool"},
    {"half", "float16"},              {"single", "float32"},
    {"double", "float64"},            {"cfloat", "complex64"},
    {"cdouble", "complex128"},
    /* safetensors' dtype codes */
    {"F64", "float64"},  {"F32", "float32"},  {"F16", "float16"},   {"BF16", "bfloat16"},
    {"I64", "int64"},    {"I32", "int32"},    {"I16", "int16"},     {"I8", "int8"},
    {"U64", "uint64"},   {"U32", "uint32"},   {"U16", "uint16"},    {"U8", "uint8"},
    {"BOOL", "bool"},    {"C64", "complex64"}, {"F8_E4M3", "float8_e4m3"},
    {"F8_E5M2", "float8_e5m2"}, {"F8_E8M0", "float8_e8m0"}, {"F6_E2M3", "float6_e2m3"},
    {"F6_E3M2", "float6_e3m2"}, {"F4", "float4_e2m1"},
};

static const Alias k_not_ours[] = {
    {"float8_e4m3fnuz", "hurray's float8_e4m3 is the OCP 'fn' variant (torch.float8_e4m3fn)"},
    {"float8_e5m2fnuz", "hurray's float8_e5m2 is the OCP variant (torch.float8_e5m2)"},
    {"float4_e2m1fn_x2", "it packs two elements per item; use hurray's float4_e2m1 with the "
                         "unpacked shape"},
    {"complex32", "hurray has complex64 and complex128"},
    {"longdouble", "NumPy's long double is not IEEE binary128 on most platforms; hurray's "
                   "float128 is"},
    {"float96", "it is x87 extended precision, not IEEE binary128 (hurray's float128)"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Edit distance (insertions, deletions, substitutions), case-insensitive,
 * capped: names are short and the tables small. */
static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 40 || lb > 40) return 99;
  size_t row[41];
  for (size_t j = 0; j <= lb; j++) row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      int ca = a[i - 1] >= 'A' && a[i - 1] <= 'Z' ? a[i - 1] + 32 : a[i - 1];
      int cb = b[j - 1] >= 'A' && b[j - 1] <= 'Z' ? b[j - 1] + 32 : b[j - 1];
      size_t best = diag + (ca != cb);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

HurrayStatus hurray_dtype_from_alias(const char *name, uint8_t *out_tag, HurrayError *err) {
  if (name == NULL || out_tag == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "name and out_tag are required");
  if (hurray_dtype_from_name(name, out_tag) == HURRAY_OK) return HURRAY_OK;
  const char *bare = strncmp(name, "torch.", 6) == 0 ? name + 6 : name;
  if (bare != name && hurray_dtype_from_name(bare, out_tag) == HURRAY_OK) return HURRAY_OK;
  for (size_t i = 0; i < COUNT(k_aliases); i++)
    if (strcmp(bare, k_aliases[i].alias) == 0)
      return hurray_dtype_from_name(k_aliases[i].name, out_tag);
  for (size_t i = 0; i < COUNT(k_not_ours); i++)
    if (strcmp(bare, k_not_ours[i].alias) == 0)
      return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "name", "%s",
                          k_not_ours[i].name);
  /* the closest of hurray's names and the aliases, when close enough */
  const char *closest = NULL;
  size_t best = 99;
  for (unsigned tag = 0; tag < 256; tag++) {
    const char *n = hurray_dtype_name((uint8_t)tag);
    size_t d = n != NULL ? edit_distance(name, n) : 99;
    if (d < best) best = d, closest = n;
  }
  for (size_t i = 0; i < COUNT(k_aliases); i++) {
    size_t d = edit_distance(name, k_aliases[i].alias);
    if (d < best) best = d, closest = k_aliases[i].name;
  }
  size_t len = strlen(name);
  if (closest != NULL && best <= (len > 6 ? len / 3 : 2))
    return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, HURRAY_NO_OFFSET, "name",
                        "did you mean '%s'?", closest);
  return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, HURRAY_NO_OFFSET, "name",
                      "no element type has this name");
}
