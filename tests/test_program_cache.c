/* The program cache on disk (TGL_CACHE_DIR): cold, warm, corrupted, truncated and foreign
 * files, an unwritable directory, the cache turned off, and several processes filling one
 * directory at once. In every case the op's result must be right; the counters (hits, stores,
 * rejections) show which path ran. Skipped where the driver offers no program binary format. */
#include "testing.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void tgl_gl_test_cache_stats(tgl_backend *b, unsigned long stats[3]);
enum { HITS, STORES, REJECTED };
enum { N = 777 };

static char self_path[4096];

/* Opens a GL backend over `dir`, runs one op (compiling or loading its program), checks the
 * result on the host, reads the counters and closes. 0 when the result was right. */
/* Which expression run_op computes: 0 its own, 1 a second one (two distinct programs). */
static int second_expr;

static int run_op(const char *dir, unsigned long stats[3])
{
    tgt_setenv("TGL_CACHE_DIR", dir);
    tgl_options o = {.kind = TGL_BACKEND_GL};
    tgl_backend *b = NULL;
    if (tgl_open(&o, &b))
        return -1;
    float x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)i / N - 0.5f;
    tgl_ptr p = 0, q = 0;
    int bad = tgl_alloc(b, sizeof x, &p) || tgl_alloc(b, sizeof y, &q) || tgl_copy_htod(b, p, x, sizeof x) ||
              /* an expression of its own, so no other suite has put this program in the cache */
              tgl_map(b, second_expr ? "sqrt(a + 1) * 3" : "exp(a) * 0.25 + a * a - 1.5", &p, 1, q, N) ||
              tgl_copy_dtoh(b, y, q, sizeof y);
    for (int i = 0; !bad && i < N; i++)
        bad = fabsf(y[i] - (second_expr ? sqrtf(x[i] + 1) * 3 : expf(x[i]) * 0.25f + x[i] * x[i] - 1.5f)) > 1e-5f;
    tgl_gl_test_cache_stats(b, stats);
    tgl_close(b);
    return bad;
}

/* Runs run_op and asserts it was right; returns the counters. */
static void run_ok(const char *dir, unsigned long stats[3])
{
    int rc = run_op(dir, stats);
    if (rc < 0)
        skip(); /* no GL context at all */
    assert_int_equal(rc, 0);
}

static char *fresh_dir(void)
{
    char *dir = strdup("/tmp/tgl-cache-test-XXXXXX");
    assert_non_null(dir);
    assert_non_null(mkdtemp(dir));
    return dir;
}

static void remove_dir(char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

/* Calls fn on every file of dir; returns how many. */
static int each_file(const char *dir, void (*fn)(const char *path))
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char path[512];
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        fn(path);
        n++;
    }
    closedir(d);
    return n;
}

/* A cold run that stores, or a skip when this driver cannot save program binaries. */
static char *cold_dir(void)
{
    char *dir = fresh_dir();
    unsigned long st[3];
    run_ok(dir, st);
    if (st[STORES] == 0) {
        remove_dir(dir);
        print_message("the driver offers no program binary format (Mesa: is its shader cache off?)\n");
        skip();
        return NULL; /* not reached: skip() leaves the test (the analyzer does not know) */
    }
    assert_int_equal(st[HITS], 0);
    assert_int_equal(st[REJECTED], 0);
    return dir;
}

static void test_cold_then_warm(void **state)
{
    (void)state;
    char *dir = cold_dir();
    unsigned long st[3];
    run_ok(dir, st);
    assert_true(st[HITS] >= 1);
    assert_int_equal(st[STORES], 0);
    assert_int_equal(st[REJECTED], 0);
    remove_dir(dir);
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* tgl_warmup builds programs into an empty cache; a second backend's warmup then loads every
 * one of them (hits, no stores), and an op afterwards finds its program already built. */
static void test_warmup_fills_cache(void **state)
{
    (void)state;
    char *dir = cold_dir(); /* one program from run_op, or a skip without binary formats */
    int before = count_files(dir);
    unsigned long st[3];
    unsigned calls[2] = {0, 0};
    for (int round = 0; round < 2; round++) {
        tgl_options o = {.kind = TGL_BACKEND_GL};
        tgl_backend *b = NULL;
        TGT_OK(NULL, tgl_open(&o, &b));
        TGT_OK(b, tgl_warmup(b, &calls[round]));
        tgl_gl_test_cache_stats(b, st);
        if (round == 0) {
            assert_true(st[STORES] >= 50); /* every family's kernels, several variants each */
            assert_int_equal(count_files(dir), before + (int)st[STORES]);
        } else {
            assert_int_equal(st[STORES], 0);
            assert_true(st[HITS] >= 50);
        }
        assert_int_equal(st[REJECTED], 0);
        tgl_close(b);
    }
    assert_true(calls[0] >= 100);
    assert_int_equal(calls[0], calls[1]);
    TGT_EXPECT(NULL, tgl_warmup(NULL, NULL), TGL_ERR_INVALID_ARGUMENT);
    remove_dir(dir);
}

/* Damages every file with `damage`, then checks: right result, the damage noticed, the file
 * rebuilt (the next run loads it again). */
static void damaged(void (*damage)(const char *path))
{
    char *dir = cold_dir();
    assert_true(each_file(dir, damage) >= 1);
    unsigned long st[3];
    run_ok(dir, st);
    assert_true(st[REJECTED] >= 1);
    assert_true(st[STORES] >= 1);
    run_ok(dir, st);
    assert_true(st[HITS] >= 1);
    assert_int_equal(st[REJECTED], 0);
    remove_dir(dir);
}

static void flip_byte_at(const char *path, long from_end)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, from_end, from_end < 0 ? SEEK_END : SEEK_SET), 0);
    int c = fgetc(f);
    assert_int_not_equal(c, EOF);
    assert_int_equal(fseek(f, -1, SEEK_CUR), 0);
    fputc(c ^ 0x5a, f);
    fclose(f);
}

static void flip_payload(const char *path) { flip_byte_at(path, -7); }
/* Byte 60 lies in the identity (library version, vendor, renderer, GL version) that follows the
 * 48-byte header: as if the file came from another driver. */
static void flip_identity(const char *path) { flip_byte_at(path, 60); }
static void flip_magic(const char *path) { flip_byte_at(path, 0); }

static void truncate_half(const char *path)
{
    struct stat s;
    assert_int_equal(stat(path, &s), 0);
    assert_int_equal(truncate(path, s.st_size / 2), 0);
}

static void test_corrupted_payload(void **state)
{
    (void)state;
    damaged(flip_payload);
}

static void test_truncated(void **state)
{
    (void)state;
    damaged(truncate_half);
}

static void test_other_renderer(void **state)
{
    (void)state;
    damaged(flip_identity);
}

static void test_bad_magic(void **state)
{
    (void)state;
    damaged(flip_magic);
}

static void make_fifo(const char *path)
{
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkfifo(path, 0600), 0);
}

/* A FIFO where an entry should be: the open does not wait for a writer (it once blocked the first
 * op forever), the entry is rebuilt and stored over it, and the next run loads it. alarm() turns
 * a hang into a failure. */
static void test_fifo_entry(void **state)
{
    (void)state;
    char *dir = cold_dir();
    assert_true(each_file(dir, make_fifo) >= 1);
    unsigned long st[3];
    alarm(120);
    run_ok(dir, st);
    alarm(0);
    assert_true(st[STORES] >= 1);
    run_ok(dir, st);
    assert_true(st[HITS] >= 1);
    remove_dir(dir);
}

/* Reads a whole file. */
static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *data = malloc(1 << 24);
    assert_non_null(data);
    *n = fread(data, 1, 1 << 24, f);
    fclose(f);
    return data;
}

static void spill(const char *path, const unsigned char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static char entry_paths[8][512];
static int n_entries;
static void note_entry(const char *path)
{
    if (n_entries < 8)
        snprintf(entry_paths[n_entries++], sizeof entry_paths[0], "%s", path);
}

/* Two valid entries whose payloads trade places, each under the other's name and with the other's
 * key in its header (a mix-up a checksum over the payload alone let through: the first
 * expression then ran the second's program). The header and identity are checksummed with the
 * payload, so both are rejected and rebuilt, and the results stay right. */
static void test_swapped_entries(void **state)
{
    (void)state;
    char *dir = cold_dir(); /* the first expression's programs */
    n_entries = 0;
    each_file(dir, note_entry);
    int first = n_entries;
    char before[8][512];
    memcpy(before, entry_paths, sizeof before);
    unsigned long st[3];
    second_expr = 1;
    run_ok(dir, st); /* and the second's */
    second_expr = 0;
    n_entries = 0;
    each_file(dir, note_entry);
    assert_true(n_entries > first);
    /* an entry of each expression: one of the first listing, and one it did not hold */
    const char *a = before[0], *b = NULL;
    for (int i = 0; i < n_entries && !b; i++) {
        int old = 0;
        for (int j = 0; j < first; j++)
            old |= !strcmp(entry_paths[i], before[j]);
        if (!old)
            b = entry_paths[i];
    }
    assert_non_null(b);
    size_t na, nb;
    unsigned char *da = slurp(a, &na), *db = slurp(b, &nb);
    unsigned char key_a[16], key_b[16];
    memcpy(key_a, da + 16, 16); /* the header's key: after the magic and two 32-bit fields */
    memcpy(key_b, db + 16, 16);
    memcpy(db + 16, key_a, 16);
    memcpy(da + 16, key_b, 16);
    spill(a, db, nb);
    spill(b, da, na);
    free(da);
    free(db);
    run_ok(dir, st);
    second_expr = 1;
    run_ok(dir, st);
    second_expr = 0;
    remove_dir(dir);
}

/* A path under a regular file cannot be created, even by root. */
static void test_unwritable_dir(void **state)
{
    (void)state;
    char *dir = fresh_dir(), path[512];
    snprintf(path, sizeof path, "%s/file", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(path, sizeof path, "%s/file/cache", dir);
    unsigned long st[3];
    run_ok(path, st);
    assert_int_equal(st[HITS], 0);
    assert_int_equal(st[STORES], 0);
    remove_dir(dir);
}

static void test_turned_off(void **state)
{
    (void)state;
    unsigned long st[3];
    run_ok("", st);
    assert_int_equal(st[HITS] + st[STORES] + st[REJECTED], 0);
}

static void test_path_too_long(void **state)
{
    (void)state;
    char path[1200];
    memset(path, 'a', sizeof path - 1);
    path[0] = '/';
    path[sizeof path - 1] = '\0';
    tgt_setenv("TGL_CACHE_DIR", path);
    tgl_options o = {.kind = TGL_BACKEND_CPU};
    tgl_backend *b = NULL;
    assert_int_equal(tgl_open(&o, &b), TGL_ERR_INVALID_ARGUMENT);
    assert_null(b);
    assert_non_null(strstr(tgl_last_error(NULL), "TGL_CACHE_DIR"));
}

/* Four processes fill one empty directory at once; each must get the right result, and the
 * files they leave must all load. */
static void test_concurrent_processes(void **state)
{
    (void)state;
    char *dir = cold_dir(); /* also skips where binaries cannot be saved */
    remove_dir(dir);
    dir = fresh_dir();
    pid_t pids[4];
    for (int i = 0; i < 4; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            /* A fresh image: no EGL or driver state inherited from this process. */
            execl(self_path, self_path, "--child", dir, (char *)NULL);
            _exit(127);
        }
    }
    for (int i = 0; i < 4; i++) {
        int status = 0;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    unsigned long st[3];
    run_ok(dir, st);
    assert_true(st[HITS] >= 1);
    assert_int_equal(st[REJECTED], 0);
    remove_dir(dir);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--child")) {
        unsigned long st[3];
        return run_op(argv[2], st) ? 1 : 0;
    }
    /* The cache holds programs built from GLSL; with TGL_SHADER=spirv (CI's SPIR-V run) the
     * programs come from modules and stay out of it (src/gl/gl_spirv.c says why). */
    setenv("TGL_SHADER", "glsl", 1);
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (n > 0)
        self_path[n] = '\0';
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_cold_then_warm, tgt_env_teardown),
        cmocka_unit_test_teardown(test_corrupted_payload, tgt_env_teardown),
        cmocka_unit_test_teardown(test_truncated, tgt_env_teardown),
        cmocka_unit_test_teardown(test_other_renderer, tgt_env_teardown),
        cmocka_unit_test_teardown(test_bad_magic, tgt_env_teardown),
        cmocka_unit_test_teardown(test_fifo_entry, tgt_env_teardown),
        cmocka_unit_test_teardown(test_swapped_entries, tgt_env_teardown),
        cmocka_unit_test_teardown(test_unwritable_dir, tgt_env_teardown),
        cmocka_unit_test_teardown(test_turned_off, tgt_env_teardown),
        cmocka_unit_test_teardown(test_path_too_long, tgt_env_teardown),
        cmocka_unit_test_teardown(test_concurrent_processes, tgt_env_teardown),
        cmocka_unit_test_teardown(test_warmup_fills_cache, tgt_env_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
