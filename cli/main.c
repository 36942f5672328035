/*
 * hurray-inspect - shows a Hurray descriptor, stream or .hrry container
 * field by field: offset, raw bytes, field, decoded value, and why a field
 * is invalid when it is. Uses the public libhurray API only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#endif

#include "inspect.h"

#define DEFAULT_PREVIEW 8u

static const char k_usage[] =
    "usage: hurray-inspect [--json] [--brief] [--hex] [--preview[=N]] [--as=KIND] FILE\n"
    "\n"
    "Shows a Hurray tensor descriptor, stream or .hrry container field by field.\n"
    "FILE '-' reads standard input. The kind is detected from the bytes:\n"
    "  \"HRRYFILE\" magic                  .hrry container\n"
    "  a descriptor and nothing else      descriptor\n"
    "  a descriptor, then at least its    stream (descriptor, its buffers, repeated;\n"
    "  buffers' bytes                     also any FILE named *.hrrs)\n"
    "  a descriptor, then fewer bytes     descriptor (the rest is ignored)\n"
    "  nothing                            an empty file (an empty stream on stdin or *.hrrs)\n"
    "  safetensors, GGUF, zip, pickle,    named, with how to convert them\n"
    "  .npy                               (hurray convert)\n"
    "\n"
    "options:\n"
    "  --json          machine-readable output\n"
    "  --brief         no field rows: a summary or an error per descriptor\n"
    "  --hex           hex dumps of descriptors and buffers\n"
    "  --preview[=N]   first N decoded values of each tensor's buffer 0 (default 8)\n"
    "  --as=KIND       descriptor, stream or file: skip detection\n"
    "  --help          this text\n"
    "  --version       library version\n"
    "\n"
    "exit status: 0 valid, 1 invalid input, 2 usage or I/O error\n";

static int usage_error(const char *what, const char *arg) {
  if (arg != NULL) fprintf(stderr, "hurray-inspect: %s '%s'\n", what, arg);
  else fprintf(stderr, "hurray-inspect: %s\n", what);
  fprintf(stderr, "(see hurray-inspect --help)\n");
  return INSPECT_EXIT_USAGE;
}

/* Reads a whole file ("-" = stdin) into a malloc'ed buffer. */
static uint8_t *read_all(const char *path, size_t *len) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (f == NULL) return NULL;
#if defined(_WIN32)
  /* The C runtime opens stdin in text mode: CR LF pairs and a 0x1A byte
   * would change the input. */
  if (f == stdin && _setmode(_fileno(stdin), _O_BINARY) == -1) return NULL;
#endif
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  while (buf != NULL) {
    if (n == cap) {
      if (cap > SIZE_MAX / 2) {
        free(buf);
        buf = NULL;
        errno = EFBIG;
        break;
      }
      uint8_t *bigger = realloc(buf, cap * 2);
      if (bigger == NULL) {
        free(buf);
        buf = NULL;
        errno = ENOMEM;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
    size_t k = fread(buf + n, 1, cap - n, f);
    n += k;
    if (k == 0) {
      if (ferror(f)) {
        int e = errno;
        free(buf);
        buf = NULL;
        errno = e != 0 ? e : EIO;
      }
      break;
    }
  }
  if (f != stdin) fclose(f);
  *len = n;
  return buf;
}

typedef enum Kind { KIND_AUTO, KIND_DESCRIPTOR, KIND_STREAM, KIND_FILE } Kind;

static bool has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

/*
 * What the bytes are. A descriptor followed by more bytes is a stream when
 * those bytes hold at least the descriptor's buffers (or the file is named
 * *.hrrs); otherwise it is a descriptor with trailing bytes, which decoding
 * ignores.
 */
static Kind detect(const char *path, const uint8_t *bytes, size_t len) {
  /* An empty stream is a valid stream (standard input, *.hrrs); an empty
   * named file is reported as a file: empty, so not a .hrry file. */
  if (len == 0) return strcmp(path, "-") == 0 || has_suffix(path, ".hrrs") ? KIND_STREAM : KIND_FILE;
  if (len >= 8 && memcmp(bytes, "HRRYFILE", 8) == 0) return KIND_FILE;
  if (has_suffix(path, ".hrrs")) return KIND_STREAM;
  /* Other formats (safetensors, GGUF, zip, pickle, .npy): the file reader's
   * error names them and says how to convert them. */
  HurrayFileKind fk = hurray_file_sniff(bytes, len, len);
  if (fk != HURRAY_FILE_KIND_UNKNOWN && fk != HURRAY_FILE_KIND_HRRY_STREAM) return KIND_FILE;
  uint32_t dlen = 0;
  if (hurray_descriptor_peek_length(bytes, len, &dlen, NULL) != HURRAY_OK || len <= dlen)
    return KIND_DESCRIPTOR; /* including anything unrecognisable: the walk says why */
  HurrayDescriptor *d = NULL;
  uint64_t data = 0;
  Kind kind = KIND_DESCRIPTOR;
  if (hurray_descriptor_decode(bytes, len, &d) == HURRAY_OK &&
      hurray_descriptor_data_bytes(d, &data) == HURRAY_OK && data <= (uint64_t)(len - dlen))
    kind = KIND_STREAM;
  inspect_descriptor_free(d);
  return kind;
}

int main(int argc, char **argv) {
  Report r;
  memset(&r, 0, sizeof r);
  r.out = stdout;
  r.preview_n = DEFAULT_PREVIEW;
  Kind kind = KIND_AUTO;
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(k_usage, stdout);
      return INSPECT_EXIT_OK;
    } else if (strcmp(a, "--version") == 0) {
      printf("hurray-inspect %s (C ABI %u)\n", hurray_version_string(), hurray_c_abi_version());
      return INSPECT_EXIT_OK;
    } else if (strcmp(a, "--json") == 0) {
      r.json = true;
    } else if (strcmp(a, "--brief") == 0) {
      r.brief = true;
    } else if (strcmp(a, "--hex") == 0) {
      r.hex = true;
    } else if (strcmp(a, "--preview") == 0) {
      r.preview = true;
    } else if (strncmp(a, "--preview=", 10) == 0) {
      char *end = NULL;
      errno = 0;
      unsigned long long n = strtoull(a + 10, &end, 10);
      if (a[10] == '\0' || *end != '\0' || errno != 0 || n == 0 || a[10] == '-')
        return usage_error("--preview wants a positive count, not", a + 10);
      r.preview = true;
      r.preview_n = n;
    } else if (strncmp(a, "--as=", 5) == 0) {
      if (strcmp(a + 5, "descriptor") == 0) kind = KIND_DESCRIPTOR;
      else if (strcmp(a + 5, "stream") == 0) kind = KIND_STREAM;
      else if (strcmp(a + 5, "file") == 0) kind = KIND_FILE;
      else return usage_error("--as wants descriptor, stream or file, not", a + 5);
    } else if (strcmp(a, "--") == 0 && i + 1 < argc && path == NULL && i + 2 == argc) {
      path = argv[++i];
    } else if (a[0] == '-' && a[1] != '\0') {
      return usage_error("unknown option", a);
    } else if (path == NULL) {
      path = a;
    } else {
      return usage_error("one input at a time; extra argument", a);
    }
  }
  if (path == NULL) return usage_error("no input given", NULL);

  size_t len = 0;
  errno = 0;
  uint8_t *bytes = read_all(path, &len);
  if (bytes == NULL) {
    fprintf(stderr, "hurray-inspect: cannot read %s: %s\n", strcmp(path, "-") == 0 ? "stdin" : path,
            strerror(errno != 0 ? errno : EIO));
    return INSPECT_EXIT_USAGE;
  }
  if (kind == KIND_AUTO) kind = detect(path, bytes, len);
  int rc;
  switch (kind) {
    case KIND_FILE:
      rc = inspect_container(&r, bytes, len);
      break;
    case KIND_STREAM:
      rc = inspect_stream(&r, bytes, len);
      break;
    default:
      rc = inspect_descriptor(&r, bytes, len);
      break;
  }
  free(bytes);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "hurray-inspect: cannot write the report: %s\n", strerror(errno));
    return INSPECT_EXIT_USAGE;
  }
  return rc;
}
