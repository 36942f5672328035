/*
 * hurray-inspect internals: the report writer (text or JSON) and the three
 * inspectors (descriptor, stream, .hrry container). Uses the public API only.
 */
#ifndef HURRAY_INSPECT_H
#define HURRAY_INSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <hurray/hurray.h>

/* Destroys a descriptor the inspector decoded and owns (NULL allowed).
 * hurray_descriptor_destroy fails only for a handle already destroyed, which
 * an owner never holds: its status is dropped here, in one place. */
static inline void inspect_descriptor_free(HurrayDescriptor *d) {
  HurrayStatus st = hurray_descriptor_destroy(d);
  (void)st;
}

/* Exit codes. */
#define INSPECT_EXIT_OK 0
#define INSPECT_EXIT_INVALID 1 /* the input is not valid Hurray data */
#define INSPECT_EXIT_USAGE 2   /* bad arguments or unreadable input */

#define INSPECT_MAX_JSON_DEPTH 64

typedef struct Report {
  FILE *out;
  bool json;
  bool brief;           /* no field rows: one summary or error per descriptor */
  bool hex;             /* hex dumps of descriptors and buffers */
  bool preview;         /* decoded element values of buffer 0 */
  uint64_t preview_n;   /* how many elements */
  /* JSON writer state */
  int depth;
  unsigned count[INSPECT_MAX_JSON_DEPTH];
  /* the first error reported (for the exit status and stderr) */
  bool failed;
  HurrayStatus status;
  char message[512];
} Report;

/* ---- JSON primitives (report.c) ---------------------------------------------- */

void j_open(Report *r, const char *key, char bracket); /* key NULL inside arrays */
void j_close(Report *r, char bracket);
void j_str(Report *r, const char *key, const char *value); /* NULL value writes null */
void j_u64(Report *r, const char *key, uint64_t value);
void j_i64(Report *r, const char *key, int64_t value);
void j_f64(Report *r, const char *key, double value); /* non-finite values as strings */
void j_bool(Report *r, const char *key, bool value);
void j_hex(Report *r, const char *key, const uint8_t *bytes, uint64_t n);

/* Shortest decimal text that reads back as the same double ("1.0", "nan"). */
void fmt_double(double v, char *buf, size_t size);

/* ---- shared report pieces (report.c) ------------------------------------------ */

/* Writes the document start: {"format": ..., "size": ...} or a title line. */
void report_begin(Report *r, const char *format, const char *title, uint64_t size);
/* Closes the document; returns the exit code. */
int report_end(Report *r);

/* The column header of a field table (text only). */
void report_field_header(Report *r, unsigned indent);

/* One field event of hurray_descriptor_walk; offsets are shifted by `base`. */
void report_field(Report *r, const HurrayFieldEvent *ev, uint64_t base, unsigned indent);

/* Records an error: an ERROR row (text) or an "error" object (JSON; the
 * caller opens the enclosing object). `context` prefixes the message. */
void report_error(Report *r, const char *key, HurrayStatus st, uint64_t offset,
                  const char *field, const char *context, const char *message,
                  unsigned indent);

/* Hex dump of n bytes whose first byte is at absolute offset `base` (text),
 * or a "hex" string member (JSON). */
void report_hexdump(Report *r, const char *key, const uint8_t *bytes, uint64_t n, uint64_t base,
                    unsigned indent);

/* One-line summary of a decoded descriptor into buf. */
void describe_descriptor(const HurrayDescriptor *d, char *buf, size_t size);

/* Writes the "summary" object (JSON) or the summary line (text) of d. */
void report_summary(Report *r, const HurrayDescriptor *d, unsigned indent);

/* Preview of the first r->preview_n stored elements of buffer 0 (preview.c). */
void report_preview(Report *r, const HurrayDescriptor *d, const uint8_t *data, uint64_t size,
                    unsigned indent);

/* ---- inspectors ------------------------------------------------------------- */

/*
 * Walks the descriptor at bytes[0..len) (len may exceed it: the rest is
 * ignored), reporting every field with offsets shifted by `base`; errors
 * are prefixed with `context` (NULL for none). On
 * success *out (optional) receives the decoded descriptor (free with
 * hurray_descriptor_destroy) and *dlen its length. Returns the walk status;
 * on failure the error has been reported.
 */
HurrayStatus inspect_descriptor_fields(Report *r, const uint8_t *bytes, size_t len,
                                       uint64_t base, unsigned indent, const char *context,
                                       HurrayDescriptor **out, uint32_t *dlen);

int inspect_descriptor(Report *r, const uint8_t *bytes, size_t len);
int inspect_stream(Report *r, const uint8_t *bytes, size_t len);
int inspect_container(Report *r, const uint8_t *bytes, size_t len);

#endif /* HURRAY_INSPECT_H */
