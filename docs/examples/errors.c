/* What a failed call looks like: a status, a message naming the argument, and no buffer changed.
 * Build against an installed tensorgl:  cc -std=c11 errors.c $(pkg-config --cflags --libs tensorgl) */
#include <tensorgl.h>

#include <stdio.h>

int main(void)
{
    tgl_backend *be;
    if (tgl_open(NULL, &be)) {
        fprintf(stderr, "tgl_open: %s\n", tgl_last_error(NULL));
        return 1;
    }
    float x[4] = {1, 2, 3, 4}, y[4];
    tgl_ptr p = 0;
    int ok = !tgl_alloc(be, sizeof x, &p) && !tgl_copy_htod(be, p, x, sizeof x);

    /* Reading 8 floats from a 4-float allocation is refused before anything runs. */
    tgl_status st = tgl_unary(be, TGL_UNARY_EXP, p, p, 8);
    printf("exp over 8 floats of 4: %s (%s)\n", tgl_status_string(st), tgl_last_error(be));
    ok = ok && st == TGL_ERR_INVALID_POINTER;

    /* A malformed expression says where and what was expected. */
    st = tgl_map(be, "a * (b + ", &p, 1, p, 4);
    printf("tgl_map(\"a * (b + \"): %s (%s)\n", tgl_status_string(st), tgl_last_error(be));
    ok = ok && st == TGL_ERR_INVALID_ARGUMENT;

    /* A freed pointer is recognised as such. */
    tgl_ptr stale = p;
    ok = ok && !tgl_copy_dtoh(be, y, p, sizeof y) && !tgl_free(be, p);
    st = tgl_free(be, stale);
    printf("second free: %s (%s)\n", tgl_status_string(st), tgl_last_error(be));
    ok = ok && st == TGL_ERR_INVALID_POINTER;

    for (int i = 0; i < 4; i++) /* the failed calls left the data as it was */
        ok = ok && y[i] == x[i];
    printf("%s\n", ok ? "every failure was reported and changed nothing" : "UNEXPECTED");
    tgl_close(be);
    return !ok;
}
