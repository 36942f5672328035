/*
 * bench_stream: tensors through a pipe with the stream writer and reader,
 * against a cat-style copy of the same bytes through the same kind of pipe
 * (write(2) on one side, read(2) into a reused 128 KiB buffer on the other).
 *
 *   bench_stream [TOTAL_MIB=1024] [TENSOR_KIB=4096] [REPS=3]
 *
 * Prints the best time of each and the ratio stream / copy in throughput;
 * the target is >= 0.8. Exit status 0 always (a benchmark, not a test).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hurray/hurray.h>

typedef struct Job {
  int fd;
  uint64_t tensors;
  uint64_t tensor_bytes;
  const HurrayDescriptor *d;
  const uint8_t *data;
  const uint8_t *desc_bytes;
  uint64_t desc_len;
  int ok;
} Job;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int write_all(int fd, const uint8_t *p, uint64_t n) {
  while (n > 0) {
    ssize_t k = write(fd, p, n > (1u << 30) ? (1u << 30) : (size_t)n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (uint64_t)k;
  }
  return 0;
}

/* Baseline writer: the same bytes, descriptor then data, with write(2). */
static void *copy_writer(void *arg) {
  Job *j = arg;
  j->ok = 1;
  for (uint64_t i = 0; i < j->tensors && j->ok; i++)
    if (write_all(j->fd, j->desc_bytes, j->desc_len) != 0 ||
        write_all(j->fd, j->data, j->tensor_bytes) != 0)
      j->ok = 0;
  close(j->fd);
  return NULL;
}

/* Stream writer: hurray_stream_writer_write per tensor. */
static void *stream_writer(void *arg) {
  Job *j = arg;
  HurrayStreamWriter *w = NULL;
  j->ok = hurray_stream_writer_to_fd(j->fd, HURRAY_STREAM_OWN_FD, &w) == HURRAY_OK;
  const void *bufs[1] = {j->data};
  uint64_t sizes[1] = {j->tensor_bytes};
  for (uint64_t i = 0; i < j->tensors && j->ok; i++)
    j->ok = hurray_stream_writer_write(w, j->d, bufs, sizes, 1, NULL) == HURRAY_OK;
  if (w != NULL && j->ok) j->ok = hurray_stream_writer_finish(w, NULL) == HURRAY_OK;
  hurray_stream_writer_destroy(&w);
  return NULL;
}

static double run_copy(Job *proto, uint64_t *moved) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  Job j = *proto;
  j.fd = fds[1];
  pthread_t t;
  double t0 = now();
  pthread_create(&t, NULL, copy_writer, &j);
  uint8_t *buf = malloc(128 * 1024);
  uint64_t total = 0;
  for (;;) {
    ssize_t k = read(fds[0], buf, 128 * 1024);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    total += (uint64_t)k;
  }
  double t1 = now();
  pthread_join(t, NULL);
  close(fds[0]);
  free(buf);
  *moved = total;
  return j.ok ? t1 - t0 : -1;
}

static double run_stream(Job *proto, uint64_t *moved) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  Job j = *proto;
  j.fd = fds[1];
  pthread_t t;
  double t0 = now();
  pthread_create(&t, NULL, stream_writer, &j);
  HurrayStreamReader *r = NULL;
  uint64_t items = 0;
  int ok = hurray_stream_reader_from_fd(fds[0], NULL, &r) == HURRAY_OK;
  while (ok) {
    HurrayStreamItem *it = NULL;
    if (hurray_stream_reader_next_item(r, &it, NULL) != HURRAY_OK) {
      ok = 0;
      break;
    }
    if (it == NULL) break;
    items++;
    hurray_stream_item_destroy(&it);
  }
  double t1 = now();
  *moved = hurray_stream_reader_offset(r);
  hurray_stream_reader_destroy(&r);
  pthread_join(t, NULL);
  close(fds[0]);
  return ok && j.ok && items == j.tensors ? t1 - t0 : -1;
}

int main(int argc, char **argv) {
  uint64_t total_mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 1024;
  uint64_t tensor_kib = argc > 2 ? strtoull(argv[2], NULL, 10) : 4096;
  int reps = argc > 3 ? atoi(argv[3]) : 3;
  if (total_mib == 0 || tensor_kib == 0 || reps <= 0) {
    fprintf(stderr, "usage: bench_stream [TOTAL_MIB] [TENSOR_KIB] [REPS]\n");
    return 2;
  }
  uint64_t tensor_bytes = tensor_kib * 1024;
  uint64_t elements = tensor_bytes / 4;
  HurrayBufferHandle h;
  memset(&h, 0, sizeof h);
  h.byte_size = tensor_bytes;
  h.alignment = 64;
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.version_major = 1;
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 1;
  f.shape = &elements;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = 1;
  f.buffers = &h;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  if (hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, &e) != HURRAY_OK) {
    fprintf(stderr, "bench_stream: %s\n", e.message);
    return 1;
  }
  uint64_t dlen = 0;
  if (hurray_descriptor_encoded_len(d, &dlen) != HURRAY_OK) abort();
  uint8_t *desc = malloc((size_t)dlen);
  if (hurray_descriptor_encode(d, desc, dlen, &dlen) != HURRAY_OK) abort();
  uint8_t *data = hurray_alloc((size_t)tensor_bytes, 64);
  for (uint64_t i = 0; i < tensor_bytes; i++) data[i] = (uint8_t)(i * 131u);

  Job proto;
  memset(&proto, 0, sizeof proto);
  proto.tensors = (total_mib * 1024 * 1024) / tensor_bytes;
  if (proto.tensors == 0) proto.tensors = 1;
  proto.tensor_bytes = tensor_bytes;
  proto.d = d;
  proto.data = data;
  proto.desc_bytes = desc;
  proto.desc_len = dlen;

  double best_copy = 1e300, best_stream = 1e300;
  uint64_t moved_copy = 0, moved_stream = 0;
  for (int i = 0; i < reps; i++) {
    double c = run_copy(&proto, &moved_copy);
    double s = run_stream(&proto, &moved_stream);
    if (c < 0 || s < 0) {
      fprintf(stderr, "bench_stream: a run failed\n");
      return 1;
    }
    if (c < best_copy) best_copy = c;
    if (s < best_stream) best_stream = s;
  }
  const double gib = 1024.0 * 1024.0 * 1024.0;
  printf("bench_stream: %llu tensors of %llu KiB (%.2f GiB incl. descriptors), best of %d\n",
         (unsigned long long)proto.tensors, (unsigned long long)tensor_kib,
         (double)moved_stream / gib, reps);
  printf("  cat-style copy : %8.3f s  %6.2f GiB/s\n", best_copy, (double)moved_copy / gib / best_copy);
  printf("  stream         : %8.3f s  %6.2f GiB/s\n", best_stream,
         (double)moved_stream / gib / best_stream);
  printf("  ratio stream/copy: %.2f (target >= 0.80)\n",
         ((double)moved_stream / best_stream) / ((double)moved_copy / best_copy));
  hurray_free(data);
  free(desc);
  if (hurray_descriptor_destroy(d) != HURRAY_OK) abort();
  return 0;
}
