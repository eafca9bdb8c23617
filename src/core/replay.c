/* Replay: re-executes a trace on a backend and, with compare, checks every buffer a call reads
 * against the contents the trace recorded at that moment. A mismatch is charged to the calls
 * that wrote the buffer since it was last checked; after a check the buffer is set to the
 * recorded contents, so each call runs on exactly its recorded inputs and an error does not
 * spread into later calls. */
#include "trace.h"
#include "trace_read.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct replay_alloc {
    tgl_ptr ptr;         /* on the replay backend (kept after the free: a stale pointer) */
    uint64_t bytes;
    int live;
    uint64_t freed_at;   /* call number of the free */
    unsigned writers;    /* calls that wrote it since its last check */
    uint64_t writer_call;/* the latest of them */
    char writer[320];    /* and its arguments */
    char out_kind;       /* its signature letter for this buffer: the element type */
    tgl_dtype out_dtype; /* for a tensor ('T'): its dtype */
    double limit;        /* the loosest family limit among them */
} replay_alloc;

typedef struct replay {
    const tgl__replay_opts *o;
    tgl__trace_reader r;
    tgl_backend *b;
    replay_alloc *allocs;
    uint32_t n_allocs, cap;
    uint64_t calls, checks, status_mismatches;
    uint64_t live_bytes, max_bytes;
    double worst[4];     /* worst NMSE seen per compare family */
    uint8_t *scratch;
    size_t scratch_cap;
} replay;

static tgl_status fail_at(replay *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tgl_status fail_at(replay *p, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return tgl__fail(NULL, TGL_ERR_IO, "trace %s: record %llu (call %llu): %s", p->r.path,
                     (unsigned long long)p->r.record, (unsigned long long)p->calls, what);
}

/* The replay pointer for a recorded one. A pointer into a freed allocation is only accepted
 * when the recorded call failed (it is the program's own stale-pointer error, replayed). */
static tgl_status map_ptr(replay *p, const tgl__rcall *rc, size_t arg, const tgl__rptr *rp, tgl_ptr *out)
{
    *out = 0;
    if (rp->tag == TGL__PTR_NULL)
        return TGL_OK;
    if (rp->tag == TGL__PTR_RAW) {
        *out = 1; /* no marker bit: unknown to every backend, as the recorded pointer was */
        return TGL_OK;
    }
    if (rp->alloc >= p->n_allocs)
        return fail_at(p, "%s argument %zu names allocation %u, but only %u were made", tgl__fn_name(rc->fn),
                       arg + 1, rp->alloc, p->n_allocs);
    const replay_alloc *a = &p->allocs[rp->alloc];
    if (!a->live && rc->status == TGL_OK)
        return fail_at(p, "%s argument %zu uses allocation %u, freed by call %llu, yet the call succeeded",
                       tgl__fn_name(rc->fn), arg + 1, rp->alloc, (unsigned long long)a->freed_at);
    *out = a->ptr + rp->offset;
    /* A freed allocation's pointer is replayed as it was, so the library's own check refuses it
     * as the recorded call was refused. Should it name a live allocation (handles do not repeat
     * for 2^17 allocations of a class, so this is a defence), it is replayed as a pointer that
     * names none: the call can touch nothing (a copy from it once wrote a live allocation's
     * bytes into a placeholder the size of nothing). */
    for (uint32_t k = 0; !a->live && k < p->n_allocs; k++)
        if (p->allocs[k].live && p->allocs[k].ptr == a->ptr)
            *out = 1; /* no marker bit: no backend's pointer */
    return TGL_OK;
}

static int scratch_reserve(replay *p, size_t n)
{
    if (n <= p->scratch_cap)
        return 1;
    uint8_t *s = realloc(p->scratch, n);
    if (!s)
        return 0;
    p->scratch = s;
    p->scratch_cap = n;
    return 1;
}

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

static double bf16_to_double(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

double tgl__buffer_nmse(const uint8_t *got, const uint8_t *want, size_t n, char kind, tgl_dtype dt)
{
    if (memcmp(got, want, n) == 0)
        return 0.0;
    if (kind == 'T' || kind == 'M')
        kind = dt == TGL_DTYPE_F32 ? 'o' : dt == TGL_DTYPE_F16 ? 'O' : dt == TGL_DTYPE_BF16 ? 'B' : 0;
    size_t es = kind == 'o' || kind == 'x' ? 4 : kind == 'O' || kind == 'X' || kind == 'B' ? 2 : 0;
    if (!es || memcmp(got + n / es * es, want + n / es * es, n % es) != 0)
        return INFINITY;
    double diff = 0.0, ref = 0.0;
    for (size_t i = 0; i + es <= n; i += es) {
        double g, w;
        if (es == 4) {
            float fg, fw;
            memcpy(&fg, got + i, 4);
            memcpy(&fw, want + i, 4);
            g = fg;
            w = fw;
        } else {
            uint16_t hg, hw;
            memcpy(&hg, got + i, 2);
            memcpy(&hw, want + i, 2);
            g = kind == 'B' ? bf16_to_double(hg) : half_to_double(hg);
            w = kind == 'B' ? bf16_to_double(hw) : half_to_double(hw);
        }
        if (!isfinite(g) || !isfinite(w)) {
            if (!(isnan(g) && isnan(w)) && g != w)
                return INFINITY;
            continue;
        }
        diff += (g - w) * (g - w);
        ref += w * w;
    }
    return ref > 0.0 ? diff / ref : diff > 0.0 ? INFINITY : 0.0;
}

static int family_of(double limit)
{
    return limit <= 0.0 ? 0 : limit <= 1e-9 ? 1 : limit <= 1e-7 ? 2 : 3;
}

/* Checks allocation `id` against data `data` before call rc reads it, then loads the recorded
 * contents into it. Returns TGL_ERR_INTERNAL (with the message) on a divergence. */
static tgl_status check_input(replay *p, const tgl__rcall *rc, uint32_t id, uint32_t data)
{
    replay_alloc *a = &p->allocs[id];
    void *want;
    tgl_status st = tgl__reader_data(&p->r, data, a->bytes, &want);
    if (st)
        return st;
    if (!scratch_reserve(p, (size_t)a->bytes)) {
        free(want);
        return tgl__fail(NULL, TGL_ERR_OUT_OF_MEMORY, "replay: no host memory for %llu bytes",
                         (unsigned long long)a->bytes);
    }
    if ((st = tgl_copy_dtoh(p->b, p->scratch, a->ptr, (size_t)a->bytes))) {
        free(want);
        return tgl__fail(NULL, st, "replay: reading allocation %u back failed: %s", id, tgl_last_error(p->b));
    }
    double nmse = tgl__buffer_nmse(p->scratch, want, (size_t)a->bytes, a->out_kind, a->out_dtype);
    double limit = a->writers ? a->limit : 0.0;
    p->checks++;
    if (a->writers && nmse > p->worst[family_of(limit)])
        p->worst[family_of(limit)] = nmse;
    if (nmse > limit) {
        free(want);
        if (!a->writers)
            return tgl__fail(NULL, TGL_ERR_INTERNAL,
                             "call %llu %s reads allocation %u, which no replayed call wrote since its last "
                             "check, yet it differs from the trace (NMSE %.3g)",
                             (unsigned long long)p->calls, tgl__fn_name(rc->fn), id, nmse);
        return tgl__fail(NULL, TGL_ERR_INTERNAL,
                         "call %llu %s diverges: allocation %u it wrote has NMSE %.3g against the trace (limit %.0e)"
                         "%s; found where call %llu %s reads it",
                         (unsigned long long)a->writer_call, a->writer, id, nmse, limit,
                         a->writers > 1 ? " (with earlier writers since the last check)" : "",
                         (unsigned long long)p->calls, tgl__fn_name(rc->fn));
    }
    if (nmse > 0.0)
        st = tgl_copy_htod(p->b, a->ptr, want, (size_t)a->bytes);
    free(want);
    a->writers = 0;
    a->limit = 0.0;
    if (st)
        return tgl__fail(NULL, st, "replay: loading allocation %u failed: %s", id, tgl_last_error(p->b));
    return TGL_OK;
}

/* Checks one read pointer's snapshot, if it carries one (`what` and `index` name it in errors). */
static tgl_status check_snapshot(replay *p, const tgl__rcall *rc, const tgl__rptr *rp, const char *what,
                                 size_t index)
{
    if (rp->tag != TGL__PTR_ALLOC || rp->data == TGL__TRACE_NONE)
        return TGL_OK;
    if (rp->alloc >= p->n_allocs || !p->allocs[rp->alloc].live)
        return fail_at(p, "%s %zu carries a snapshot of allocation %u, which is not live", what, index, rp->alloc);
    return check_input(p, rc, rp->alloc, rp->data);
}

/* Checks every snapshot the call carries. */
static tgl_status check_inputs(replay *p, const tgl__rcall *rc)
{
    const char *sig = tgl__fn_signature(rc->fn);
    tgl_status st = TGL_OK;
    for (size_t i = 0; !st && sig[i]; i++) {
        if (sig[i] == 'i' || sig[i] == 'x' || sig[i] == 'X' || sig[i] == 't' || sig[i] == 'M')
            st = check_snapshot(p, rc, &rc->p[i], "argument", i + 1);
        if (sig[i] == 'L' && rc->stored[i])
            for (size_t k = 0; !st && k < rc->u[i]; k++)
                st = check_snapshot(p, rc, &rc->list[k], "input", k + 1);
        if (sig[i] == 'U' && rc->present[i])
            for (size_t k = 0; !st && k < rc->u[i]; k++)
                st = check_snapshot(p, rc, &rc->tlist_p[k], "tensor", k + 1);
    }
    return st;
}

/* True when a copy of `bytes` at rp lies inside a live allocation, i.e. the call will touch
 * host memory of that size. */
static int copy_fits(const replay *p, const tgl__rptr *rp, uint64_t bytes)
{
    if (rp->tag != TGL__PTR_ALLOC || rp->alloc >= p->n_allocs || !p->allocs[rp->alloc].live)
        return 0;
    const replay_alloc *a = &p->allocs[rp->alloc];
    return rp->offset <= a->bytes && bytes <= a->bytes - rp->offset;
}

/* Builds the native call from the record. Host buffers it needs are returned in *owned. */
static tgl_status build_call(replay *p, const tgl__rcall *rc, tgl__call *c, tgl_ptr *list, tgl_tensor *tensors,
                             tgl_ptr *alloc_out, void **owned)
{
    static const size_t dummy_sizes[TGL_MAX_DIMS];
    static const int64_t dummy_ints[TGL__MAX_INTS];
    static uint8_t dummy_host[16];
    const char *sig = tgl__fn_signature(rc->fn);
    *c = (tgl__call){.fn = rc->fn};
    *owned = NULL;
    tgl_status st = TGL_OK;
    for (size_t i = 0; !st && sig[i]; i++) {
        tgl__arg *a = &c->args[i];
        a->u = rc->u[i];
        switch (sig[i]) {
        case 'e': case 'z': case 'u': case 'f': case 'd': break;
        case 'S': case 'q':
            a->ptr = !rc->present[i] ? NULL : rc->stored[i] ? (const void *)rc->sizes[i] : (const void *)dummy_sizes;
            break;
        case 'J':
            a->ptr = !rc->present[i] ? NULL : rc->stored[i] ? (const void *)rc->ints : (const void *)dummy_ints;
            break;
        case 'L':
            for (size_t k = 0; !st && rc->stored[i] && k < rc->u[i]; k++)
                st = map_ptr(p, rc, i, &rc->list[k], &list[k]);
            a->ptr = rc->present[i] ? list : NULL;
            break;
        case 's': a->ptr = rc->present[i] ? rc->str : NULL; break;
        case 'c': a->ptr = rc->present[i] ? &rc->desc : NULL; break;
        case 'P': a->ptr = rc->present[i] ? &rc->pool : NULL; break;
        case 'R': a->ptr = rc->present[i] ? &rc->resize : NULL; break;
        case 'Y': a->ptr = rc->present[i] ? &rc->rope : NULL; break;
        case 'N': a->ptr = rc->present[i] ? &rc->attn : NULL; break;
        case 'U': {
            /* the list's descriptors with their pointers mapped, in *owned (a call with a
             * list has no host buffer) */
            size_t n = rc->present[i] ? (size_t)rc->u[i] : 0;
            tgl_tensor *x = n ? malloc(n * sizeof *x) : NULL;
            if (n && !x) {
                st = tgl__fail(NULL, TGL_ERR_OUT_OF_MEMORY, "replay: no host memory for %zu tensors", n);
                break;
            }
            *owned = x;
            for (size_t k = 0; !st && k < n; k++) {
                x[k] = rc->tlist[k];
                st = map_ptr(p, rc, i, &rc->tlist_p[k], &x[k].data);
            }
            static const tgl_tensor empty_list[1];
            a->ptr = !rc->present[i] ? NULL : x ? (const void *)x : (const void *)empty_list;
            break;
        }
        case 't': case 'T': case 'M':
            tensors[i] = rc->tensor[i];
            st = map_ptr(p, rc, i, &rc->p[i], &tensors[i].data);
            a->ptr = rc->present[i] ? &tensors[i] : NULL;
            break;
        case 'H': {
            /* Only a copy that will happen gets a real buffer; one the call rejects reads none. */
            size_t bytes = (size_t)rc->u[2];
            int fits = copy_fits(p, &rc->p[1], bytes);
            a->ptr = !rc->present[i] ? NULL : fits && bytes ? (*owned = malloc(bytes)) : dummy_host;
            if (rc->present[i] && fits && bytes && !*owned)
                st = tgl__fail(NULL, TGL_ERR_OUT_OF_MEMORY, "replay: no host memory for a %zu-byte copy", bytes);
            break;
        }
        case 'D':
            if (rc->present[i] && rc->id[i] != TGL__TRACE_NONE)
                st = tgl__reader_data(&p->r, rc->id[i], rc->u[2], owned);
            else if (rc->present[i] && rc->u[2] && copy_fits(p, &rc->p[0], rc->u[2]))
                st = fail_at(p, "tgl_copy_htod of %llu bytes into a live allocation carries no data",
                             (unsigned long long)rc->u[2]);
            a->ptr = !rc->present[i] ? NULL : *owned ? *owned : dummy_host;
            break;
        case 'A': a->ptr = rc->present[i] ? alloc_out : NULL; break;
        default: st = map_ptr(p, rc, i, &rc->p[i], &a->u); break;
        }
    }
    return st;
}

/* Bookkeeping after a call ran: allocations made and freed, buffers written. */
static tgl_status after_call(replay *p, const tgl__rcall *rc, const tgl__call *c, tgl_status st, tgl_ptr new_ptr)
{
    if (rc->fn == TGL__FN_ALLOC && rc->status == TGL_OK && rc->present[1] && rc->id[1] != TGL__TRACE_NONE) {
        if (rc->id[1] != p->n_allocs)
            return fail_at(p, "tgl_alloc names its allocation %u; the next is %u", rc->id[1], p->n_allocs);
        if (st != TGL_OK)
            return TGL_OK; /* reported as a status mismatch */
        if (p->n_allocs == p->cap) {
            uint32_t cap = p->cap ? p->cap * 2 : 64;
            replay_alloc *a = realloc(p->allocs, cap * sizeof *a);
            if (!a)
                return tgl__fail(NULL, TGL_ERR_OUT_OF_MEMORY, "replay: no host memory");
            p->allocs = a;
            p->cap = cap;
        }
        p->allocs[p->n_allocs++] = (replay_alloc){.ptr = new_ptr, .bytes = rc->u[0], .live = 1};
        p->live_bytes += rc->u[0];
        tgl_status zst = tgl__zero_alloc(p->b, new_ptr, (size_t)rc->u[0]);
        if (zst)
            return tgl__fail(NULL, zst, "replay: zeroing a new allocation failed: %s", tgl_last_error(p->b));
        return TGL_OK;
    }
    if (st != TGL_OK)
        return TGL_OK;
    if (rc->fn == TGL__FN_FREE && rc->p[0].tag == TGL__PTR_ALLOC) {
        p->allocs[rc->p[0].alloc].live = 0;
        p->live_bytes -= p->allocs[rc->p[0].alloc].bytes;
        p->allocs[rc->p[0].alloc].freed_at = p->calls;
        return TGL_OK;
    }
    const char *sig = tgl__fn_signature(rc->fn);
    for (size_t i = 0; sig[i]; i++) {
        if (!strchr("oOIbxXTM", sig[i]) || rc->p[i].tag != TGL__PTR_ALLOC)
            continue;
        replay_alloc *a = &p->allocs[rc->p[i].alloc];
        double limit = tgl__cmp_threshold(tgl__fn_family(rc->fn));
        a->writers++;
        a->writer_call = p->calls;
        a->out_kind = sig[i];
        a->out_dtype = sig[i] == 'T' || sig[i] == 'M' ? rc->tensor[i].dtype : TGL_DTYPE_F32;
        if (limit > a->limit)
            a->limit = limit;
        tgl__call_format(c, a->writer, sizeof a->writer);
    }
    return TGL_OK;
}

static void print_call(replay *p, const tgl__call *c, tgl_status st)
{
    char text[400];
    tgl__call_format(c, text, sizeof text);
    fprintf(p->o->report, "%6llu %s -> %s\n", (unsigned long long)p->calls, text, tgl_status_string(st));
}

static tgl_status replay_call(replay *p, const tgl__rcall *rc)
{
    tgl_status st;
    if (rc->fn == TGL__FN_ALLOC && rc->u[0] > p->max_bytes - p->live_bytes)
        return fail_at(p, "tgl_alloc of %llu bytes would take the trace's live allocations past the replay's "
                       "limit of %llu bytes (--max-memory)", (unsigned long long)rc->u[0],
                       (unsigned long long)p->max_bytes);
    if (p->o->compare && (st = check_inputs(p, rc)))
        return st;
    tgl__call c;
    tgl_ptr list[TGL_EXPR_MAX_INPUTS] = {0}, new_ptr = 0;
    tgl_tensor tensors[TGL__CALL_MAX_ARGS];
    void *owned;
    if ((st = build_call(p, rc, &c, list, tensors, &new_ptr, &owned))) {
        free(owned);
        return st;
    }
    tgl_status got = tgl__call_invoke(p->b, &c);
    free(owned);
    if (p->o->verbose && p->o->report)
        print_call(p, &c, got);
    if (got != rc->status) {
        char text[400];
        tgl__call_format(&c, text, sizeof text);
        p->status_mismatches++;
        if (p->o->compare)
            return tgl__fail(NULL, TGL_ERR_INTERNAL, "call %llu %s diverges: %s on replay (%s), %s in the trace",
                             (unsigned long long)p->calls, text, tgl_status_string(got),
                             got ? tgl_last_error(p->b) : "", tgl_status_string(rc->status));
        if (p->o->report)
            fprintf(p->o->report, "call %llu %s: %s on replay, %s in the trace\n", (unsigned long long)p->calls,
                    text, tgl_status_string(got), tgl_status_string(rc->status));
    }
    return after_call(p, rc, &c, got, new_ptr);
}

/* Half the machine's memory: the default ceiling on what an untrusted trace may allocate. */
static uint64_t default_max_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2 : (uint64_t)1 << 32;
}

static tgl_status replay_file(const char *path, const tgl__replay_opts *o)
{
    replay p = {.o = o, .max_bytes = o->max_bytes ? o->max_bytes : default_max_bytes()};
    tgl__rcall *rc = calloc(1, sizeof *rc);
    if (!rc)
        return tgl__fail(NULL, TGL_ERR_OUT_OF_MEMORY, "replay: no host memory");
    tgl_status st = tgl__reader_open(&p.r, path);
    tgl_options opts = {.kind = o->kind};
    if (!st && !(st = tgl__open_untraced(&opts, &p.b))) {
        struct tgl_device_info info;
        tgl_device_info(p.b, &info);
        if (o->report)
            fprintf(o->report, "replaying %s on %s (%s)%s\n", path, info.backend, info.renderer,
                    o->compare ? ", comparing every buffer a call reads" : "");
        int done = 0;
        while (!st && (o->until == 0 || p.calls < o->until)) {
            if ((st = tgl__reader_next(&p.r, rc, &done)) || done)
                break;
            p.calls++;
            st = replay_call(&p, rc);
        }
        if (!st && (st = tgl_synchronize(p.b)))
            tgl__fail(NULL, st, "replay: %s", tgl_last_error(p.b));
    }
    if (o->report) {
        if (st == TGL_ERR_INTERNAL)
            fprintf(o->report, "DIVERGED after %llu calls: %s\n", (unsigned long long)p.calls, tgl_last_error(NULL));
        else if (st)
            fprintf(o->report, "FAILED: %s\n", tgl_last_error(NULL));
        else
            fprintf(o->report,
                    "%s: %llu calls replayed, %llu buffer reads compared, worst NMSE exact %.2g, element-wise %.2g, "
                    "accumulating %.2g, f16 %.2g%s\n",
                    o->compare ? "AGREE" : "DONE", (unsigned long long)p.calls, (unsigned long long)p.checks,
                    p.worst[0], p.worst[1], p.worst[2], p.worst[3],
                    p.status_mismatches ? " (status mismatches above)" : "");
    }
    tgl_close(p.b);
    tgl__reader_close(&p.r);
    free(p.allocs);
    free(p.scratch);
    tgl__rcall_release(rc);
    free(rc);
    return st;
}

static int by_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The trace files of directory `dir`, sorted; *n = 0 when it holds none. */
static tgl_status list_traces(const char *dir, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return TGL_OK; /* not a directory: the caller treats it as a file */
    size_t cap = 0, suffix = strlen(TGL__TRACE_SUFFIX);
    char **names = NULL;
    struct dirent *e;
    tgl_status st = TGL_OK;
    while (!st && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= suffix || strcmp(e->d_name + len - suffix, TGL__TRACE_SUFFIX) != 0)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            char **m = realloc(names, cap * sizeof *m);
            if (!m) {
                st = tgl__fail(NULL, TGL_ERR_OUT_OF_MEMORY, "replay: no host memory");
                break;
            }
            names = m;
        }
        size_t need = strlen(dir) + 1 + len + 1;
        if (!(names[*n] = malloc(need))) {
            st = tgl__fail(NULL, TGL_ERR_OUT_OF_MEMORY, "replay: no host memory");
            break;
        }
        snprintf(names[*n], need, "%s/%s", dir, e->d_name);
        (*n)++;
    }
    closedir(d);
    if (!st && *n == 0)
        st = tgl__fail(NULL, TGL_ERR_IO, "%s holds no *%s file", dir, TGL__TRACE_SUFFIX);
    if (*n)
        qsort(names, *n, sizeof *names, by_name);
    *out = names;
    return st;
}

tgl_status tgl__replay(const char *path, const tgl__replay_opts *o)
{
    char **files;
    size_t n;
    tgl_status st = list_traces(path, &files, &n);
    if (!st && n == 0) {
        free(files);
        return replay_file(path, o);
    }
    tgl_status worst = st;
    for (size_t i = 0; i < n; i++) {
        if ((st = replay_file(files[i], o)) && !worst)
            worst = st;
        free(files[i]);
    }
    free(files);
    return worst;
}
