/* The `tensorgl` command. */
#include "commands.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"info", tgl_cmd_info, "[--profile]: print the device, its EGL path and limits (exit 1 when none is usable);\n"
                   "            --profile: its device profile, every trait with its value and source"},
    {"devices", tgl_cmd_devices, "list the EGL devices (name, driver, API, DRM node) that TGL_DEVICE chooses from"},
    {"warmup", tgl_cmd_warmup, "build the device's kernels into the program and driver caches (tgl_warmup)"},
    {"tune", tgl_cmd_tune, "[--size N]: time the GEMM kernel shapes, keep the fastest for this device (tgl_tune)"},
    {"doctor", tgl_cmd_doctor, "[--size small|medium]: every op once on the GL device and on the CPU backend,\n"
                   "            compared; the device, its profile and what disagreed, for a bug report"},
    {"kernels", tgl_cmd_kernels, "list every kernel variant; --dump DIR [--api gl|gles|spirv] writes their sources,\n"
                   "            --part K/N keeps every N-th variant of each kernel from its K-th"},
    {"bench", tgl_cmd_bench, "bench [--ops ..]: every op at 3 sizes on each backend, one table (--json FILE);\n"
                   "            bench ops|gemm|attention|conv2d|engine: focused comparisons (bench --help)"},
    {"replay", tgl_cmd_replay, "replay PATH [--backend gl|cpu] [--compare] [--until N]: re-run a trace\n"
                   "            (TGL_TRACE=DIR records one) and name the first call that diverges"},
    {"version", tgl_cmd_version, "print the library version"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: tensorgl COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "  %-9s %s\n", "help", "print this list");
    fprintf(f, "\nenvironment: TGL_BACKEND=auto|gl|cpu TGL_DEVICE=N|name TGL_API=auto|gl|gles TGL_DEBUG=1\n"
               "             TGL_MAX_TASKS=N TGL_SYNC_TIMEOUT_MS=N TGL_LOG=FILE TGL_CACHE_DIR=DIR\n"
               "             TGL_TRACE=DIR TGL_PROFILE=1 (see README.md)\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "tensorgl: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
