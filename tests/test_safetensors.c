/* The safetensors reader and writer of examples/resnet.c (examples/safetensors.c): a written
 * file read back bit for bit; f16, bf16 and f64 tensors converted exactly, the format's other
 * dtypes parsed but not read as floats; each malformed header
 * refused with its reason; and every truncation and every flipped byte of a valid file parsed
 * without reading past it (ASan in CI's sanitizer run; tests/fuzz/fuzz_safetensors.c goes on). */
#include "testing.h"
#include "safetensors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A file image: the 8-byte length, the header, then `data` of data_size bytes. */
static unsigned char *image(const char *header, const void *data, size_t data_size, size_t *size)
{
    size_t n = strlen(header);
    unsigned char *b = malloc(8 + n + data_size + 1);
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)n >> (8 * i));
    for (size_t i = 0; i < n; i++) /* the header's bytes, without its NUL: the format has none */
        b[8 + i] = (unsigned char)header[i];
    if (data_size)
        memcpy(b + 8 + n, data, data_size);
    *size = 8 + n + data_size;
    return b;
}

static void test_round_trip(void **state)
{
    (void)state;
    char path[] = "/tmp/tgl-st-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    float a[6] = {1.5f, -2.0f, 3.25f, 0.0f, -0.0f, 1e-30f}, s = 42.0f, none[1] = {0};
    st_entry e[3] = {{"layer.weight", 2, {2, 3}, a}, {"scalar", 0, {0}, &s}, {"empty", 2, {0, 4}, none}};
    char err[256];
    assert_int_equal(st_save(path, e, 3, err, sizeof err), 0);
    st_file f;
    if (st_load(path, &f, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(f.count, 3);
    const st_tensor *t = st_find(&f, "layer.weight");
    assert_non_null(t);
    assert_int_equal(t->ndim, 2);
    assert_int_equal(t->shape[1], 3);
    float back[6];
    assert_int_equal(st_read_f32(&f, t, back), 0);
    assert_memory_equal(back, a, sizeof a);
    t = st_find(&f, "scalar");
    assert_non_null(t);
    assert_int_equal(t->ndim, 0);
    assert_int_equal(st_read_f32(&f, t, back), 0);
    assert_true(back[0] == 42.0f);
    assert_int_equal(st_find(&f, "empty")->count, 0);
    assert_null(st_find(&f, "missing"));
    st_free(&f);
    unlink(path);
    assert_int_equal(st_load(path, &f, err, sizeof err), -1); /* gone */
    assert_non_null(strstr(err, "cannot open"));
}

/* f16 1.0, -2.5, a subnormal and inf; bf16 1.0 and -3.0; f64 0.5; an i64 counter (as a
 * torchvision state dict's num_batches_tracked) parsed but not read as floats */
static void test_other_dtypes(void **state)
{
    (void)state;
    const unsigned char data[28] = {0x00, 0x3c, 0x00, 0xc1, 0x01, 0x00, 0x00, 0x7c, 0x80, 0x3f, 0x40, 0xc0,
                                    0, 0, 0, 0, 0, 0, 0xe0, 0x3f, 7, 0, 0, 0, 0, 0, 0, 0};
    size_t size;
    unsigned char *b = image("{\"h\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]},"
                             "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[8,12]},"
                             "\"d\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[12,20]},"
                             "\"bn.num_batches_tracked\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[20,28]},"
                             "\"__metadata__\":{\"format\":\"pt\"}}",
                             data, sizeof data, &size);
    st_file f;
    char err[256];
    if (st_parse(b, size, &f, err, sizeof err))
        fail_msg("%s", err);
    float h[4], bf[2], d = 0, untouched = 9.0f;
    assert_int_equal(st_read_f32(&f, st_find(&f, "h"), h), 0);
    assert_int_equal(st_read_f32(&f, st_find(&f, "b"), bf), 0);
    assert_int_equal(st_read_f32(&f, st_find(&f, "d"), &d), 0);
    assert_true(h[0] == 1.0f && h[1] == -2.5f && h[2] == 5.9604644775390625e-8f && h[3] == INFINITY);
    assert_true(bf[0] == 1.0f && bf[1] == -3.0f && d == 0.5f);
    assert_int_equal(st_read_f32(&f, st_find(&f, "bn.num_batches_tracked"), &untouched), -1);
    assert_true(untouched == 9.0f);
    st_free(&f);
    free(b);
}

static void test_refusals(void **state)
{
    (void)state;
    static const struct { const char *header; size_t data; const char *says; } bad[] = {
        {"not json", 0, "not JSON"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", 4, "ends early"},
        {"[1, 2]", 0, "not a JSON object"},
        {"{} x", 0, "after the header"},
        {"{\"a\":{\"dtype\":\"F128\",\"shape\":[1],\"data_offsets\":[0,16]}}", 16, "dtype F128"},
        {"{\"a\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "for 1 elements of 8"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]}}", 4, "shape is not an array"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, "shape[0]"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4, "shape[0]"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, "at most 8"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4, "not [begin, end]"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4, "not within"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,8]}}", 4, "not within"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 8, "for 2 elements"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4,4,4],\"data_offsets\":[0,16]}}", 16, "product"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, "overlap or gap"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "overlap or gap"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, "end at byte 4 of 8"},
        {"{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "not an object with dtype"},
        {"{\"a\":7}", 0, "not an object with dtype"},
        {"{\"__metadata__\":[1]}", 0, "__metadata__ is not an object"},
    };
    const unsigned char zeros[16] = {0};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t size;
        unsigned char *b = image(bad[i].header, zeros, bad[i].data, &size);
        st_file f;
        char err[256] = "";
        if (st_parse(b, size, &f, err, sizeof err) != -1)
            fail_msg("header %zu accepted: %s", i, bad[i].header);
        if (!strstr(err, bad[i].says))
            fail_msg("header %zu: '%s' does not say '%s'", i, err, bad[i].says);
        free(b);
    }
    char name[400];
    memset(name, 'n', sizeof name);
    name[sizeof name - 1] = '\0';
    char header[600];
    snprintf(header, sizeof header, "{\"%s\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", name);
    size_t size;
    unsigned char *b = image(header, zeros, 4, &size);
    st_file f;
    char err[256];
    assert_int_equal(st_parse(b, size, &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "name longer"));
    free(b);
    const unsigned char short_file[5] = {1, 2, 3, 4, 5}, huge_length[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    assert_int_equal(st_parse(short_file, sizeof short_file, &f, err, sizeof err), -1);
    assert_int_equal(st_parse(huge_length, sizeof huge_length, &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "header of 4294967295 bytes"));
}

/* Every prefix of a valid file, and the file with each byte flipped in turn: parsed (or
 * refused) without reading outside it; what is accepted is read in full. */
static void test_damaged_files(void **state)
{
    (void)state;
    float data[7] = {1, 2, 3, 4, 5, 6, 7};
    size_t size;
    unsigned char *good = image("{\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
                                "\"b\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[16,22]},"
                                "\"c\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[22,28]}}",
                                data, sizeof data, &size);
    size_t accepted = 0;
    for (size_t pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < size; i++) {
            size_t n = pass ? size : i;
            unsigned char *b = malloc(n ? n : 1); /* exactly n bytes: ASan sees any read past */
            memcpy(b, good, n);
            if (pass)
                b[i] ^= 0xff;
            st_file f;
            char err[256];
            if (!st_parse(b, n, &f, err, sizeof err)) {
                accepted++;
                for (size_t t = 0; t < f.count; t++) {
                    float *out = malloc(f.tensors[t].count * sizeof(float) + 1);
                    (void)st_read_f32(&f, &f.tensors[t], out);
                    free(out);
                }
                st_free(&f);
            }
            free(b);
        }
    /* the whole file, and those whose flipped byte is in the data or a name */
    assert_true(accepted >= 1);
    free(good);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_other_dtypes),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_damaged_files),
    };
    return cmocka_run_group_tests_name("safetensors", tests, NULL, NULL);
}
