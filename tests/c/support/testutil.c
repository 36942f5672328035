#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#if defined(_WIN32)
#include <direct.h>
#include <fcntl.h>
#include <io.h>
#include <malloc.h>
#include <process.h>
#else
#include <fcntl.h>
#include <unistd.h>
#endif

int tu_pipe(int fds[2]) {
#if defined(_WIN32)
  return _pipe(fds, 1u << 16, _O_BINARY);
#else
  return pipe(fds);
#endif
}

bool tu_fd_is_open(int fd) {
#if defined(_WIN32)
  return _get_osfhandle(fd) != -1;
#else
  return fcntl(fd, F_GETFD) != -1;
#endif
}

void *tu_aligned_alloc(size_t alignment, size_t size) {
  if (alignment < sizeof(void *)) alignment = sizeof(void *);
#if defined(_WIN32)
  return _aligned_malloc(size == 0 ? 1 : size, alignment);
#else
  void *p = NULL;
  return posix_memalign(&p, alignment, size == 0 ? 1 : size) == 0 ? p : NULL;
#endif
}

void tu_aligned_free(void *p) {
#if defined(_WIN32)
  _aligned_free(p);
#else
  free(p);
#endif
}

char *tu_mkdtemp(char *templ) {
#if defined(_WIN32)
  static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  size_t n = strlen(templ);
  if (n < 6 || strcmp(templ + n - 6, "XXXXXX") != 0) {
    errno = EINVAL;
    return NULL;
  }
  static unsigned long counter;
  for (int attempt = 0; attempt < 100; attempt++) {
    unsigned long r = (unsigned long)_getpid() * 2654435761u + (unsigned long)rand() +
                      ++counter * 40503u;
    for (size_t k = 0; k < 6; k++) {
      templ[n - 6 + k] = digits[r % 36u];
      r /= 36u;
    }
    if (_mkdir(templ) == 0) return templ;
    if (errno != EEXIST) return NULL;
  }
  return NULL;
#else
  return mkdtemp(templ);
#endif
}

const char *tu_tmp_root(void) {
  const char *t = getenv("TMPDIR");
  if (t != NULL && *t) return t;
#if defined(_WIN32)
  t = getenv("TEMP");
  if (t != NULL && *t) return t;
  t = getenv("TMP");
  if (t != NULL && *t) return t;
#endif
  return "/tmp";
}

uint8_t *tu_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) != 0) {
    fclose(f);
    return NULL;
  }
  long n = ftell(f);
  if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return NULL;
  }
  uint8_t *buf = malloc((size_t)n + 1);
  if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf != NULL && len != NULL) *len = (size_t)n;
  return buf;
}

const char *tu_env_dir(const char *var) {
  const char *d = getenv(var);
  struct stat st;
  if (d == NULL || d[0] == '\0' || stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
  return d;
}

static long g_fail_after = -1;
static long g_count = 0;
static long g_live = 0;

static void *counting_alloc(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  if (g_fail_after >= 0 && g_count++ >= g_fail_after) return NULL;
  if (g_fail_after < 0) g_count++;
  void *p = NULL;
  if (alignment < sizeof(void *)) alignment = sizeof(void *);
  p = tu_aligned_alloc(alignment, size);
  if (p == NULL) return NULL;
  g_live++;
  return p;
}

static void counting_free(void *ctx, void *p) {
  (void)ctx;
  if (p != NULL) {
    g_live--;
    tu_aligned_free(p);
  }
}

void tu_alloc_install(void) {
  static const HurrayAllocator a = {counting_alloc, counting_free, NULL};
  hurray_set_allocator(&a);
  g_fail_after = -1;
  g_count = 0;
  g_live = 0;
}

void tu_fail_alloc_after(long n) {
  g_fail_after = n;
  g_count = 0;
}

void tu_alloc_reset(void) {
  g_fail_after = -1;
  g_count = 0;
}

long tu_alloc_live(void) { return g_live; }
long tu_alloc_count(void) { return g_count; }

const char *tu_hex(const uint8_t *p, size_t n) {
  static char buf[4096];
  size_t o = 0;
  for (size_t i = 0; i < n && o + 4 < sizeof buf; i++)
    o += (size_t)snprintf(buf + o, sizeof buf - o, "%02x%s", p[i], (i + 1) % 16 ? " " : "\n");
  buf[o] = '\0';
  return buf;
}
