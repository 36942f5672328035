/*
 * Saves killed mid-write (SIGKILL at every stage of a save) and the stray
 * temporary files they leave: none on Linux, where the writer's file has no
 * name until finish (O_TMPFILE); on the named fallback, strays that
 * hurray_file_remove_stale_temporaries removes while it leaves everything
 * else alone. And the file mode of a save, on both paths.
 */
#include <signal.h>
#if !defined(_WIN32)
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#endif

#include "test_file_util.h"

static int setup(void **state) {
  (void)state;
  tf_mkdir();
  return 0;
}
static int teardown(void **state) {
  (void)state;
  hurray__file_writer_test_named_temp(false);
  tf_rmdir();
  return 0;
}

#if !defined(_WIN32)

/* Whether the scratch directory takes files without a name (asked of the
 * system directly, so that the writer's choice is checked, not assumed). */
static bool dir_has_unnamed_files(void) {
#if defined(__linux__) && defined(O_TMPFILE)
  int fd = open(tf_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  close(fd);
  return true;
#else
  return false;
#endif
}

/* The old version: one tensor "old" of 8 bytes `v`. */
static void write_old(const char *path, uint8_t v) {
  HurrayFileWriter *w = NULL;
  HurrayError e;
  if (hurray_file_writer_open(path, NULL, &w, &e) != HURRAY_OK) fail_msg("%s", e.message);
  HurrayDescriptor *d = tf_desc_u8(8);
  uint8_t data[8];
  memset(data, v, sizeof data);
  const void *bufs[1] = {data};
  assert_int_equal(hurray_file_writer_add_tensor(w, "old", 3, d, bufs, NULL, &e), HURRAY_OK);
  if (hurray_file_writer_finish(w, &e) != HURRAY_OK) fail_msg("%s", e.message);
  hurray_file_writer_destroy(&w);
  if (hurray_descriptor_destroy(d) != HURRAY_OK) fail_msg("descriptor destroy failed");
}

/* The new version: NEW_TENSORS tensors "t<i>" of NEW_BYTES bytes, byte j of
 * tensor i being (i * 31 + j) mod 251, and one KV entry. */
#define NEW_TENSORS 12
#define NEW_BYTES ((size_t)1 << 20)

static uint8_t new_byte(int i, size_t j) { return (uint8_t)(((size_t)i * 31u + j) % 251u); }

/* What `path` holds: 0 the old version (byte v), 1 the complete new one;
 * fails the test on anything else (a torn or foreign file). */
static int version_of(const char *path, uint8_t v) {
  HurrayFile *f = NULL;
  HurrayError e;
  HurrayStatus st = hurray_file_open(path, NULL, &f, &e);
  if (st != HURRAY_OK) fail_msg("%s does not load: %s", path, e.message);
  uint64_t n = hurray_file_tensor_count(f);
  int version = -1;
  if (n == 1) {
    uint64_t idx;
    assert_int_equal(hurray_file_find(f, "old", 3, &idx), HURRAY_OK);
    HurrayFileTensor *t = NULL;
    assert_int_equal(hurray_file_tensor(f, idx, &t, &e), HURRAY_OK);
    const void *q;
    uint64_t size = 0;
    assert_int_equal(hurray_file_tensor_buffer(t, 0, &q, &size), HURRAY_OK);
    assert_int_equal(size, 8);
    for (int k = 0; k < 8; k++) assert_int_equal(((const uint8_t *)q)[k], v);
    hurray_file_tensor_release(&t);
    version = 0;
  } else {
    assert_int_equal(n, NEW_TENSORS);
    for (int i = 0; i < NEW_TENSORS; i++) {
      char name[16];
      snprintf(name, sizeof name, "t%d", i);
      uint64_t idx;
      assert_int_equal(hurray_file_find(f, name, strlen(name), &idx), HURRAY_OK);
      HurrayFileTensor *t = NULL;
      assert_int_equal(hurray_file_tensor(f, idx, &t, &e), HURRAY_OK);
      const uint8_t *q;
      uint64_t size = 0;
      assert_int_equal(hurray_file_tensor_buffer(t, 0, (const void **)&q, &size), HURRAY_OK);
      assert_int_equal(size, NEW_BYTES);
      for (size_t j = 0; j < NEW_BYTES; j += 4093) assert_int_equal(q[j], new_byte(i, j));
      assert_int_equal(q[NEW_BYTES - 1], new_byte(i, NEW_BYTES - 1));
      hurray_file_tensor_release(&t);
    }
    version = 1;
  }
  hurray_file_close(&f);
  return version;
}

/*
 * The child: saves the new version to `path`, reporting its progress on
 * `fd`: 'o' once the writer is open, 't' after each tensor, 'f' just before
 * finish, 'd' after it. Never returns.
 */
static void save_child(const char *path, int fd, bool durable) {
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {0, false, !durable, false};
  if (hurray_file_writer_open(path, &o, &w, NULL) != HURRAY_OK) _exit(2);
  if (write(fd, "o", 1) != 1) _exit(3);
  HurrayDescriptor *d = tf_desc_u8(NEW_BYTES);
  uint8_t *data = malloc(NEW_BYTES);
  if (d == NULL || data == NULL) _exit(4);
  for (int i = 0; i < NEW_TENSORS; i++) {
    for (size_t j = 0; j < NEW_BYTES; j++) data[j] = new_byte(i, j);
    char name[16];
    snprintf(name, sizeof name, "t%d", i);
    const void *bufs[1] = {data};
    if (hurray_file_writer_add_tensor(w, name, strlen(name), d, bufs, NULL, NULL) != HURRAY_OK)
      _exit(5);
    if (write(fd, "t", 1) != 1) _exit(6);
  }
  HurrayKvValue v = hurray_kv_string("new", 3);
  if (hurray_file_writer_add_kv(w, "version", 7, &v, NULL) != HURRAY_OK) _exit(7);
  if (write(fd, "f", 1) != 1) _exit(8);
  if (hurray_file_writer_finish(w, NULL) != HURRAY_OK) _exit(9);
  if (write(fd, "d", 1) != 1) _exit(10);
  _exit(0);
}

/* A small deterministic generator (the seed is printed on failure). */
static uint64_t rng_state;
static uint32_t rng_next(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33);
}

/* Path of `name` in the scratch directory (static buffer, one of 4). */
static const char *in_dir(const char *name) {
  static char bufs[4][1024];
  static int k;
  char *b = bufs[k++ & 3];
  snprintf(b, sizeof bufs[0], "%s/%.200s", tf_dir, name);
  return b;
}

/* Names in the scratch directory other than `target`, into names[0..cap). */
static int strays(const char *target, char names[][64], int cap) {
  DIR *d = opendir(tf_dir);
  assert_non_null(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (strcmp(e->d_name, target) == 0) continue;
    if (n < cap) snprintf(names[n], 64, "%.63s", e->d_name);
    n++;
  }
  closedir(d);
  return n;
}

/* Whether `name` has the writer's temporary pattern for target "model.hrry". */
static bool is_model_temp(const char *name) {
  const char *pre = ".model.hrry.tmp-";
  if (strncmp(name, pre, strlen(pre)) != 0 || strlen(name) != strlen(pre) + 6) return false;
  for (const char *c = name + strlen(pre); *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '2' && *c <= '7'))) return false;
  return true;
}

typedef struct KillStats {
  int rounds;
  int finished; /* the child completed its save before the kill */
  int newer;    /* rounds after which the target was the new version */
  int strays;   /* stray files the rounds left */
  int present;  /* stray files in the directory now */
  int complete_strays; /* of those, complete new files (killed between link and rename) */
} KillStats;

/*
 * One round: the old version in place, a child saving the new one, killed
 * at `stage` ('o' open, 't' after `count` tensors, 'f' finishing, 0 right
 * after fork) plus `delay_us`. Checks that the target is the complete old or
 * new version; strays are counted, checked to be the writer's temporaries
 * and left in place (the caller decides what to expect).
 */
static void kill_round(char stage, int count, uint32_t delay_us, bool durable, KillStats *ks) {
  const char *path = tf_path("model.hrry");
  write_old(path, 5);
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    save_child(path, fds[1], durable);
  }
  close(fds[1]);
  if (stage != 0) {
    int seen_t = 0;
    for (;;) {
      char c;
      ssize_t r = read(fds[0], &c, 1);
      if (r != 1) break; /* the child ended (it finished, or failed: see below) */
      if (c == 't') seen_t++;
      if ((stage == 'o' && c == 'o') || (stage == 't' && c == 't' && seen_t == count) ||
          (stage == 'f' && c == 'f'))
        break;
    }
  }
  if (delay_us > 0) usleep(delay_us);
  kill(pid, SIGKILL);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  close(fds[0]);
  if (WIFEXITED(status)) {
    assert_int_equal(WEXITSTATUS(status), 0); /* a save that ran to its end succeeded */
    ks->finished++;
  } else {
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  }
  int v = version_of(path, 5);
  if (v == 1) ks->newer++;
  if (WIFEXITED(status)) assert_int_equal(v, 1);
  char names[8][64];
  int n = strays("model.hrry", names, 8);
  for (int k = 0; k < n && k < 8; k++) {
    if (!is_model_temp(names[k])) fail_msg("unexpected file %s", names[k]);
    /* A stray is never a torn file under the target's name; with the named
     * fallback it may be torn, under its own name only. */
  }
  ks->strays += n - ks->present; /* this round's */
  ks->present = n;
  ks->rounds++;
}

/* The kill points: at fork, once open, after 1, half and all tensors, while
 * finishing; then random delays into a stage (into the middle of a tensor's
 * bytes, of the fsync, of the rename). `after` runs after each round. */
typedef struct KillPoint {
  char stage;
  int count;
} KillPoint;

static const KillPoint g_points[] = {{0, 0},  {'o', 0}, {'t', 1}, {'t', NEW_TENSORS / 2},
                                     {'t', NEW_TENSORS}, {'f', 0}};
#define RANDOM_KILLS 24

static void kill_everywhere(KillStats *ks, void (*after)(KillStats *ks, int before)) {
  for (size_t k = 0; k < sizeof g_points / sizeof g_points[0]; k++) {
    int before = ks->strays;
    kill_round(g_points[k].stage, g_points[k].count, 0, k % 2 == 0, ks);
    after(ks, before);
  }
  for (int k = 0; k < RANDOM_KILLS; k++) {
    static const char stages[] = {'o', 't', 't', 'f', 'f', 'f', 0};
    char stage = stages[rng_next() % (sizeof stages - 1)];
    int count = 1 + (int)(rng_next() % NEW_TENSORS);
    uint32_t delay = stage == 0 ? rng_next() % 60000u : rng_next() % 20000u;
    int before = ks->strays;
    kill_round(stage, count, delay, (rng_next() & 1u) != 0, ks);
    after(ks, before);
  }
}

static void seed_rng(void) {
  const char *s = getenv("HURRAY_KILL_SEED");
  struct timeval tv;
  gettimeofday(&tv, NULL);
  rng_state = s != NULL ? strtoull(s, NULL, 10) : (uint64_t)tv.tv_sec * 1000003u + (uint64_t)tv.tv_usec;
  print_message("[ NOTE     ] kill times from HURRAY_KILL_SEED=%llu\n",
                (unsigned long long)rng_state);
}

/* After a round on the unnamed path: a stray can only come from a kill
 * between link and rename, and is then the complete new file (removed, so
 * that the next round starts clean). */
static void unnamed_after(KillStats *ks, int before) {
  if (ks->strays == before) return;
  char names[8][64];
  assert_int_equal(strays("model.hrry", names, 8), 1);
  assert_int_equal(version_of(in_dir(names[0]), 5), 1);
  ks->complete_strays++;
  assert_int_equal(unlink(in_dir(names[0])), 0);
  ks->present = 0;
}

static void keep_strays(KillStats *ks, int before) {
  (void)ks;
  (void)before;
}

/* Linux with O_TMPFILE: no kill leaves a stray file, except one killed in
 * the moment between naming the complete file and renaming it (a complete
 * file under a temporary name; cleanup removes it). */
static void test_killed_saves_leave_nothing(void **state) {
  (void)state;
  if (!dir_has_unnamed_files()) {
    tu_skip("the scratch folder's file system has no unnamed files (O_TMPFILE): "
            "test_killed_saves_named_fallback covers what this system does");
    return;
  }
  seed_rng();
  KillStats ks;
  memset(&ks, 0, sizeof ks);
  hurray__file_writer_test_named_temp(false);
  kill_everywhere(&ks, unnamed_after);
  print_message("[ NOTE     ] %d kills: %d saves had finished, %d left the new version, "
                "%d stray files (%d complete, killed between link and rename)\n",
                ks.rounds, ks.finished, ks.newer, ks.strays, ks.complete_strays);
  assert_int_equal(ks.strays, ks.complete_strays);
  assert_true(ks.complete_strays <= 2); /* the window is a few microseconds */
  assert_true(ks.rounds - ks.finished >= 6); /* most rounds did kill a save */
}

/* Sets the modification time of tf_dir/name to `age` seconds ago. */
static void age_file(const char *name, int age) {
  struct timespec ts[2];
  clock_gettime(CLOCK_REALTIME, &ts[0]);
  ts[0].tv_sec -= age;
  ts[1] = ts[0];
  assert_int_equal(utimensat(AT_FDCWD, in_dir(name), ts, AT_SYMLINK_NOFOLLOW), 0);
}

static void touch(const char *name) {
  int fd = open(in_dir(name), O_WRONLY | O_CREAT | O_EXCL, 0644);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "x", 1), 1);
  close(fd);
}

static bool exists(const char *name) {
  struct stat st;
  return lstat(in_dir(name), &st) == 0;
}

/* The named fallback (as on other systems): killed saves leave strays, and
 * the cleanup removes exactly those, old enough and not held. */
static void test_killed_saves_named_fallback(void **state) {
  (void)state;
  seed_rng();
  KillStats ks;
  memset(&ks, 0, sizeof ks);
  hurray__file_writer_test_named_temp(true);
  kill_everywhere(&ks, keep_strays);
  hurray__file_writer_test_named_temp(false);
  print_message("[ NOTE     ] named fallback: %d kills, %d saves had finished, %d stray files\n",
                ks.rounds, ks.finished, ks.strays);
  assert_true(ks.strays >= 3); /* at least the kills after 'o', 1 and 6 tensors */
  char names[64][64];
  int n = strays("model.hrry", names, 64);
  assert_int_equal(n, ks.strays);
  assert_true(n <= 64);

  /* Fresh strays are kept by an age limit... */
  uint32_t removed = 99;
  HurrayError e;
  assert_int_equal(hurray_file_remove_stale_temporaries(tf_path("model.hrry"), 3600, &removed, &e),
                   HURRAY_OK);
  assert_int_equal(removed, 0);
  assert_int_equal(strays("model.hrry", names, 64), n);
  /* ...and removed once older than it. */
  for (int k = 0; k < n; k++) age_file(names[k], 7200);

  /* Around them, files the cleanup must never touch, all old: */
  const char *decoys[] = {
      "model.hrry.tmp-abcdef",    /* no leading dot */
      ".model.hrry.tmp-abcde",    /* 5 letters */
      ".model.hrry.tmp-abcdefg",  /* 7 letters */
      ".model.hrry.tmp-abcde1",   /* '1' is not in the alphabet */
      ".model.hrry.tmp-ABCDEF",   /* upper case */
      ".tmp-abcdef",              /* no target name */
      ".model.hrry.tmp_abcdef",   /* not the mark */
      ".model.hrry.tmp-abcdef~",  /* something after */
      "notes.txt",
  };
  for (size_t k = 0; k < sizeof decoys / sizeof decoys[0]; k++) {
    touch(decoys[k]);
    age_file(decoys[k], 7200);
  }
  /* a directory and a symbolic link with the pattern */
  assert_int_equal(mkdir(in_dir(".model.hrry.tmp-dirdir"), 0755), 0);
  age_file(".model.hrry.tmp-dirdir", 7200);
  touch("link-target");
  age_file("link-target", 7200);
  assert_int_equal(symlink("link-target", in_dir(".model.hrry.tmp-linkkk")), 0);
  age_file(".model.hrry.tmp-linkkk", 7200);
  /* a temporary of another target (kept when the cleanup names model.hrry) */
  touch(".other.hrry.tmp-qqqqqq");
  age_file(".other.hrry.tmp-qqqqqq", 7200);
  /* a young one (a save that just started) */
  touch(".model.hrry.tmp-young2");
  /* one of another user (needs root to make) */
  bool foreign = geteuid() == 0;
  if (foreign) {
    touch(".model.hrry.tmp-others");
    assert_int_equal(chown(in_dir(".model.hrry.tmp-others"), 4242, 4242), 0);
    age_file(".model.hrry.tmp-others", 7200);
  }
  /* a save in progress whose file is old (a slow writer): held, so kept
   * even when the age says otherwise */
  hurray__file_writer_test_named_temp(true);
  HurrayFileWriter *live = NULL;
  assert_int_equal(hurray_file_writer_open(tf_path("model.hrry"), NULL, &live, &e), HURRAY_OK);
  hurray__file_writer_test_named_temp(false);
  char after[80][64];
  int m = strays("model.hrry", after, 80);
  char live_name[64] = "";
  for (int k = 0; k < m; k++) {
    bool old = false;
    for (int j = 0; j < n; j++) old = old || strcmp(after[k], names[j]) == 0;
    if (!old && is_model_temp(after[k]) && strcmp(after[k], ".model.hrry.tmp-young2") != 0 &&
        strcmp(after[k], ".model.hrry.tmp-others") != 0 &&
        strcmp(after[k], ".model.hrry.tmp-dirdir") != 0 &&
        strcmp(after[k], ".model.hrry.tmp-linkkk") != 0)
      snprintf(live_name, sizeof live_name, "%.63s", after[k]);
  }
  assert_true(live_name[0] != '\0');
  age_file(live_name, 7200);

  assert_int_equal(hurray_file_remove_stale_temporaries(tf_path("model.hrry"), 60, &removed, &e),
                   HURRAY_OK);
  assert_int_equal(removed, n); /* the killed saves' strays, nothing else */
  for (int k = 0; k < n; k++) assert_false(exists(names[k]));
  for (size_t k = 0; k < sizeof decoys / sizeof decoys[0]; k++) assert_true(exists(decoys[k]));
  assert_true(exists(".model.hrry.tmp-dirdir"));
  assert_true(exists(".model.hrry.tmp-linkkk"));
  assert_true(exists("link-target"));
  assert_true(exists(".other.hrry.tmp-qqqqqq"));
  assert_true(exists(".model.hrry.tmp-young2"));
  if (foreign) assert_true(exists(".model.hrry.tmp-others"));
  assert_true(exists(live_name));
  assert_true(exists("model.hrry"));
  int v = version_of(tf_path("model.hrry"), 5); /* the last round's outcome, intact */
  assert_true(v == 0 || v == 1);

  /* The directory form: every target's temporaries (the other target's too). */
  assert_int_equal(hurray_file_remove_stale_temporaries(tf_dir, 60, &removed, &e), HURRAY_OK);
  assert_int_equal(removed, 1);
  assert_false(exists(".other.hrry.tmp-qqqqqq"));
  /* Age 0: the young one goes too; the held one still stays. */
  assert_int_equal(hurray_file_remove_stale_temporaries(tf_dir, 0, &removed, &e), HURRAY_OK);
  assert_int_equal(removed, 1);
  assert_false(exists(".model.hrry.tmp-young2"));
  assert_true(exists(live_name));
  /* The live writer still finishes (its file was never touched). */
  HurrayDescriptor *d = tf_desc_u8(8);
  uint8_t data[8] = {6, 6, 6, 6, 6, 6, 6, 6};
  const void *bufs[1] = {data};
  assert_int_equal(hurray_file_writer_add_tensor(live, "old", 3, d, bufs, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(live, &e), HURRAY_OK);
  hurray_file_writer_destroy(&live);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  assert_int_equal(version_of(tf_path("model.hrry"), 6), 0);
  assert_false(exists(live_name));
  for (size_t k = 0; k < sizeof decoys / sizeof decoys[0]; k++) assert_true(exists(decoys[k]));
  rmdir(in_dir(".model.hrry.tmp-dirdir"));
}

/* Argument errors, and a target whose directory is missing. */
static void test_remove_stale_errors(void **state) {
  (void)state;
  HurrayError e;
  uint32_t removed = 7;
  assert_int_equal(hurray_file_remove_stale_temporaries(NULL, 0, &removed, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(removed, 0);
  assert_int_equal(hurray_file_remove_stale_temporaries("", 0, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_file_remove_stale_temporaries(tf_path("nodir/"), 0, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_file_remove_stale_temporaries(tf_path("nodir/model.hrry"), 0, NULL, &e),
                   HURRAY_ERR_IO);
  assert_non_null(strstr(e.message, "opening the directory"));
  /* An empty directory, and a target that does not exist yet: nothing to do. */
  assert_int_equal(hurray_file_remove_stale_temporaries(tf_dir, 0, &removed, &e), HURRAY_OK);
  assert_int_equal(removed, 0);
  assert_int_equal(hurray_file_remove_stale_temporaries(tf_path("model.hrry"), 0, &removed, &e),
                   HURRAY_OK);
  assert_int_equal(removed, 0);
  /* A relative target in the working directory. */
  char cwd[1024];
  assert_non_null(getcwd(cwd, sizeof cwd));
  assert_int_equal(chdir(tf_dir), 0);
  touch(".rel.hrry.tmp-aaaaaa");
  assert_int_equal(hurray_file_remove_stale_temporaries("rel.hrry", 0, &removed, &e), HURRAY_OK);
  assert_int_equal(removed, 1);
  assert_int_equal(chdir(cwd), 0);
  assert_int_equal(tf_dir_entries(), 0);
}

/* The mode of a saved file is 0666 less the umask, on both paths, whatever
 * the mode of the file it replaces (as before O_TMPFILE). */
static void test_saved_file_mode(void **state) {
  (void)state;
  mode_t old_mask = umask(027);
  for (int named = 0; named < 2; named++) {
    hurray__file_writer_test_named_temp(named != 0);
    const char *path = tf_path(named ? "named.hrry" : "unnamed.hrry");
    write_old(path, 1);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(st.st_uid, geteuid());
    assert_int_equal(chmod(path, 0600), 0);
    write_old(path, 2);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(version_of(path, 2), 0);
  }
  umask(0);
  hurray__file_writer_test_named_temp(false);
  write_old(tf_path("open.hrry"), 3);
  struct stat st;
  assert_int_equal(stat(tf_path("open.hrry"), &st), 0);
  assert_int_equal(st.st_mode & 07777, 0666);
  umask(old_mask);
  hurray__file_writer_test_named_temp(false);
}

#else /* _WIN32 */

static void test_killed_saves_leave_nothing(void **state) {
  (void)state;
  tu_skip("no unnamed files on Windows: the writer uses a named temporary file "
          "(test_file_write kills one with TerminateProcess)");
}
static void test_killed_saves_named_fallback(void **state) {
  (void)state;
  tu_skip("fork and SIGKILL");
}
static void test_remove_stale_errors(void **state) {
  (void)state;
  HurrayError e;
  uint32_t removed = 7;
  assert_int_equal(hurray_file_remove_stale_temporaries(NULL, 0, &removed, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(removed, 0);
  assert_int_equal(hurray_file_remove_stale_temporaries(tf_dir, 0, &removed, &e), HURRAY_OK);
  assert_int_equal(removed, 0);
}
static void test_saved_file_mode(void **state) {
  (void)state;
  tu_skip("POSIX file modes");
}

#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_killed_saves_leave_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_killed_saves_named_fallback, setup, teardown),
      cmocka_unit_test_setup_teardown(test_remove_stale_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_saved_file_mode, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
