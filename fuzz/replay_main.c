/*
 * Replays a fuzz corpus without libFuzzer (gcc builds, ctest): every file
 * named on the command line, or found directly inside a directory named
 * there, is fed once to LLVMFuzzerTestOneInput. A failing check aborts.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 1;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *bigger = realloc(buf, cap * 2);
      if (bigger == NULL) break;
      buf = bigger;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf == NULL) return 1;
  /* An exact-size copy, so a sanitizer catches any read past the input. */
  uint8_t *exact = malloc(n ? n : 1);
  if (exact == NULL) {
    free(buf);
    return 1;
  }
  memcpy(exact, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(exact, n);
  free(exact);
  return 0;
}

int main(int argc, char **argv) {
  int files = 0, errors = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: %s does not exist\n", argv[i]);
      errors++;
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      errors += run_file(argv[i]);
      files++;
      continue;
    }
    DIR *dp = opendir(argv[i]);
    struct dirent *e;
    while (dp != NULL && (e = readdir(dp)) != NULL) {
      if (e->d_name[0] == '.') continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
      errors += run_file(path);
      files++;
    }
    if (dp != NULL) closedir(dp);
  }
  printf("replay: %d inputs, %d errors\n", files, errors);
  return errors != 0 || files == 0;
}
