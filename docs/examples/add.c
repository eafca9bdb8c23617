/* The smallest tensorgl program: add two vectors on the default backend (GL when a context can
 * be made, else the CPU backend) and check the result on the host.
 * Build against an installed tensorgl:  cc -std=c11 add.c $(pkg-config --cflags --libs tensorgl) */
#include <tensorgl.h>

#include <stdio.h>

int main(void)
{
    enum { N = 1000 };
    float a[N], b[N], c[N];
    for (int i = 0; i < N; i++)
        a[i] = (float)i, b[i] = 0.5f * (float)i;

    tgl_backend *be;
    if (tgl_open(NULL, &be)) {
        fprintf(stderr, "tgl_open: %s\n", tgl_last_error(NULL));
        return 1;
    }
    tgl_ptr da = 0, db = 0, dc = 0;
    tgl_status st;
    if ((st = tgl_alloc(be, sizeof a, &da)) || (st = tgl_alloc(be, sizeof b, &db)) ||
        (st = tgl_alloc(be, sizeof c, &dc)) || (st = tgl_copy_htod(be, da, a, sizeof a)) ||
        (st = tgl_copy_htod(be, db, b, sizeof b)) || (st = tgl_binary(be, TGL_BINARY_ADD, da, db, dc, N)) ||
        (st = tgl_copy_dtoh(be, c, dc, sizeof c))) { /* waits for the add */
        fprintf(stderr, "%s: %s\n", tgl_status_string(st), tgl_last_error(be));
        tgl_close(be);
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += c[i] != 1.5f * (float)i;
    printf("add on %s: c[999] = %g, %d mismatches\n", tgl_backend_name(be), c[N - 1], bad);
    tgl_close(be); /* frees da, db and dc too */
    return bad != 0;
}
