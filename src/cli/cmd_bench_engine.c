/* `tensorgl bench engine`: what the execution engine costs, apart from any kernel's arithmetic.
 *   first use   every op of the standard set once (small size) in a fresh process, with the
 *               program cache empty (cold) and then filled by the cold run (warm); the driver's
 *               own shader caches are turned off in both, so "cold" compiles for real
 *   round trip  a one-element add followed by a 4-byte download, timed one by one
 *   chain       N dependent one-element adds (x += 1) issued back to back, one synchronize
 *   transfers   htod and dtoh of one large buffer, against memcpy of the same bytes on the host
 *   alloc/free  random 1-64 KiB allocations and frees with the pool as configured for this
 *               device, with TGL_POOL=reuse / carve, and with it off
 *   eager ops   the same four ways: element-wise ops over 4096 floats that each allocate their
 *               output and free their input (an eager tensor library's loop), 20 of them and an
 *               in-place add per 4-byte read back (a decode step's shape)
 * Every timed loop checks its result (the chain's final value, the transfer's bytes), so a
 * skipped or lost operation shows as an error, not as a fast figure. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "bench_clock.h"
#include "bench_suite.h"
#include "commands.h"
#include "tensorgl.h"

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct engine_args {
    int round_trips, chain, allocs, skip_cache;
    size_t transfer_bytes;
} engine_args;

#define TRY(b, call, what)                                                                        \
    do {                                                                                          \
        tgl_status st_ = (call);                                                                  \
        if (st_) {                                                                                \
            fprintf(stderr, "tensorgl bench engine: %s: %s: %s\n", what, tgl_status_string(st_),  \
                    tgl_last_error(b));                                                           \
            goto fail;                                                                            \
        }                                                                                         \
    } while (0)

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* ---- first use, cold and warm, each in a child process ---- */

/* What a first-use child reports. */
typedef struct first_use_result {
    double ops, open, failed;
    double per_op[64];
} first_use_result;

/* The child: opens the default backend on `cache_dir`, runs the set once, writes its
 * first_use_result to fd. The driver's own disk cache goes to a fresh
 * empty directory in every run (Mesa: MESA_SHADER_CACHE_DIR; NVIDIA: __GL_SHADER_DISK_CACHE_PATH),
 * so the only cache the warm run finds filled is tensorgl's. (Turning Mesa's cache off instead
 * would also take away its program binary format, and with it tensorgl's cache.) */
static void first_use_child(const char *cache_dir, const char *driver_dir, int fd)
{
    first_use_result out = {0, 0, 1, {0}};
    setenv("TGL_CACHE_DIR", cache_dir, 1);
    mkdir(driver_dir, 0700); /* NVIDIA's driver writes no cache into a missing directory */
    setenv("MESA_SHADER_CACHE_DIR", driver_dir, 1);
    setenv("__GL_SHADER_DISK_CACHE_PATH", driver_dir, 1);
    double t0 = tgl_bench_now();
    tgl_backend *b = NULL;
    if (tgl_bench_op_count > sizeof out.per_op / sizeof out.per_op[0]) {
        fprintf(stderr, "tensorgl bench engine: more ops than the report holds\n");
    } else if (!tgl_open(NULL, &b)) {
        double t1 = tgl_bench_now();
        out.failed = tgl_bench_first_use(b, BENCH_SMALL, out.per_op);
        out.ops = tgl_bench_now() - t1;
        out.open = t1 - t0;
        tgl_close(b);
    } else {
        fprintf(stderr, "tensorgl bench engine: no device: %s\n", tgl_last_error(NULL));
    }
    ssize_t w = write(fd, &out, sizeof out);
    _exit(w == (ssize_t)sizeof out ? 0 : 1);
}

static int first_use(const char *cache_dir, const char *driver_dir, first_use_result *out)
{
    int fds[2];
    if (pipe(fds))
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        first_use_child(cache_dir, driver_dir, fds[1]);
    }
    close(fds[1]);
    size_t got = 0;
    for (ssize_t r; got < sizeof *out && (r = read(fds[0], (char *)out + got, sizeof *out - got)) > 0;)
        got += (size_t)r;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return got == sizeof *out && WIFEXITED(status) && !WEXITSTATUS(status) && out->failed == 0 ? 0 : -1;
}

/* The ops that took longest in r, as "name ms, ...". */
static void slowest(const first_use_result *r, char *out, size_t size)
{
    int used[64] = {0};
    size_t n = 0;
    out[0] = '\0';
    for (int k = 0; k < 4; k++) {
        int best = -1;
        for (size_t i = 0; i < tgl_bench_op_count; i++)
            if (!used[i] && (best < 0 || r->per_op[i] > r->per_op[best]))
                best = (int)i;
        if (best < 0)
            break;
        used[best] = 1;
        int w = snprintf(out + n, size - n, "%s%s %.0f", k ? ", " : "", tgl_bench_ops[best].name,
                         1e3 * r->per_op[best]);
        if (w < 0 || (size_t)w >= size - n)
            break;
        n += (size_t)w;
    }
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path) ? -1 : 0;
}

/* Files directly in dir (tensorgl's cache keeps one per program). */
static int count_files(const char *dir)
{
    int files = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        files += e->d_name[0] != '.';
    closedir(d);
    return files;
}

/* Four fresh processes: both caches empty (cold), both as the cold run left them (what a
 * second run of a program sees with default settings), tensorgl's alone (the driver's empty),
 * and the driver's alone (tensorgl's off). */
static int bench_first_use(void)
{
    char root[] = "/tmp/tensorgl-bench-cache-XXXXXX";
    if (!mkdtemp(root)) {
        fprintf(stderr, "tensorgl bench engine: cannot make a temporary directory\n");
        return 1;
    }
    char ours[64], driver[64], driver_empty[64];
    snprintf(ours, sizeof ours, "%s/tensorgl", root);
    snprintf(driver, sizeof driver, "%s/driver", root);
    snprintf(driver_empty, sizeof driver_empty, "%s/driver-empty", root);
    first_use_result cold, both, tgl_only, driver_only;
    int rc = first_use(ours, driver, &cold) || first_use(ours, driver, &both) ||
             first_use(ours, driver_empty, &tgl_only) || first_use("", driver, &driver_only);
    int files = count_files(ours);
    nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (rc) {
        fprintf(stderr, "tensorgl bench engine: the first-use runs failed\n");
        return 1;
    }
    char top[2][256];
    slowest(&cold, top[0], sizeof top[0]);
    slowest(&both, top[1], sizeof top[1]);
    printf("first use of the standard set's %zu ops (small size), each run a fresh process:\n", tgl_bench_op_count);
    printf("  cold: tensorgl's program cache and the driver's shader cache empty  %9.1f ms\n", 1e3 * cold.ops);
    printf("  warm: both as the cold run left them                                %9.1f ms  (%.1fx faster)\n", 1e3 * both.ops, cold.ops / both.ops);
    printf("  tensorgl's cache alone (%d programs; driver's empty)                %9.1f ms  (%.1fx)\n", files,
           1e3 * tgl_only.ops, cold.ops / tgl_only.ops);
    printf("  driver's cache alone (tensorgl's off)                               %9.1f ms  (%.1fx)\n",
           1e3 * driver_only.ops, cold.ops / driver_only.ops);
    printf("  (tgl_open: %.1f / %.1f / %.1f / %.1f ms; slowest ops cold: %s ms; warm: %s ms)\n", 1e3 * cold.open,
           1e3 * both.open, 1e3 * tgl_only.open, 1e3 * driver_only.open, top[0], top[1]);
    return 0;
}

/* ---- round trip and dependent chain ---- */

static int bench_latency(tgl_backend *b, const engine_args *a)
{
    tgl_ptr x = 0, one = 0, y = 0;
    float h[4] = {0, 1, 0, 0}, back = 0;
    double *t = malloc((size_t)a->round_trips * sizeof *t);
    if (!t)
        return 1;
    TRY(b, tgl_alloc(b, 16, &x), "alloc");
    TRY(b, tgl_alloc(b, 16, &one), "alloc");
    TRY(b, tgl_alloc(b, 16, &y), "alloc");
    TRY(b, tgl_copy_htod(b, x, &h[0], 4), "upload");
    TRY(b, tgl_copy_htod(b, one, &h[1], 4), "upload");

    /* Round trip: one element + 1 into the other buffer, then its 4 bytes back; x and y take
     * turns, so each trip's answer is one more than the last. */
    for (int i = -100; i < a->round_trips; i++) {
        tgl_ptr from = i & 1 ? y : x, to = i & 1 ? x : y;
        double t0 = tgl_bench_now();
        TRY(b, tgl_binary(b, TGL_BINARY_ADD, from, one, to, 1), "add");
        TRY(b, tgl_copy_dtoh(b, &back, to, 4), "download");
        if (i >= 0)
            t[i] = tgl_bench_now() - t0;
        if (back != (float)(i + 101)) {
            fprintf(stderr, "tensorgl bench engine: round trip %d read %g, expected %d\n", i, back, i + 101);
            goto fail;
        }
    }
    qsort(t, (size_t)a->round_trips, sizeof *t, cmp_double);
    printf("round trip (one-element add + 4-byte download), %d trips: median %.1f us, p10 %.1f, p90 %.1f\n",
           a->round_trips, 1e6 * t[a->round_trips / 2], 1e6 * t[a->round_trips / 10],
           1e6 * t[a->round_trips * 9 / 10]);

    /* Chain: x += 1, a->chain times, each reading the last one's result, one synchronize. */
    TRY(b, tgl_copy_htod(b, x, &h[0], 4), "upload");
    TRY(b, tgl_synchronize(b), "synchronize");
    double best = 1e30, issue_best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        TRY(b, tgl_copy_htod(b, x, &h[0], 4), "upload");
        TRY(b, tgl_synchronize(b), "synchronize");
        double t0 = tgl_bench_now();
        for (int i = 0; i < a->chain; i++)
            TRY(b, tgl_binary(b, TGL_BINARY_ADD, x, one, x, 1), "add");
        double t1 = tgl_bench_now();
        TRY(b, tgl_synchronize(b), "synchronize");
        double t2 = tgl_bench_now();
        TRY(b, tgl_copy_dtoh(b, &back, x, 4), "download");
        if (back != (float)a->chain) {
            fprintf(stderr, "tensorgl bench engine: the chain of %d adds ended at %g\n", a->chain, back);
            goto fail;
        }
        best = t2 - t0 < best ? t2 - t0 : best;
        issue_best = t1 - t0 < issue_best ? t1 - t0 : issue_best;
    }
    printf("chain of %d dependent one-element adds, one synchronize: %.2f us per op (issuing alone %.2f us)\n",
           a->chain, 1e6 * best / a->chain, 1e6 * issue_best / a->chain);
    free(t);
    tgl_free(b, x);
    tgl_free(b, one);
    tgl_free(b, y);
    return 0;
fail:
    free(t);
    tgl_free(b, x);
    tgl_free(b, one);
    tgl_free(b, y);
    return 1;
}

/* ---- transfers ---- */

static int bench_transfers(tgl_backend *b, const engine_args *a)
{
    size_t n = a->transfer_bytes;
    unsigned char *src = malloc(n), *dst = malloc(n);
    tgl_ptr d = 0;
    int rc = 1;
    if (!src || !dst) {
        fprintf(stderr, "tensorgl bench engine: out of host memory for %zu bytes\n", n);
        goto fail;
    }
    for (size_t i = 0; i < n; i++)
        src[i] = (unsigned char)(i * 2654435761u >> 13);
    memset(dst, 0, n); /* fault the pages in before timing */
    TRY(b, tgl_alloc(b, n, &d), "alloc");
    double up = 1e30, down = 1e30, host = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        TRY(b, tgl_synchronize(b), "synchronize");
        double t0 = tgl_bench_now();
        TRY(b, tgl_copy_htod(b, d, src, n), "upload");
        TRY(b, tgl_synchronize(b), "synchronize");
        double t1 = tgl_bench_now();
        TRY(b, tgl_copy_dtoh(b, dst, d, n), "download");
        double t2 = tgl_bench_now();
        if (memcmp(src, dst, n)) {
            fprintf(stderr, "tensorgl bench engine: the %zu bytes came back changed\n", n);
            goto fail;
        }
        memset(dst, 0, n);
        double t3 = tgl_bench_now();
        memcpy(dst, src, n);
        double t4 = tgl_bench_now();
        up = t1 - t0 < up ? t1 - t0 : up;
        down = t2 - t1 < down ? t2 - t1 : down;
        host = t4 - t3 < host ? t4 - t3 : host;
    }
    printf("transfers of %zu MiB (best of 5): htod %.2f GB/s, dtoh %.2f GB/s; host memcpy %.2f GB/s "
           "(htod %.2fx, dtoh %.2fx of it)\n",
           n >> 20, n / up * 1e-9, n / down * 1e-9, n / host * 1e-9, host / up, host / down);
    rc = 0;
fail:
    tgl_free(b, d);
    free(src);
    free(dst);
    return rc;
}

/* ---- alloc/free ---- */

/* Keeps 16 live allocations of 1-64 KiB; each step frees a random one and allocates a new one
 * (a model loop's temporaries). The loop runs once untimed first, as every bench here warms up:
 * a pool's first pass creates its blocks, whose pages the driver zero-fills (on this 2-core VM
 * that first pass costs ~4 us per pair, nearly all page faults). Returns seconds per pair of the
 * second pass, or a negative number on error. */
static double alloc_free_pairs(tgl_backend *b, int pairs)
{
    enum { LIVE = 16 };
    tgl_ptr live[LIVE] = {0};
    unsigned seed = 777;
    double t = -1, t0 = 0;
    for (int i = 0; i < LIVE; i++)
        if (tgl_alloc(b, 1024, &live[i]))
            goto done;
    for (int i = -pairs; i < pairs; i++) {
        if (i == 0)
            t0 = tgl_bench_now();
        seed = seed * 1664525u + 1013904223u;
        int slot = (int)(seed >> 28);
        size_t bytes = 1024 * (1 + (seed >> 8) % 64);
        tgl_free(b, live[slot]);
        live[slot] = 0;
        if (tgl_alloc(b, bytes, &live[slot])) {
            fprintf(stderr, "tensorgl bench engine: alloc of %zu bytes: %s\n", bytes, tgl_last_error(b));
            goto done;
        }
    }
    t = (tgl_bench_now() - t0) / pairs;
done:
    for (int i = 0; i < LIVE; i++)
        tgl_free(b, live[i]);
    return t;
}

/* Ops that allocate their output and free their input, EAGER_OPS to a step, then an in-place add
 * and a 4-byte download checked against the exact value (every value is a multiple of 0.5, so
 * f32 holds it exactly). One untimed pass of `steps` steps, then a timed one. Returns seconds
 * per op (allocation, op and free together), or a negative number on error or a wrong value. */
#define EAGER_OPS 20
#define EAGER_N 4096
static double eager_ops(tgl_backend *b, int steps)
{
    tgl_ptr w = 0, x = 0, y = 0;
    double t = -1, t0 = 0;
    float want = 1.0f;
    if (tgl_alloc(b, EAGER_N * sizeof(float), &w) || tgl_fill(b, w, 0.5f, EAGER_N) ||
        tgl_alloc(b, EAGER_N * sizeof(float), &x) || tgl_fill(b, x, 1.0f, EAGER_N))
        goto done;
    for (int s = -steps; s < steps; s++) {
        if (s == 0)
            t0 = tgl_bench_now();
        for (int i = 0; i < EAGER_OPS; i++) {
            if (tgl_alloc(b, EAGER_N * sizeof(float), &y) ||
                tgl_binary(b, i % 2 ? TGL_BINARY_ADD : TGL_BINARY_SUB, x, w, y, EAGER_N))
                goto done;
            tgl_free(b, x);
            x = y;
            y = 0;
            want += i % 2 ? 0.5f : -0.5f;
        }
        float back = 0;
        if (tgl_binary(b, TGL_BINARY_ADD, x, w, x, EAGER_N) || tgl_copy_dtoh(b, &back, x, sizeof back))
            goto done;
        want += 0.5f;
        if (back != want) {
            fprintf(stderr, "tensorgl bench engine: eager ops read back %g, not %g\n", (double)back, (double)want);
            goto done;
        }
    }
    t = (tgl_bench_now() - t0) / ((double)steps * (EAGER_OPS + 1));
done:
    if (t < 0 && tgl_last_error(b)[0])
        fprintf(stderr, "tensorgl bench engine: eager ops: %s\n", tgl_last_error(b));
    tgl_free(b, y);
    tgl_free(b, x);
    tgl_free(b, w);
    return t;
}

static int bench_alloc(const engine_args *a, int gl)
{
    if (!gl) {
        tgl_backend *b = NULL;
        if (tgl_open(NULL, &b))
            return 1;
        double t = alloc_free_pairs(b, a->allocs);
        tgl_close(b);
        printf("alloc/free pairs (1-64 KiB, 16 live), %d pairs after as many untimed: %.3f us per pair on %s\n",
               a->allocs, 1e6 * t,
               "the CPU backend");
        return t < 0;
    }
    /* TGL_POOL is read at tgl_open: one backend per mode, the device's own choice first. */
    static const char *const modes[] = {NULL, "off", "reuse", "carve"};
    const char *saved = getenv("TGL_POOL");
    char *keep = saved ? strdup(saved) : NULL;
    double t[4] = {0}, e[4] = {0};
    int rc = 0, steps = a->allocs / 100 < 10 ? 10 : a->allocs / 100;
    for (int m = 0; m < 4 && !rc; m++) {
        if (modes[m])
            setenv("TGL_POOL", modes[m], 1);
        tgl_backend *b = NULL;
        tgl_options o = {.kind = TGL_BACKEND_GL};
        if (tgl_open(&o, &b)) {
            fprintf(stderr, "tensorgl bench engine: no GL backend: %s\n", tgl_last_error(NULL));
            rc = 1;
            break;
        }
        t[m] = alloc_free_pairs(b, a->allocs);
        e[m] = t[m] < 0 ? -1 : eager_ops(b, steps);
        tgl_close(b);
        rc = t[m] < 0 || e[m] < 0;
    }
    if (keep) {
        setenv("TGL_POOL", keep, 1);
        free(keep);
    } else {
        unsetenv("TGL_POOL");
    }
    if (rc)
        return 1;
    printf("alloc/free pairs (1-64 KiB, 16 live), %d pairs after as many untimed, us per pair: this device's "
           "default %.3f; "
           "TGL_POOL=off %.3f, reuse %.3f, carve %.3f (carve is %.1fx off)\n",
           a->allocs, 1e6 * t[0], 1e6 * t[1], 1e6 * t[2], 1e6 * t[3], t[1] / t[3]);
    printf("eager ops (each allocates its %d-float output and frees its input; %d and an in-place add per "
           "4-byte read back), %d steps after as many untimed, us per op: this device's default %.2f; "
           "TGL_POOL=off %.2f, reuse %.2f, carve %.2f\n",
           EAGER_N, EAGER_OPS, steps, 1e6 * e[0], 1e6 * e[1], 1e6 * e[2], 1e6 * e[3]);
    return 0;
}

static int parse(int argc, char **argv, engine_args *a)
{
    for (int i = 2; i < argc; i++) {
        if (!argv[i])
            return 0;
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        long n = v ? strtol(v, &end, 10) : 0;
        int ok = v && end && !*end && n > 0 && n <= 100000000;
        if (!strcmp(argv[i], "--no-cache")) {
            a->skip_cache = 1;
            continue;
        }
        if (!ok)
            return 0;
        if (!strcmp(argv[i], "--round-trips") && n >= 10)
            a->round_trips = (int)n;
        else if (!strcmp(argv[i], "--chain") && n <= 16000000) /* counts stay exact in f32 */
            a->chain = (int)n;
        else if (!strcmp(argv[i], "--allocs"))
            a->allocs = (int)n;
        else if (!strcmp(argv[i], "--transfer-mib") && n <= 65536)
            a->transfer_bytes = (size_t)n << 20;
        else
            return 0;
        i++;
    }
    return 1;
}

int tgl_cmd_bench_engine(int argc, char **argv)
{
    engine_args a = {2000, 10000, 100000, 0, (size_t)256 << 20};
    if (!parse(argc, argv, &a)) {
        fprintf(stderr, "usage: tensorgl bench engine [--round-trips N] [--chain N] [--transfer-mib N] [--allocs N]"
                        " [--no-cache]\n");
        return 2;
    }
    /* First: the first-use children must start from a process that has not touched GL yet. */
    if (!a.skip_cache && bench_first_use())
        return 1;
    tgl_backend *b = NULL;
    if (tgl_open(NULL, &b)) {
        fprintf(stderr, "tensorgl bench engine: no device: %s\n", tgl_last_error(NULL));
        return 1;
    }
    struct tgl_device_info info;
    tgl_device_info(b, &info);
    printf("device: %s (%s, %s %s)\n", info.backend, info.renderer, info.api, info.version);
    int gl = !strcmp(info.backend, "gl");
    int rc = bench_latency(b, &a) || bench_transfers(b, &a);
    tgl_close(b);
    return rc || bench_alloc(&a, gl);
}
