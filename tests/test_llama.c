/* examples/llama.c end to end: for each weight format (f32, f16, bf16, q8_0, q4_0; tied and
 * untied heads, half with per-frequency RoPE factors, most others with mixed formats; a seeded
 * part of them under TGL_TEST_SCALE) a random Llama-architecture model
 * is written as GGUF and read back, and the GL backend and the CPU reference must decode the
 * same 64 greedy tokens (the program's exit status and its "SAME TOKENS" line); likewise a model of
 * other sizes (--shape), whose impossible sizes are refused. Damaged files are refused with the
 * reader's message, exit 1.
 * Runs the llama binary built beside this test. */
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
    return tgt_built_program("llama", tool, sizeof tool);
}

/* Runs `llama ARGS`, stdout and stderr in out; returns its exit status. */
static int run(const char *args, char *out, size_t cap)
{
    char cmd[sizeof tool + 512];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", tool, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t len = fread(out, 1, cap - 1, p);
    out[len] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_same_tokens_every_format(void **state)
{
    (void)state;
    if (tgt_cpu_only() || !tgl_egl_display_exists())
        skip();
    static const char *const formats[] = {"f32", "f16", "bf16", "q8_0", "q4_0"};
    static char out[65536];
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        for (int tied = 0; tied <= 1; tied++) {
            if (!tgt_pick(2 * i + (size_t)tied)) /* a thinned run (TGL_TEST_SCALE) takes some */
                continue;
            char args[256];
            /* Llama 3.1's per-frequency RoPE factors (rope_freqs.weight) in every other file, and
             * in most of the rest attn_v and ffn_up in f16 (the products of q, k, v and of gate,
             * up then run apart instead of stacked); an f16 KV cache in the tied files */
            int other = (i + (size_t)tied) % 2, mixed = !other && i != 1;
            snprintf(args, sizeof args, "--random %s%s%s%s --backend both --steps 64 --prompt 3,1,4,1,5,9,2,6",
                     formats[i], tied ? " --tied --kv-f16" : "", other ? " --rope-freqs" : "", mixed ? " --mixed" : "");
            int rc = run(args, out, sizeof out);
            if (rc != 0 || !strstr(out, "SAME TOKENS (64 of 64"))
                fail_msg("llama %s exited %d; it printed: %s", args, rc, out);
        }
    }
}

/* A file that is not GGUF and a GGUF file cut short: exit 1 with the reader's reason. */
static void test_damaged_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/tgl-llama-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char good[PATH_MAX], bad[PATH_MAX], args[2 * PATH_MAX];
    static char out[65536];
    snprintf(good, sizeof good, "%s/model.gguf", dir);
    snprintf(bad, sizeof bad, "%s/cut.gguf", dir);
    snprintf(args, sizeof args, "--random q4_0 --save %s --backend cpu --steps 2", good);
    int rc = run(args, out, sizeof out);
    if (rc != 0)
        fail_msg("llama %s exited %d: %s", args, rc, out);

    FILE *fp = fopen(good, "rb");
    assert_non_null(fp);
    static unsigned char buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    assert_true(n > 1000 && n < sizeof buf);
    const struct {
        size_t keep;
        int garble;
        const char *says;
    } cases[] = {
        {n / 2, 0, "of the data, which holds"},
        {200, 0, "cannot fit"},
        {n, 1, "not a GGUF file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fp = fopen(bad, "wb");
        assert_non_null(fp);
        if (cases[i].garble)
            buf[0] ^= 0x20;
        assert_int_equal(fwrite(buf, 1, cases[i].keep, fp), cases[i].keep);
        fclose(fp);
        if (cases[i].garble)
            buf[0] ^= 0x20;
        snprintf(args, sizeof args, "--model %s --backend cpu --steps 2", bad);
        rc = run(args, out, sizeof out);
        if (rc != 1 || !strstr(out, cases[i].says))
            fail_msg("llama %s (the file cut to %zu bytes%s) exited %d; expected 1 and '%s'; it printed: %s", args,
                     cases[i].keep, cases[i].garble ? ", first byte changed" : "", rc, cases[i].says, out);
    }
    remove(good);
    remove(bad);
    rmdir(dir);
}

/* --shape: a random model of other sizes (odd vocabulary and context, 3 heads sharing one
 * key/value head, q8_0 and f32) decodes the same tokens on both backends; shapes the model
 * cannot take are refused (exit 2) with the rule they break. */
static void test_shapes(void **state)
{
    (void)state;
    static char out[65536];
    char args[256];
    if (!tgt_cpu_only() && tgl_egl_display_exists()) {
        static const char *const formats[] = {"q8_0", "f32"};
        for (int i = 0; i < 2; i++) {
            snprintf(args, sizeof args, "--random %s --shape 2,96,3,1,160,333,40 --backend both --steps 20 "
                     "--prompt 7,300,2,332", formats[i]);
            int rc = run(args, out, sizeof out);
            if (rc != 0 || !strstr(out, "SAME TOKENS (20 of 20") || !strstr(out, "2 layers, dim 96, 3 heads (1 kv) of 32"))
                fail_msg("llama %s exited %d; it printed: %s", args, rc, out);
        }
    }
    static const char *const bad[] = {
        "2,100,2,1,160,333,40",  /* dim not a multiple of 32 */
        "2,96,5,1,160,333,40",   /* heads not dividing dim */
        "2,96,32,1,160,333,40",  /* odd head size */
        "2,96,3,2,160,333,40",   /* kv heads not dividing heads */
        "2,96,3,1,100,333,40",   /* ffn not a multiple of 32 */
        "65,96,3,1,160,333,40",  /* layers */
        "2,96,3,1,160,333",      /* six sizes */
        "2,96,3,1,160,333,40,1", /* eight */
        "2,96,3,1,160,0,40",     /* a size of 0 */
        "2,96,3,1,160,333,x",    /* not a number */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(args, sizeof args, "--random f32 --shape %s --backend cpu --steps 2", bad[i]);
        int rc = run(args, out, sizeof out);
        if (rc != 2 || !strstr(out, "--shape takes"))
            fail_msg("llama %s exited %d; expected 2 and the --shape rule; it printed: %s", args, rc, out);
    }
    /* a context too short for the prompt and the steps */
    snprintf(args, sizeof args, "--random f32 --shape 1,64,2,2,64,50,8 --backend cpu --steps 6 --prompt 1,2,3");
    int rc = run(args, out, sizeof out);
    if (rc != 1 || !strstr(out, "exceed the context of 8"))
        fail_msg("llama %s exited %d; expected 1 and the context; it printed: %s", args, rc, out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_tokens_every_format),
        cmocka_unit_test(test_damaged_files),
        cmocka_unit_test(test_shapes),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
