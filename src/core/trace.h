/* Tracing, profiling and replay: the pieces behind the call hook. */
#ifndef TGL_CORE_TRACE_H
#define TGL_CORE_TRACE_H

#include "calls.h"

/* True when a public call on b must go through its hook, TGL__HOOK(<ID>) (tracing or profiling
 * is on and the hook is not already running a call of its own). */
static inline int tgl__hooked(const tgl_backend *b)
{
    return b && (b->trace || b->profile) && !b->hook_busy;
}

/* The hooks, one per registry row (hook.c): each captures the call's arguments, records and
 * times it around the real call, and returns the real call's status. */
#define TGL__HOOK_DECL(id, cname, family, slot, dtypes, cmp, cost, warm) \
    tgl_status tgl__hook_##id(tgl_backend *b TGL__ARGS_##id(TGL__PARAM_A, TGL__PARAM_E, TGL__PARAM_N));
TGL__OPS(TGL__HOOK_DECL)
#undef TGL__HOOK_DECL

/* Zeroes a new allocation, so bytes no call wrote compare equal between a run and its replay. */
tgl_status tgl__zero_alloc(tgl_backend *b, tgl_ptr p, size_t bytes);

/* Trace writer (trace_write.c). */
tgl_status tgl__trace_begin(tgl_backend *b, const char *dir);
void tgl__trace_before(tgl_backend *b, const tgl__call *c);
/* Tests: every snapshot's dedup hash alike (1), to prove that contents which collide are told
 * apart by their bytes. */
void tgl__test_trace_weak_hash(int on);
void tgl__trace_after(tgl_backend *b, const tgl__call *c, tgl_status st);
tgl_status tgl__trace_end(tgl_backend *b);

/* Profiler (profile.c). */
tgl_status tgl__profile_begin(tgl_backend *b);
void tgl__profile_call_start(tgl_backend *b);
void tgl__profile_call_end(tgl_backend *b, const tgl__call *c, tgl_status st);
/* Prints the table (per call kind, largest share first). */
void tgl__profile_print(tgl_backend *b, FILE *out);
/* Drops the figures, printing them to stderr first when `print`. */
void tgl__profile_end(tgl_backend *b, int print);

/* Replays every trace file at `path` (a file or a directory of them) on `kind`. Lines go to
 * `report`. Returns TGL_OK when every replayed call agreed (or compare is off), TGL_ERR_INTERNAL
 * with the diverging call in tgl_last_error(NULL) when one did not, TGL_ERR_IO for an unreadable
 * or damaged trace (the message names the file, the record and what is wrong). */
typedef struct tgl__replay_opts {
    tgl_backend_kind kind;
    int compare;
    uint64_t until;   /* last call record to run (1-based); 0 = all */
    FILE *report;
    int verbose;      /* a line per call */
    uint64_t max_bytes; /* live allocations the trace may make (untrusted sizes); 0 = half the RAM */
} tgl__replay_opts;
tgl_status tgl__replay(const char *path, const tgl__replay_opts *o);

#endif
