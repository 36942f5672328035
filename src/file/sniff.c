/*
 * What a file is when it is not a .hrry file (hurray_file_sniff), so that
 * the reader's error can say so and what to do: the model formats a user is
 * likely to hand to hurray.load by mistake each start with a signature.
 *
 *   safetensors  u64 LE length of a JSON header, then '{' (at byte 8)
 *   GGUF         "GGUF"
 *   zip          "PK\x03\x04": np.savez (first member "*.npy") or torch.save
 *                (first member "<dir>/data.pkl")
 *   pickle       0x80 then the protocol, 2 to 5 (torch.save's legacy format)
 *   npy          "\x93NUMPY"
 */
#include "internal/file.h"

static bool ends_with(const uint8_t *s, size_t n, const char *suffix) {
  size_t k = strlen(suffix);
  return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

HurrayFileKind hurray_file_sniff(const void *head, size_t len, uint64_t file_size) {
  const uint8_t *p = head;
  if (len == 0 || p == NULL) return HURRAY_FILE_KIND_EMPTY;
  if (len >= 8 && memcmp(p, HURRAY_FILE_MAGIC, 8) == 0) return HURRAY_FILE_KIND_HRRY;
  if (len >= 4 && memcmp(p, HURRAY_DESCRIPTOR_MAGIC, 4) == 0) return HURRAY_FILE_KIND_HRRY_STREAM;
  if (len >= 4 && memcmp(p, "GGUF", 4) == 0) return HURRAY_FILE_KIND_GGUF;
  if (len >= 6 && memcmp(p, "\x93NUMPY", 6) == 0) return HURRAY_FILE_KIND_NPY;
  if (len >= 4 && memcmp(p, "PK\x03\x04", 4) == 0) {
    /* local file header: the name's length at 26, the name at 30 */
    if (len >= 30) {
      size_t n = hurray__ld16(p + 26);
      if (30 + n <= len) {
        const uint8_t *name = p + 30;
        if (ends_with(name, n, ".npy")) return HURRAY_FILE_KIND_NPZ;
        if (ends_with(name, n, "/data.pkl") || ends_with(name, n, "/.format_version") ||
            ends_with(name, n, "/byteorder") || ends_with(name, n, "/version"))
          return HURRAY_FILE_KIND_TORCH_ZIP;
      }
    }
    return HURRAY_FILE_KIND_ZIP;
  }
  if (len >= 2 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5) return HURRAY_FILE_KIND_PICKLE;
  if (len >= 9 && p[8] == '{') {
    uint64_t n = hurray__ld64(p);
    if (n >= 2 && (file_size == 0 || n <= file_size - 8)) return HURRAY_FILE_KIND_SAFETENSORS;
  }
  return HURRAY_FILE_KIND_UNKNOWN;
}

const char *hurray_file_kind_name(HurrayFileKind kind) {
  switch (kind) {
    case HURRAY_FILE_KIND_EMPTY: return "an empty file";
    case HURRAY_FILE_KIND_HRRY: return "a .hrry file";
    case HURRAY_FILE_KIND_HRRY_STREAM: return "a Hurray stream (or descriptor)";
    case HURRAY_FILE_KIND_SAFETENSORS: return "a safetensors file";
    case HURRAY_FILE_KIND_GGUF: return "a GGUF file";
    case HURRAY_FILE_KIND_NPZ: return "a NumPy .npz archive (np.savez)";
    case HURRAY_FILE_KIND_TORCH_ZIP: return "a PyTorch checkpoint (torch.save)";
    case HURRAY_FILE_KIND_ZIP: return "a zip archive (np.savez or torch.save?)";
    case HURRAY_FILE_KIND_PICKLE: return "a Python pickle (torch.save, legacy format?)";
    case HURRAY_FILE_KIND_NPY: return "a NumPy .npy file (np.save)";
    default: return "an unknown kind of file";
  }
}
