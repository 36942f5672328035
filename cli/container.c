/*
 * hurray-inspect: .hrry containers. The file reader of libhurray
 * (include/hurray/file.h) opens and validates the container; this file shows
 * its header, trailer, index, key-value metadata and every tensor, field by
 * field, in file order, with composites indented under their heads.
 */
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <malloc.h>
#endif

#include <hurray/file.h>

#include "inspect.h"

/* Largest data alignment a container may declare: the copy of the input is
 * aligned to it so that buffers meet their declared alignment. */
#define CONTAINER_ALIGNMENT ((size_t)HURRAY_FILE_MAX_ALIGNMENT)
#define DISPLAY_MAX_DEPTH 64u

static uint64_t le(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

/* One fixed-width field of the header or trailer, reported like a descriptor field. */
static void fixed_field(Report *r, const uint8_t *bytes, uint64_t at, unsigned size,
                        const char *name, HurrayFieldKind kind, const char *meaning) {
  HurrayFieldEvent ev;
  memset(&ev, 0, sizeof ev);
  ev.offset = at;
  ev.size = size;
  ev.path = name;
  ev.kind = kind;
  ev.bytes = bytes + at;
  if (kind == HURRAY_FIELD_UINT) ev.u = le(bytes + at, size);
  ev.meaning = meaning;
  report_field(r, &ev, 0, 2);
}

static void flags_text(uint32_t flags, char *buf, size_t size) {
  size_t o = 0;
  buf[0] = '\0';
  static const struct { uint32_t bit; const char *name; } k[] = {
      {HURRAY_FILE_FLAG_HAS_KV_METADATA, "HAS_KV_METADATA"},
      {HURRAY_FILE_FLAG_SORTED_INDEX, "SORTED_INDEX"},
      {HURRAY_FILE_FLAG_HAS_INDEX_CRC32C, "HAS_INDEX_CRC32C"}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
    if ((flags & k[i].bit) && o < size)
      o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? " | " : "", k[i].name);
  if ((flags & ~HURRAY_FILE_FLAGS_KNOWN) && o < size)
    snprintf(buf + o, size - o, "%sreserved bits 0x%08X", o ? " | " : "",
             flags & ~HURRAY_FILE_FLAGS_KNOWN);
  if (buf[0] == '\0') snprintf(buf, size, "none");
}

static void show_header(Report *r, const uint8_t *b, size_t len) {
  if (r->json) j_open(r, "header", '[');
  else fprintf(r->out, "\nheader\n");
  if (len < HURRAY_FILE_HEADER_LEN) {
    if (r->json) j_close(r, ']');
    else fprintf(r->out, "  (only %zu bytes: the header needs 64)\n", len);
    return;
  }
  report_field_header(r, 2);
  char flags[128];
  flags_text((uint32_t)le(b + 12, 4), flags, sizeof flags);
  fixed_field(r, b, 0, 8, "magic", HURRAY_FIELD_BYTES,
              memcmp(b, HURRAY_FILE_MAGIC, 8) == 0 ? "HRRYFILE" : "not HRRYFILE");
  fixed_field(r, b, 8, 1, "container_version_major", HURRAY_FIELD_UINT, NULL);
  fixed_field(r, b, 9, 1, "container_version_minor", HURRAY_FIELD_UINT, NULL);
  fixed_field(r, b, 10, 2, "_reserved", HURRAY_FIELD_BYTES, NULL);
  fixed_field(r, b, 12, 4, "file_flags", HURRAY_FIELD_UINT, flags);
  fixed_field(r, b, 16, 4, "data_buffer_alignment", HURRAY_FIELD_UINT, NULL);
  fixed_field(r, b, 20, 8, "first_descriptor_offset", HURRAY_FIELD_UINT, NULL);
  fixed_field(r, b, 28, 8, "tensor_count_hint", HURRAY_FIELD_UINT,
              le(b + 28, 8) == UINT64_MAX ? "unknown" : NULL);
  fixed_field(r, b, 36, 28, "_reserved", HURRAY_FIELD_BYTES, NULL);
  if (r->json) j_close(r, ']');
}

static void show_trailer(Report *r, const uint8_t *b, size_t len) {
  if (len < HURRAY_FILE_HEADER_LEN + HURRAY_FILE_TRAILER_LEN) return;
  uint64_t t = len - HURRAY_FILE_TRAILER_LEN;
  if (r->json) j_open(r, "trailer", '[');
  else fprintf(r->out, "\ntrailer at byte %llu\n", (unsigned long long)t);
  report_field_header(r, 2);
  fixed_field(r, b, t, 8, "index_offset", HURRAY_FIELD_UINT, NULL);
  fixed_field(r, b, t + 8, 8, "index_length", HURRAY_FIELD_UINT, NULL);
  fixed_field(r, b, t + 16, 8, "kv_offset", HURRAY_FIELD_UINT,
              le(b + t + 16, 8) == 0 ? "no KV section" : NULL);
  fixed_field(r, b, t + 24, 4, "kv_length", HURRAY_FIELD_UINT, NULL);
  char crc[16];
  snprintf(crc, sizeof crc, "0x%08X", (unsigned)le(b + t + 28, 4));
  fixed_field(r, b, t + 28, 4, "index_crc32c", HURRAY_FIELD_UINT, crc);
  fixed_field(r, b, t + 32, 4, "_reserved", HURRAY_FIELD_BYTES, NULL);
  fixed_field(r, b, t + 36, 4, "magic", HURRAY_FIELD_BYTES,
              memcmp(b + t + 36, HURRAY_FILE_TRAILER_MAGIC, 4) == 0 ? "HRRY" : "not HRRY");
  if (r->json) j_close(r, ']');
}

/* A NUL-terminated copy of a length-delimited name (free with free()). */
static char *cstr(const char *s, size_t n) {
  char *c = malloc(n + 1);
  if (c == NULL) return NULL;
  if (n > 0) memcpy(c, s, n);
  c[n] = '\0';
  return c;
}

static void show_index(Report *r, const HurrayFile *f, const HurrayFileInfo *info) {
  uint64_t n = hurray_file_tensor_count(f);
  if (r->json) {
    j_open(r, "index", '{');
    j_u64(r, "offset", info->index_offset);
    j_u64(r, "length", info->index_length);
    j_u64(r, "crc32c", info->index_crc32c);
    j_bool(r, "crc32c_checked", (info->flags & HURRAY_FILE_FLAG_HAS_INDEX_CRC32C) != 0);
    j_open(r, "entries", '[');
  } else {
    fprintf(r->out, "\nindex at byte %llu, %llu bytes: %llu entr%s%s\n",
            (unsigned long long)info->index_offset, (unsigned long long)info->index_length,
            (unsigned long long)n, n == 1 ? "y" : "ies",
            (info->flags & HURRAY_FILE_FLAG_HAS_INDEX_CRC32C) ? ", CRC-32C verified" : "");
  }
  for (uint64_t i = 0; i < n; i++) {
    HurrayFileEntry e;
    if (hurray_file_entry(f, i, &e) != HURRAY_OK) break;
    char *name = cstr(e.name, e.name_len);
    if (r->json) {
      j_open(r, NULL, '{');
      j_str(r, "name", name);
      j_u64(r, "descriptor_offset", e.descriptor_offset);
      j_u64(r, "descriptor_length", e.descriptor_length);
      j_u64(r, "data_offset", e.data_offset);
      j_u64(r, "data_length", e.data_length);
      j_close(r, '}');
    } else {
      fprintf(r->out, "  [%llu] \"%s\": descriptor at byte %llu (%u bytes), data at byte %llu (%llu bytes)\n",
              (unsigned long long)i, name != NULL ? name : "?",
              (unsigned long long)e.descriptor_offset, e.descriptor_length,
              (unsigned long long)e.data_offset, (unsigned long long)e.data_length);
    }
    free(name);
  }
  if (r->json) {
    j_close(r, ']');
    j_close(r, '}');
  }
}

static const char *kv_tag_name(uint8_t tag) {
  switch (tag) {
    case HURRAY_KV_STRING: return "string";
    case HURRAY_KV_INT64: return "int64";
    case HURRAY_KV_UINT64: return "uint64";
    case HURRAY_KV_FLOAT64: return "float64";
    case HURRAY_KV_BOOL: return "bool";
    case HURRAY_KV_BYTES: return "bytes";
    case HURRAY_KV_ARRAY: return "array";
    default: return "unknown";
  }
}

/* One scalar KV value (tag `tag`, element `i` of an array when `arr`). */
static void kv_scalar(Report *r, const HurrayKvValue *v, uint8_t tag, bool arr, uint32_t i) {
  char num[48];
  switch (tag) {
    case HURRAY_KV_STRING: {
      HurrayKvString s = arr ? v->v.str_array[i] : v->v.str;
      char *c = cstr(s.data != NULL ? s.data : "", s.len);
      if (r->json) {
        j_str(r, arr ? NULL : "value", c);
      } else {
        fputc('"', r->out);
        for (uint32_t k = 0; k < s.len; k++) {
          unsigned char ch = (unsigned char)s.data[k];
          if (ch == '"' || ch == '\\') fprintf(r->out, "\\%c", ch);
          else if (ch < 0x20 || ch == 0x7F) fprintf(r->out, "\\x%02x", ch);
          else fputc(ch, r->out);
        }
        fputc('"', r->out);
      }
      free(c);
      return;
    }
    case HURRAY_KV_INT64: {
      int64_t x = arr ? v->v.i64_array[i] : v->v.i64;
      if (r->json) j_i64(r, arr ? NULL : "value", x);
      else fprintf(r->out, "%lld", (long long)x);
      return;
    }
    case HURRAY_KV_UINT64: {
      uint64_t x = arr ? v->v.u64_array[i] : v->v.u64;
      if (r->json) j_u64(r, arr ? NULL : "value", x);
      else fprintf(r->out, "%llu", (unsigned long long)x);
      return;
    }
    case HURRAY_KV_FLOAT64: {
      double x = arr ? v->v.f64_array[i] : v->v.f64;
      if (r->json) {
        j_f64(r, arr ? NULL : "value", x);
      } else {
        fmt_double(x, num, sizeof num);
        fputs(num, r->out);
      }
      return;
    }
    case HURRAY_KV_BOOL: {
      bool x = arr ? v->v.bool_array[i] : v->v.b;
      if (r->json) j_bool(r, arr ? NULL : "value", x);
      else fputs(x ? "true" : "false", r->out);
      return;
    }
    case HURRAY_KV_BYTES: {
      HurrayKvBytes b = arr ? v->v.bytes_array[i] : v->v.bytes;
      if (r->json) {
        j_hex(r, arr ? NULL : "value", b.data, b.len);
      } else {
        fprintf(r->out, "<%u bytes", b.len);
        for (uint32_t k = 0; k < b.len && k < 16; k++) fprintf(r->out, " %02x", b.data[k]);
        fputs(b.len > 16 ? " ..>" : ">", r->out);
      }
      return;
    }
    default:
      if (r->json) j_str(r, arr ? NULL : "value", NULL);
      else fputs("?", r->out);
  }
}

static void show_kv(Report *r, const HurrayFile *f, const HurrayFileInfo *info) {
  uint32_t n = hurray_file_kv_count(f);
  if (r->json) {
    j_open(r, "kv", '{');
    j_u64(r, "offset", info->kv_offset);
    j_u64(r, "length", info->kv_length);
    j_open(r, "entries", '[');
  } else if (info->kv_offset == 0) {
    fprintf(r->out, "\nno key-value metadata\n");
  } else {
    fprintf(r->out, "\nkey-value metadata at byte %llu, %u bytes: %u entr%s\n",
            (unsigned long long)info->kv_offset, info->kv_length, n, n == 1 ? "y" : "ies");
  }
  for (uint32_t i = 0; i < n; i++) {
    const char *key = NULL;
    size_t key_len = 0;
    const HurrayKvValue *v = NULL;
    if (hurray_file_kv_get(f, i, &key, &key_len, &v) != HURRAY_OK) break;
    char *k = cstr(key, key_len);
    if (r->json) {
      j_open(r, NULL, '{');
      j_str(r, "key", k);
      j_str(r, "type", kv_tag_name(v->tag));
      if (v->tag == HURRAY_KV_ARRAY) {
        j_str(r, "element_type", kv_tag_name(v->elem_tag));
        j_open(r, "value", '[');
        for (uint32_t e = 0; e < v->count; e++) kv_scalar(r, v, v->elem_tag, true, e);
        j_close(r, ']');
      } else {
        kv_scalar(r, v, v->tag, false, 0);
      }
      j_close(r, '}');
    } else {
      fprintf(r->out, "  %s = ", k != NULL ? k : "?");
      if (v->tag == HURRAY_KV_ARRAY) {
        fputc('[', r->out);
        for (uint32_t e = 0; e < v->count; e++) {
          if (e) fputs(", ", r->out);
          kv_scalar(r, v, v->elem_tag, true, e);
        }
        fprintf(r->out, "] (array of %s)\n", kv_tag_name(v->elem_tag));
      } else {
        kv_scalar(r, v, v->tag, false, 0);
        fprintf(r->out, " (%s)\n", kv_tag_name(v->tag));
      }
    }
    free(k);
  }
  if (r->json) {
    j_close(r, ']');
    j_close(r, '}');
  }
}

typedef struct Level {
  uint64_t head_position;
  uint32_t declared;
  uint32_t next;
} Level;

/* Shows tensor `pos` (file order); false after reporting an error. */
static bool show_tensor(Report *r, const HurrayFile *f, const uint8_t *base, size_t len,
                        uint64_t pos, unsigned depth, const Level *parent, bool *is_head,
                        uint32_t *members) {
  const unsigned indent = 2 * depth;
  *is_head = false;
  *members = 0;
  uint64_t index = 0;
  HurrayFileEntry e;
  if (hurray_file_position(f, pos, &index) != HURRAY_OK || hurray_file_entry(f, index, &e) != HURRAY_OK)
    return false;
  char *name = cstr(e.name, e.name_len);
  if (r->json) {
    j_open(r, NULL, '{');
    j_u64(r, "position", pos);
    j_u64(r, "index", index);
    j_str(r, "name", name);
    j_u64(r, "offset", e.descriptor_offset);
    j_u64(r, "depth", depth);
    if (parent != NULL) {
      j_u64(r, "member_of", parent->head_position);
      j_u64(r, "member_index", parent->next);
    }
  } else {
    fprintf(r->out, "\n%*stensor %llu \"%s\" (index entry %llu) at byte %llu", (int)indent, "",
            (unsigned long long)pos, name != NULL ? name : "?", (unsigned long long)index,
            (unsigned long long)e.descriptor_offset);
    if (parent != NULL)
      fprintf(r->out, " (member %u of tensor %llu)", parent->next,
              (unsigned long long)parent->head_position);
    fputc('\n', r->out);
  }
  free(name);
  /* The index was validated against the file size when the file was opened. */
  size_t dl = e.descriptor_length;
  if (e.descriptor_offset > len || dl > len - e.descriptor_offset) dl = 0;
  char context[64];
  snprintf(context, sizeof context, "descriptor at byte %llu",
           (unsigned long long)e.descriptor_offset);
  HurrayDescriptor *d = NULL;
  if (inspect_descriptor_fields(r, base + e.descriptor_offset, dl, e.descriptor_offset, indent,
                                context, &d, NULL) != HURRAY_OK) {
    if (r->json) j_close(r, '}');
    return false;
  }
  report_summary(r, d, indent);
  HurrayDescriptorFields df;
  HurrayStatus fst = hurray_descriptor_fields(d, &df);
  if (fst != HURRAY_OK) {
    report_error(r, "error", fst, HURRAY_NO_OFFSET, NULL, context, hurray_status_message(fst),
                 indent);
    if (r->json) j_close(r, '}');
    inspect_descriptor_free(d);
    return false;
  }
  if (df.layout.tag == HURRAY_LAYOUT_COMPOSITE) {
    *is_head = true;
    *members = df.layout.u.composite.member_count;
  }
  if (r->hex) {
    if (!r->json) fprintf(r->out, "%*s  descriptor bytes:\n", (int)indent, "");
    report_hexdump(r, "hex", base + e.descriptor_offset, dl, e.descriptor_offset, indent);
  }
  HurrayFileTensor *t = NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus st = hurray_file_tensor(f, index, &t, &err);
  if (st != HURRAY_OK) {
    report_error(r, "error", st, err.offset, err.field, context, err.message, indent);
    if (r->json) j_close(r, '}');
    inspect_descriptor_free(d);
    return false;
  }
  if (r->json) j_open(r, "buffers", '[');
  for (uint32_t i = 0; i < hurray_file_tensor_buffer_count(t); i++) {
    const void *data = NULL;
    uint64_t size = 0;
    if (hurray_file_tensor_buffer(t, i, &data, &size) != HURRAY_OK) break;
    uint64_t at = data != NULL ? (uint64_t)((const uint8_t *)data - base) : e.data_offset;
    if (r->json) {
      j_open(r, NULL, '{');
      j_u64(r, "index", i);
      j_u64(r, "offset", at);
      j_u64(r, "size", size);
      if (r->hex) report_hexdump(r, "hex", data, size, at, 0);
      if (r->preview && i == 0) report_preview(r, d, data, size, 0);
      j_close(r, '}');
    } else {
      fprintf(r->out, "%*s  buffer[%u] at byte %llu: %llu bytes\n", (int)indent, "", i,
              (unsigned long long)at, (unsigned long long)size);
      if (r->hex) report_hexdump(r, NULL, data, size, at, indent);
      if (r->preview && i == 0) report_preview(r, d, data, size, indent + 4);
    }
  }
  if (r->json) {
    j_close(r, ']');
    j_close(r, '}');
  }
  hurray_file_tensor_release(&t);
  inspect_descriptor_free(d);
  return true;
}

/* Every tensor in file order; composites read back through the library. */
static bool show_tensors(Report *r, const HurrayFile *f, const uint8_t *base, size_t len) {
  uint64_t n = hurray_file_tensor_count(f);
  Level stack[DISPLAY_MAX_DEPTH];
  unsigned depth = 0;
  bool ok = true;
  if (r->json) j_open(r, "tensors", '[');
  for (uint64_t pos = 0; pos < n && ok; pos++) {
    bool head = false;
    uint32_t members = 0;
    ok = show_tensor(r, f, base, len, pos, depth, depth > 0 ? &stack[depth - 1] : NULL, &head,
                     &members);
    if (!ok) break;
    if (head && depth == 0) {
      /* The library's own reading of the whole tree gives the verdict. */
      uint64_t index = 0;
      HurrayFileNode *tree = NULL;
      HurrayError err;
      hurray_error_clear(&err);
      HurrayStatus st = hurray_file_position(f, pos, &index);
      if (st == HURRAY_OK) st = hurray_file_composite(f, index, &tree, &err);
      hurray_file_node_destroy(&tree);
      if (st != HURRAY_OK) {
        if (r->json) j_close(r, ']');
        report_error(r, "error", st, err.offset, err.field, "composite",
                     err.message[0] != '\0' ? err.message : hurray_status_message(st), 0);
        return false;
      }
    }
    if (head && members > 0) {
      if (depth == DISPLAY_MAX_DEPTH) break; /* the verdict above already refused it */
      stack[depth].head_position = pos;
      stack[depth].declared = members;
      stack[depth].next = 0;
      depth++;
      continue;
    }
    while (depth > 0) {
      stack[depth - 1].next++;
      if (stack[depth - 1].next < stack[depth - 1].declared) break;
      depth--;
    }
  }
  if (r->json) j_close(r, ']');
  return ok;
}

/* The views of shared tensors (the HURRAY_FILE_KV_VIEWS record, read and
 * checked whole by the library): each an entry of its own, marked as a view
 * of its base. Returns how many; false in *ok after reporting a record the
 * library refuses. */
static uint64_t show_views(Report *r, const HurrayFile *f, bool *ok) {
  uint64_t n = 0;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus st = hurray_file_view_count(f, &n, &err);
  *ok = st == HURRAY_OK;
  if (st != HURRAY_OK) {
    if (!r->json) fputc('\n', r->out);
    report_error(r, "error", st, err.offset, err.field, "views",
                 err.message[0] != '\0' ? err.message : hurray_status_message(st), 0);
    return 0;
  }
  if (n == 0) return 0;
  if (r->json) j_open(r, "views", '[');
  else fprintf(r->out, "\nviews (%llu, from KV \"%s\"):\n", (unsigned long long)n,
               HURRAY_FILE_KV_VIEWS);
  for (uint64_t i = 0; i < n; i++) {
    HurrayFileView v;
    if (hurray_file_view(f, i, &v, &err) != HURRAY_OK) break;
    char *name = cstr(v.name, v.name_len);
    char *base = cstr(v.base, v.base_len);
    const char *type = v.same ? NULL : hurray_dtype_name(v.dtype);
    if (r->json) {
      j_open(r, NULL, '{');
      j_str(r, "name", name);
      j_str(r, "view_of", base);
      j_u64(r, "base_index", v.base_index);
      j_bool(r, "same", v.same);
      if (!v.same) {
        j_str(r, "dtype", type);
        j_open(r, "shape", '[');
        for (uint32_t k = 0; k < v.rank; k++) j_u64(r, NULL, v.shape[k]);
        j_close(r, ']');
        j_i64(r, "byte_offset", v.byte_offset);
        j_open(r, "byte_strides", '[');
        for (uint32_t k = 0; k < v.rank; k++) j_i64(r, NULL, v.byte_strides[k]);
        j_close(r, ']');
      }
      j_close(r, '}');
    } else if (v.same) {
      fprintf(r->out, "  view \"%s\" of tensor \"%s\" (index entry %llu): the same tensor\n",
              name != NULL ? name : "?", base != NULL ? base : "?",
              (unsigned long long)v.base_index);
    } else {
      fprintf(r->out, "  view \"%s\" of tensor \"%s\" (index entry %llu): %s [",
              name != NULL ? name : "?", base != NULL ? base : "?",
              (unsigned long long)v.base_index, type != NULL ? type : "?");
      for (uint32_t k = 0; k < v.rank; k++)
        fprintf(r->out, "%s%llu", k > 0 ? ", " : "", (unsigned long long)v.shape[k]);
      fprintf(r->out, "], byte offset %lld, byte strides [", (long long)v.byte_offset);
      for (uint32_t k = 0; k < v.rank; k++)
        fprintf(r->out, "%s%lld", k > 0 ? ", " : "", (long long)v.byte_strides[k]);
      fputs("]\n", r->out);
    }
    free(name);
    free(base);
  }
  if (r->json) j_close(r, ']');
  return n;
}

int inspect_container(Report *r, const uint8_t *bytes, size_t len) {
  report_begin(r, "hrry", ".hrry container", len);
  /* The file reader hands out buffers in place: give it memory aligned like
   * a mapping, so every buffer meets its declared alignment. */
  uint8_t *copy = NULL;
#if defined(_WIN32)
  copy = _aligned_malloc(len == 0 ? 1 : len, CONTAINER_ALIGNMENT);
  if (copy == NULL) {
#else
  if (posix_memalign((void **)&copy, CONTAINER_ALIGNMENT, len == 0 ? 1 : len) != 0) {
#endif
    report_error(r, "error", HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL, NULL,
                 "cannot copy the input", 0);
    return report_end(r);
  }
  if (len > 0) memcpy(copy, bytes, len);
  show_header(r, copy, len);
  show_trailer(r, copy, len);
  HurrayFile *f = NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus st = hurray_file_open_memory(copy, len, NULL, NULL, NULL, &f, &err);
  if (st != HURRAY_OK) {
    if (!r->json) fputc('\n', r->out);
    report_error(r, "error", st, err.offset, err.field, NULL,
                 err.message[0] != '\0' ? err.message : hurray_status_message(st), 0);
  } else {
    HurrayFileInfo info;
    st = hurray_file_info(f, &info);
    if (st != HURRAY_OK) {
      report_error(r, "error", st, HURRAY_NO_OFFSET, NULL, NULL, hurray_status_message(st), 0);
    } else {
      show_index(r, f, &info);
      show_kv(r, f, &info);
    }
    bool views_ok = false;
    uint64_t views = 0;
    if (st == HURRAY_OK && show_tensors(r, f, copy, len)) {
      views = show_views(r, f, &views_ok);
      if (views_ok && !r->json) {
        fprintf(r->out, "\nend of container: %llu tensor%s",
                (unsigned long long)hurray_file_tensor_count(f),
                hurray_file_tensor_count(f) == 1 ? "" : "s");
        if (views > 0)
          fprintf(r->out, ", %llu view%s", (unsigned long long)views, views == 1 ? "" : "s");
        fputc('\n', r->out);
      }
    }
    hurray_file_close(&f);
  }
  int rc = report_end(r);
#if defined(_WIN32)
  _aligned_free(copy);
#else
  free(copy);
#endif
  return rc;
}
