/* examples/gguf.c, the GGUF reader of examples/llama.c: files written by its writer read back
 * as written (every value type, every weight format, odd extents); the format's rules
 * checked on hand-built bytes (each refusal names its cause); and a hostile pass: every prefix of
 * a valid file that cuts into what its tensors need, and every byte of it flipped, is refused or
 * parsed to ranges inside the file — read in full from an exact-size copy, so a read past the end
 * is an ASan report (the sanitizer run of the suite). */
#include "testing.h"
#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a byte builder for hand-made files ---- */
typedef struct bytes {
    unsigned char b[4096];
    size_t n;
} bytes;

static void put(bytes *o, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        o->b[o->n++] = (unsigned char)(v >> (8 * i));
}
static void put_str(bytes *o, const char *s)
{
    put(o, strlen(s), 8);
    memcpy(o->b + o->n, s, strlen(s));
    o->n += strlen(s);
}
static void header(bytes *o, uint32_t version, uint64_t n_tensors, uint64_t n_kv)
{
    o->n = 0;
    memcpy(o->b, "GGUF", 4);
    o->n = 4;
    put(o, version, 4);
    put(o, n_tensors, 8);
    put(o, n_kv, 8);
}
/* One tensor info: name, dims, type, offset. */
static void info(bytes *o, const char *name, uint32_t ndim, const uint64_t *ne, uint32_t type, uint64_t offset)
{
    put_str(o, name);
    put(o, ndim, 4);
    for (uint32_t d = 0; d < ndim; d++)
        put(o, ne[d], 8);
    put(o, type, 4);
    put(o, offset, 8);
}
static void pad_to(bytes *o, size_t align)
{
    while (o->n % align)
        o->b[o->n++] = 0;
}

/* Parses o's bytes from an exact-size heap copy; the message in err. */
static int parse(const bytes *o, char *err, size_t err_size)
{
    unsigned char *copy = malloc(o->n ? o->n : 1);
    assert_non_null(copy);
    memcpy(copy, o->b, o->n);
    gguf_file f;
    int rc = gguf_parse(copy, o->n, &f, err, err_size);
    if (!rc)
        gguf_free(&f);
    free(copy);
    return rc;
}

static void expect_refused(const bytes *o, const char *says)
{
    char err[512];
    if (parse(o, err, sizeof err) == 0)
        fail_msg("accepted a file that should be refused for '%s'", says);
    if (!strstr(err, says))
        fail_msg("refused with \"%s\"; expected it to say \"%s\"", err, says);
}

static void test_format_rules(void **state)
{
    (void)state;
    bytes o;
    memset(&o, 0, sizeof o);
    char err[512];
    const uint64_t ne32[2] = {32, 2}, ne7[1] = {7};

    header(&o, 3, 0, 0);
    assert_int_equal(parse(&o, err, sizeof err), 0); /* an empty file of version 3 */
    header(&o, 2, 0, 0);
    assert_int_equal(parse(&o, err, sizeof err), 0);
    header(&o, 3, 0, 0);
    o.b[0] = 'g';
    expect_refused(&o, "not a GGUF file");
    header(&o, 1, 0, 0);
    expect_refused(&o, "version 1");
    header(&o, 3, 0, 0);
    o.n -= 3;
    expect_refused(&o, "key-value count");
    header(&o, 3, 0, 1ull << 60);
    expect_refused(&o, "cannot fit");
    header(&o, 3, 1ull << 40, 0);
    expect_refused(&o, "cannot fit");

    /* Strings: a length past the end; a key holding a NUL; a key too long. */
    header(&o, 3, 0, 1);
    put(&o, 1000, 8);
    put(&o, 0, 8);
    expect_refused(&o, "a string of 1000 bytes");
    header(&o, 3, 0, 1);
    put(&o, 3, 8);
    memcpy(o.b + o.n, "a\0b", 3);
    o.n += 3;
    put(&o, GGUF_U8, 4);
    put(&o, 1, 1);
    expect_refused(&o, "NUL");
    header(&o, 3, 0, 1);
    put(&o, 300, 8);
    memset(o.b + o.n, 'k', 300);
    o.n += 300;
    put(&o, GGUF_U8, 4);
    put(&o, 1, 1);
    expect_refused(&o, "300 bytes long");

    /* Values: an unknown type, a bool of 2, arrays of arrays, arrays longer than the file,
     * duplicate keys, a bad general.alignment. */
    header(&o, 3, 0, 1);
    put_str(&o, "k");
    put(&o, 13, 4);
    expect_refused(&o, "value type 13");
    header(&o, 3, 0, 1);
    put_str(&o, "k");
    put(&o, GGUF_BOOL, 4);
    put(&o, 2, 1);
    expect_refused(&o, "a bool of value 2");
    header(&o, 3, 0, 1);
    put_str(&o, "k");
    put(&o, GGUF_ARRAY, 4);
    put(&o, GGUF_ARRAY, 4);
    put(&o, 1, 8);
    expect_refused(&o, "arrays of arrays");
    header(&o, 3, 0, 1);
    put_str(&o, "k");
    put(&o, GGUF_ARRAY, 4);
    put(&o, GGUF_U64, 4);
    put(&o, 1ull << 61, 8);
    expect_refused(&o, "elements of 8 bytes");
    header(&o, 3, 0, 1);
    put_str(&o, "k");
    put(&o, GGUF_ARRAY, 4);
    put(&o, GGUF_STRING, 4);
    put(&o, 1ull << 62, 8);
    expect_refused(&o, "strings cannot fit");
    header(&o, 3, 0, 2);
    put_str(&o, "k");
    put(&o, GGUF_U8, 4);
    put(&o, 1, 1);
    put_str(&o, "k");
    put(&o, GGUF_U8, 4);
    put(&o, 1, 1);
    expect_refused(&o, "appears twice");
    header(&o, 3, 0, 1);
    put_str(&o, "general.alignment");
    put(&o, GGUF_U32, 4);
    put(&o, 24, 4);
    expect_refused(&o, "power of two");
    header(&o, 3, 0, 1);
    put_str(&o, "general.alignment");
    put(&o, GGUF_U64, 4);
    put(&o, 32, 8);
    expect_refused(&o, "power of two");

    /* Tensors: dims 0 and 5, a zero extent, an unknown type, rows not whole blocks, an offset
     * off the alignment, data past the end, duplicate names. */
    header(&o, 3, 1, 0);
    info(&o, "t", 0, ne7, GGML_F32, 0);
    expect_refused(&o, "0 dims");
    header(&o, 3, 1, 0);
    info(&o, "t", 5, (const uint64_t[]){1, 1, 1, 1, 1}, GGML_F32, 0);
    expect_refused(&o, "5 dims");
    header(&o, 3, 1, 0);
    info(&o, "t", 2, (const uint64_t[]){0, 4}, GGML_F32, 0);
    expect_refused(&o, "extent 0");
    header(&o, 3, 1, 0);
    info(&o, "t", 1, ne7, 4, 0);
    expect_refused(&o, "ggml type 4");
    header(&o, 3, 1, 0);
    info(&o, "t", 1, ne7, GGML_Q4_0, 0);
    expect_refused(&o, "not whole blocks");
    header(&o, 3, 1, 0);
    info(&o, "t", 2, ne32, GGML_Q8_0, 16);
    expect_refused(&o, "not a multiple of the alignment");
    header(&o, 3, 1, 0);
    info(&o, "t", 2, ne32, GGML_Q8_0, 0);
    pad_to(&o, 32);
    o.n += 67; /* 2 blocks of 34 bytes need 68 */
    expect_refused(&o, "of the data, which holds 67");
    header(&o, 3, 1, 0);
    info(&o, "t", 2, (const uint64_t[]){1ull << 40, 1ull << 40}, GGML_F32, 0);
    expect_refused(&o, "overflows");
    header(&o, 3, 2, 0);
    info(&o, "t", 1, ne7, GGML_F32, 0);
    info(&o, "t", 1, ne7, GGML_F32, 32);
    expect_refused(&o, "appears twice");

    /* A tensor exactly at the end; alignment 64 moves the data's start. */
    header(&o, 3, 1, 1);
    put_str(&o, "general.alignment");
    put(&o, GGUF_U32, 4);
    put(&o, 64, 4);
    info(&o, "t", 2, ne32, GGML_Q8_0, 0);
    pad_to(&o, 64);
    size_t data_at = o.n;
    for (int i = 0; i < 68; i++)
        o.b[o.n++] = (unsigned char)i;
    gguf_file f;
    assert_int_equal(gguf_parse(o.b, o.n, &f, err, sizeof err), 0);
    assert_int_equal(f.alignment, 64);
    assert_ptr_equal(f.tensors[0].data, o.b + data_at);
    assert_int_equal(f.tensors[0].size, 68);
    gguf_free(&f);
}

/* A file from the writer with every kind of value and every weight format; the bytes it wrote. */
static unsigned char *written_file(size_t *size, gguf_write_tensor *ts, size_t *n_ts, void **owned)
{
    static const uint32_t types[] = {GGML_F32, GGML_F16, GGML_BF16, GGML_Q8_0, GGML_Q4_0};
    static const uint64_t extents[][2] = {{7, 3}, {13, 1}, {5, 11}, {64, 3}, {96, 5}};
    static char names[5][32];
    tgt_rng r;
    tgt_rng_init(&r, tgt_seed());
    for (size_t i = 0; i < 5; i++) {
        uint64_t n = gguf_tensor_bytes(types[i], 2, extents[i]);
        assert_true(n > 0);
        unsigned char *p = malloc((size_t)n ? (size_t)n : 1);
        assert_non_null(p);
        for (uint64_t k = 0; k < n; k++)
            p[k] = (unsigned char)tgt_next(&r);
        owned[i] = p;
        snprintf(names[i], sizeof names[i], "blk.%zu.weight", i);
        ts[i] = (gguf_write_tensor){names[i], 2, {extents[i][0], extents[i][1], 1, 1}, types[i], p};
    }
    *n_ts = 5;
    const gguf_write_kv kvs[] = {
        {.key = "general.architecture", .type = GGUF_STRING, .str = "llama"},
        {.key = "u32", .type = GGUF_U32, .u = 4000000000u},
        {.key = "i32", .type = GGUF_I32, .i = -7},
        {.key = "f32", .type = GGUF_F32, .f = 0.25},
        {.key = "u64", .type = GGUF_U64, .u = 1ull << 40},
        {.key = "flag", .type = GGUF_BOOL, .u = 1},
    };
    char path[] = "/tmp/tgl-gguf-XXXXXX", err[256];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    if (gguf_save(path, kvs, sizeof kvs / sizeof kvs[0], ts, *n_ts, err, sizeof err))
        fail_msg("gguf_save: %s", err);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    unsigned char *buf = malloc(1 << 16);
    assert_non_null(buf);
    *size = fread(buf, 1, 1 << 16, fp);
    fclose(fp);
    remove(path);
    return buf;
}

static void test_round_trip(void **state)
{
    (void)state;
    gguf_write_tensor ts[5];
    void *owned[5];
    size_t size, n_ts;
    unsigned char *buf = written_file(&size, ts, &n_ts, owned);
    gguf_file f;
    char err[256], s[64];
    if (gguf_parse(buf, size, &f, err, sizeof err))
        fail_msg("gguf_parse of the writer's file: %s", err);
    uint64_t u;
    double d;
    assert_int_equal(f.version, 3);
    assert_int_equal(gguf_get_string(&f, "general.architecture", s, sizeof s), 0);
    assert_string_equal(s, "llama");
    assert_int_equal(gguf_get_uint(&f, "u32", &u), 0);
    assert_true(u == 4000000000u);
    assert_int_equal(gguf_get_uint(&f, "u64", &u), 0);
    assert_true(u == 1ull << 40);
    assert_int_equal(gguf_find_kv(&f, "i32")->v.i, -7);
    assert_int_equal(gguf_get_uint(&f, "i32", &u), -1); /* negative: not an unsigned value */
    assert_int_equal(gguf_get_float(&f, "f32", &d), 0);
    assert_true(d == 0.25);
    assert_int_equal(gguf_get_uint(&f, "flag", &u), -1); /* a bool is not an integer */
    assert_int_equal(gguf_find_kv(&f, "flag")->v.u, 1);
    assert_int_equal(gguf_get_uint(&f, "missing", &u), -1);
    assert_int_equal(f.n_tensors, n_ts);
    for (size_t i = 0; i < n_ts; i++) {
        const gguf_tensor *t = gguf_find_tensor(&f, ts[i].name);
        assert_non_null(t);
        assert_int_equal(t->type, ts[i].type);
        assert_int_equal(t->ne[0], ts[i].ne[0]);
        assert_int_equal(t->ne[1], ts[i].ne[1]);
        assert_int_equal(t->size, gguf_tensor_bytes(ts[i].type, 2, ts[i].ne));
        assert_int_equal(((size_t)(t->data - buf) - (size_t)(f.tensors[0].data - buf)) % 32, 0);
        assert_memory_equal(t->data, ts[i].data, (size_t)t->size);
        free(owned[i]);
    }
    gguf_free(&f);
    free(buf);
}

/* Parses a copy of buf[0, n) of exactly n bytes; accepted, every tensor is read in full. */
static int parse_and_touch(const unsigned char *buf, size_t n)
{
    unsigned char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    memcpy(copy, buf, n);
    gguf_file f;
    char err[256];
    int rc = gguf_parse(copy, n, &f, err, sizeof err);
    if (rc == 0) {
        unsigned sum = 0;
        for (size_t i = 0; i < f.n_tensors; i++) {
            const gguf_tensor *t = &f.tensors[i];
            assert_true(t->data >= copy && t->data + t->size <= copy + n);
            for (uint64_t k = 0; k < t->size; k++)
                sum += t->data[k];
        }
        for (size_t i = 0; i < f.n_kv; i++)
            if (f.kvs[i].type == GGUF_STRING)
                assert_true((const unsigned char *)f.kvs[i].str + f.kvs[i].str_len <= copy + n);
        (void)sum;
        gguf_free(&f);
    } else {
        assert_true(err[0] != '\0'); /* every refusal says why */
    }
    free(copy);
    return rc;
}

static void test_hostile(void **state)
{
    (void)state;
    gguf_write_tensor ts[5];
    void *owned[5];
    size_t size, n_ts;
    unsigned char *buf = written_file(&size, ts, &n_ts, owned);
    gguf_file f;
    char err[256];
    assert_int_equal(gguf_parse(buf, size, &f, err, sizeof err), 0);
    size_t needed = 0; /* the end of the last tensor's bytes: past it lies only padding */
    for (size_t i = 0; i < f.n_tensors; i++) {
        size_t end = (size_t)(f.tensors[i].data - buf) + (size_t)f.tensors[i].size;
        needed = end > needed ? end : needed;
    }
    gguf_free(&f);
    for (size_t n = 0; n < size; n++) {
        int rc = parse_and_touch(buf, n);
        if (n < needed && rc == 0)
            fail_msg("a file cut to %zu of its %zu bytes (its tensors need %zu) was accepted", n, size, needed);
    }
    size_t refused = 0;
    for (size_t i = 0; i < size; i++) {
        for (int flip = 0; flip < 3; flip++) {
            static const unsigned char masks[3] = {0xFF, 0x80, 0x01};
            buf[i] ^= masks[flip];
            refused += parse_and_touch(buf, size) != 0;
            buf[i] ^= masks[flip];
        }
    }
    print_message("%zu bytes, each flipped three ways: %zu of %zu variants refused, the rest parsed inside the "
                  "file\n", size, refused, 3 * size);
    assert_true(refused > 0);
    for (size_t i = 0; i < n_ts; i++)
        free(owned[i]);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_rules),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
