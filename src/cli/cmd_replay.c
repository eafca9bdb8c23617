/* `tensorgl replay PATH [--backend gl|cpu] [--compare] [--until N] [--verbose]`: re-executes a
 * trace (a .tgltrace file, or every one in a directory) on a backend. Exit 0: replayed (and,
 * with --compare, every buffer a call read agreed with the trace); 1: a call diverged (it is
 * named); 2: the trace is damaged or unreadable, or bad usage. */
#include "commands.h"
#include "core/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(FILE *f)
{
    fprintf(f, "usage: tensorgl replay PATH [--backend gl|cpu|auto] [--compare] [--until N] [--max-memory BYTES] [--verbose]\n"
               "  PATH      a .tgltrace file or a directory of them (TGL_TRACE=DIR writes one per backend)\n"
               "  --compare check every buffer each call reads against the trace; name the first call\n"
               "            whose output differs beyond its family's limit (exit 1)\n"
               "  --until N stop after the N-th call\n"
               "  --max-memory BYTES  refuse a trace whose live allocations exceed this (default: half the RAM)\n");
    return f == stdout ? 0 : 2;
}

/* A whole decimal number > 0 into *out; 0 when s is not one. */
static int positive(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long n = strtoull(s, &end, 10);
    if (!*s || *end || n == 0)
        return 0;
    *out = n;
    return 1;
}

int tgl_cmd_replay(int argc, char **argv)
{
    tgl__replay_opts o = {.kind = TGL_BACKEND_AUTO, .report = stdout};
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return usage(stdout);
        if (!strcmp(a, "--compare")) {
            o.compare = 1;
        } else if (!strcmp(a, "--verbose")) {
            o.verbose = 1;
        } else if (!strcmp(a, "--backend") && i + 1 < argc) {
            const char *k = argv[++i];
            if (!strcmp(k, "gl"))
                o.kind = TGL_BACKEND_GL;
            else if (!strcmp(k, "cpu"))
                o.kind = TGL_BACKEND_CPU;
            else if (strcmp(k, "auto"))
                return usage(stderr);
        } else if (!strcmp(a, "--max-memory") && i + 1 < argc) {
            if (!positive(argv[++i], &o.max_bytes))
                return usage(stderr);
        } else if (!strcmp(a, "--until") && i + 1 < argc) {
            if (!positive(argv[++i], &o.until))
                return usage(stderr);
        } else if (a[0] != '-' && !path) {
            path = a;
        } else {
            return usage(stderr);
        }
    }
    if (!path)
        return usage(stderr);
    tgl_status st = tgl__replay(path, &o);
    if (st == TGL_OK)
        return 0;
    if (st == TGL_ERR_INTERNAL)
        return 1;
    fprintf(stderr, "tensorgl replay: %s\n", tgl_last_error(NULL));
    return 2;
}
