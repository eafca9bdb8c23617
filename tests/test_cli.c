/* The tensorgl command's argument errors: each mistake exits 2 with a message that names the
 * bad value (and the closest valid one, where one is near); --help of a bench subcommand prints
 * the usage without opening a device. Runs the tensorgl binary built beside this test. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char tool[PATH_MAX + 16];

static int setup(void **state)
{
    (void)state;
    return tgt_built_program("tensorgl", tool, sizeof tool);
}

/* Runs `tensorgl ARGS` with a device selection that matches nothing, so opening a device
 * fails; returns its exit status, its stderr (or stdout with want_stdout) in out. */
static int run(const char *args, int want_stdout, char *out, size_t cap)
{
    char cmd[sizeof tool + 512];
    snprintf(cmd, sizeof cmd, "TGL_BACKEND=gl TGL_DEVICE=no-such-device '%s' %s %s", tool, args,
             want_stdout ? "2>/dev/null" : "2>&1 >/dev/null");
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t len = fread(out, 1, cap - 1, p);
    out[len] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static const struct {
    const char *args;
    const char *says[3]; /* substrings the message must hold */
} mistakes[] = {
    {"bench --ops add", {"unknown op or family 'add'", "did you mean binary_add?", "binary_add"}},
    {"bench --ops binary_add,sofmax", {"'sofmax'", "did you mean softmax?"}},
    {"bench --sizes tiny", {"unknown size 'tiny'", "small, medium, large"}},
    {"bench --backend vulkan", {"unknown backend 'vulkan'", "gl, cpu, openblas, host"}},
    {"bench --repeat 0", {"--repeat '0'", "1 to 1000"}},
    {"bench --repeat 5x", {"--repeat '5x'"}},
    {"bench --json", {"--json needs a value"}},
    {"bench --bogus x", {"unknown option '--bogus'"}},
    {"bench bnech", {"unknown subcommand 'bnech'", "engine"}},
    {"bench attention --bogus", {"bench attention: unknown option '--bogus'", "--shape, --causal, --decode"}},
    {"bench engine --chian 5", {"unknown option '--chian'", "did you mean --chain?"}},
    {"bench gemm --sizes", {"bench gemm: --sizes needs a value"}},
    {"bench models --format q5", {"--format (f32, f16, bf16, q8_0 or q4_0) 'q5'"}},
    {"bench models --models vgg", {"--models (llama, resnet or both) 'vgg'"}},
    {"bench models --batch 0", {"--batch (1 to 1024) '0'"}},
    {"bench models --steps 1", {"--steps (2 to 1048576"}},
    {"bench models --prompt 5000", {"--prompt (1 to 4096 tokens) '5000'"}},
    {"bench models --shape 2,33,4,2,64,256,64", {"--shape takes LAYERS,DIM"}},
    {"bench models --gguf a.gguf --save-gguf b.gguf", {"--save-gguf with --gguf"}},
    {"bench models --runs", {"bench models: --runs needs a value"}},
    {"info --bogus", {"info: unknown option '--bogus'", "--profile"}},
    {"info --profile extra", {"unknown option 'extra'"}},
    {"devices -x", {"devices: unknown option '-x'"}},
    {"warmup now", {"warmup: unknown option 'now'"}},
    {"tune --size 3", {"--size '3'", "64 to 8192"}},
    {"tune --size", {"--size needs a value"}},
    {"kernels --api vulkan", {"kernels: unknown API 'vulkan'", "gl, gles, spirv"}},
    {"kernels --api", {"kernels: --api needs a value"}},
    {"kernels --dump /nonexistent/tgl-dir", {"--dump /nonexistent/tgl-dir", "No such file or directory"}},
    {"kernels --bogus", {"kernels: unknown option '--bogus'", "--dump DIR"}},
    {"kernels --part 4/4", {"kernels: --part '4/4'", "0 <= K < N"}},
    {"kernels --part 1/0", {"--part '1/0'"}},
    {"kernels --part -1/4", {"--part '-1/4'"}},
    {"kernels --part 1/4x", {"--part '1/4x'"}},
    {"kernels --part", {"kernels: --part needs a value"}},
    {"doctor --size huge", {"doctor: unknown size 'huge'", "small, medium"}},
    {"doctor --size", {"doctor: --size needs a value"}},
    {"doctor --bogus", {"doctor: unknown option '--bogus'", "--size"}},
    {"bnech", {"unknown command 'bnech'"}},
};

static void test_mistakes(void **state)
{
    (void)state;
    char out[8192];
    for (size_t i = 0; i < sizeof mistakes / sizeof mistakes[0]; i++) {
        int rc = run(mistakes[i].args, 0, out, sizeof out);
        if (rc != 2)
            fail_msg("tensorgl %s exited %d, want 2; it said: %s", mistakes[i].args, rc, out);
        for (size_t k = 0; k < 3 && mistakes[i].says[k]; k++)
            if (!strstr(out, mistakes[i].says[k]))
                fail_msg("tensorgl %s: the message lacks \"%s\"; it said: %s", mistakes[i].args, mistakes[i].says[k],
                         out);
    }
}

/* --help anywhere in a bench subcommand prints every form's usage and exits 0 without opening
 * a device (with TGL_DEVICE matching nothing, opening one would fail); bench --help lists the
 * subcommands too. */
static void test_help(void **state)
{
    (void)state;
    static const char *const helps[] = {"bench attention --help", "bench conv2d -h", "bench gemm --sizes 64 --help",
                                        "bench engine --help", "bench ops --help", "bench models --kv-f16 -h",
                                        "bench --help"};
    char out[8192];
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
        int rc = run(helps[i], 1, out, sizeof out);
        if (rc != 0 || !strstr(out, "tensorgl bench engine") || !strstr(out, "tensorgl bench attention"))
            fail_msg("tensorgl %s exited %d; it printed: %s", helps[i], rc, out);
    }
}

/* tensorgl kernels --part K/N for K = 0..N-1: together exactly the whole list, and every part
 * holds a variant of every kernel (the list needs no device). */
static void test_kernel_parts(void **state)
{
    (void)state;
    char cmd[4 * sizeof tool + 1024], out[256];
    snprintf(cmd, sizeof cmd,
             "d=$(mktemp -d) && T='%s' && \"$T\" kernels | sort > $d/all && "
             "cut -d. -f1 $d/all | sort -u > $d/kernels && : > $d/parts && "
             "for k in 0 1 2 3 4; do \"$T\" kernels --part $k/5 > $d/p || exit 1; cat $d/p >> $d/parts; "
             "cut -d. -f1 $d/p | sort -u | cmp -s - $d/kernels || echo \"part $k/5 lacks a kernel\"; done; "
             "sort -u $d/parts | cmp -s - $d/all || echo 'the parts are not the whole list'; "
             "echo \"variants $(wc -l < $d/all) kernels $(wc -l < $d/kernels)\"; rm -rf $d",
             tool);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t len = fread(out, 1, sizeof out - 1, p);
    out[len] = '\0';
    int status = pclose(p);
    unsigned variants = 0, kernels = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || sscanf(out, "variants %u kernels %u", &variants, &kernels) != 2 ||
        kernels < 20 || variants < 10 * kernels)
        fail_msg("tensorgl kernels --part: %s", out);
}

/* tensorgl doctor on this machine's GL device: every op of the standard set agrees with the CPU
 * backend (exit 0, the summary line) and the report names the renderer and the profile. */
static void test_doctor(void **state)
{
    (void)state;
    if (tgt_cpu_only() || !tgl_egl_display_exists())
        skip();
    char cmd[sizeof tool + 64], out[32768];
    snprintf(cmd, sizeof cmd, "'%s' doctor 2>&1", tool);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t len = fread(out, 1, sizeof out - 1, p);
    out[len] = '\0';
    int status = pclose(p);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !strstr(out, "ops agree with the CPU backend") ||
        strstr(out, "FAILED") || !strstr(out, "renderer:") || !strstr(out, "profile:") || !strstr(out, "ok     gemm "))
        fail_msg("tensorgl doctor exited %d; it printed: %s", WIFEXITED(status) ? WEXITSTATUS(status) : -1, out);
}

/* tensorgl bench models on a small Llama and ResNet-18 (random weights, the same on every run):
 * the GL backend and the CPU backend print the same greedy tokens and top-5 classes, and the
 * JSON file is written. */
static void test_models(void **state)
{
    (void)state;
    if (tgt_cpu_only() || !tgl_egl_display_exists())
        skip();
    char lines[2][4096];
    static const char *const backends[2] = {"gl", "cpu"};
    char err_path[64];
    snprintf(err_path, sizeof err_path, "/tmp/tgl-test-models-%d.err", (int)getpid());
    for (int k = 0; k < 2; k++) {
        /* stdout holds the figures; stderr (TGL_DEBUG's plan lines in some CI runs) goes to a
         * file whose end a failure shows */
        char cmd[sizeof tool + 320], out[8192];
        snprintf(cmd, sizeof cmd, "'%s' bench models --backend %s --shape 2,64,4,2,96,300,48 --prompt 9 --steps 12 "
                 "--batch 2 --size 40 --runs 1 --json /tmp/tgl-test-models-%d.json 2>%s", tool, backends[k],
                 (int)getpid(), err_path);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        size_t len = fread(out, 1, sizeof out - 1, p);
        out[len] = '\0';
        int status = pclose(p);
        const char *tokens = strstr(out, "  tokens:"), *top = strstr(out, "  image 1 top-5:");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !tokens || !top || !strstr(out, "tokens/s") ||
            !strstr(out, "images/s")) {
            char err[2048] = "";
            FILE *e = fopen(err_path, "r");
            if (e) {
                fseek(e, 0, SEEK_END);
                long end = ftell(e);
                fseek(e, end > (long)sizeof err - 1 ? end - (long)sizeof err + 1 : 0, SEEK_SET);
                err[fread(err, 1, sizeof err - 1, e)] = '\0';
                fclose(e);
            }
            remove(err_path);
            fail_msg("tensorgl bench models --backend %s printed: %s\nand on stderr (its end): %s", backends[k], out,
                     err);
        } else {
            snprintf(lines[k], sizeof lines[k], "%.*s|%.*s", (int)strcspn(tokens, "\n"), tokens,
                     (int)strcspn(top, "\n"), top);
        }
    }
    remove(err_path);
    char path[64];
    snprintf(path, sizeof path, "/tmp/tgl-test-models-%d.json", (int)getpid());
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char json[4096];
    size_t len = fread(json, 1, sizeof json - 1, f);
    json[len] = '\0';
    fclose(f);
    remove(path);
    assert_non_null(strstr(json, "\"decode_calls\""));
    assert_non_null(strstr(json, "\"images_per_s\""));
    if (strcmp(lines[0], lines[1]))
        fail_msg("GL and CPU differ:\n  gl:  %s\n  cpu: %s", lines[0], lines[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mistakes),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_kernel_parts),
        cmocka_unit_test(test_doctor),
        cmocka_unit_test(test_models),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
