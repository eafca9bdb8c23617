/* `tensorgl info`, `devices`, `warmup`, `tune` and `version`. */
#include "bench_clock.h"
#include "cli_args.h"
#include "commands.h"
#include "tensorgl.h"
#include "core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tgl_cmd_version(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("tensorgl %d.%d.%d\n", TGL_VERSION_MAJOR, TGL_VERSION_MINOR, TGL_VERSION_PATCH);
    return 0;
}

int tgl_cmd_info(int argc, char **argv)
{
    int profile = argc == 2 && !strcmp(argv[1], "--profile");
    if (argc > 1 && !profile)
        return tgl_cli_bad_option("info", argv[argc > 2 && !strcmp(argv[1], "--profile") ? 2 : 1],
                                  "tensorgl info [--profile]");
    tgl_backend *b;
    tgl_status st = tgl_open(NULL, &b);
    if (st) {
        fprintf(stderr, "tensorgl: no usable device (%s): %s\n", tgl_status_string(st), tgl_last_error(NULL));
        return 1;
    }
    struct tgl_device_info i;
    tgl_device_info(b, &i);
    printf("backend:        %s\n", i.backend);
    printf("api:            %s\n", i.api);
    printf("version:        %s\n", i.version);
    if (i.glsl_version[0])
        printf("glsl:           %s\n", i.glsl_version);
    if (i.shaders[0])
        printf("kernels from:   %s\n", i.shaders);
    printf("vendor:         %s\n", i.vendor);
    printf("renderer:       %s\n", i.renderer);
    printf("egl path:       %s\n", i.egl_path);
    if (i.egl_version[0])
        printf("egl:            %s\n", i.egl_version);
    if (i.fallback_reason[0])
        printf("gl unavailable: %s\n", i.fallback_reason);
    if (i.backend[0] == 'g') {
        printf("robust:         %s\n", i.robust ? "yes (context loss is detected)" : "no");
        printf("debug:          %s\n", i.debug ? "yes" : "no");
        printf("max ssbo block: %llu bytes\n", (unsigned long long)i.max_ssbo_block_size);
        printf("ssbo alignment: %llu bytes\n", (unsigned long long)i.ssbo_offset_alignment);
        printf("workgroup size: max %u x %u x %u, %u invocations; kernels use %u (reducing: %u)\n",
               i.max_workgroup_size[0], i.max_workgroup_size[1], i.max_workgroup_size[2],
               i.max_workgroup_invocations, i.workgroup_size, i.reduce_workgroup_size);
        printf("workgroups:     max %u x %u x %u\n", i.max_workgroup_count[0], i.max_workgroup_count[1],
               i.max_workgroup_count[2]);
        printf("shared memory:  %llu bytes\n", (unsigned long long)i.max_shared_memory);
        printf("storage blocks: %u per kernel\n", i.max_storage_blocks);
    }
    if (i.device_memory)
        printf("memory:         %llu MiB\n", (unsigned long long)(i.device_memory >> 20));
    else
        printf("memory:         not reported by the driver\n");
    if (profile) { /* every trait of the device profile, its value and where it came from */
        tgl__print_device_profile(b, stdout);
        tgl_close(b);
        return 0;
    }
    /* What tgl_supports answers, so a caller can see what to route elsewhere. */
    static const char *const how[] = {"-", "converted", "native"};
    printf("ops (tgl_supports; \"converted\": stored as such, computed in f32):\n");
    printf("  %-18s", "op");
    for (int dt = 0; dt < TGL_DTYPE_COUNT; dt++)
        printf(" %-10s", tgl_dtype_name((tgl_dtype)dt));
    printf("\n");
    for (int op = 0; op < TGL_OP_COUNT; op++) {
        printf("  %-18s", tgl_op_name((tgl_op)op));
        for (int dt = 0; dt < TGL_DTYPE_COUNT; dt++)
            printf(" %-10s", how[tgl_supports(b, (tgl_op)op, (tgl_dtype)dt)]);
        printf("\n");
    }
    tgl_close(b);
    return 0;
}

/* `tensorgl devices`: every EGL device with what a context on it reports. */
int tgl_cmd_devices(int argc, char **argv)
{
    if (argc > 1)
        return tgl_cli_bad_option("devices", argv[1], "tensorgl devices (no options)");
    struct tgl_device_entry d[16];
    int n = 0;
    tgl_status st = tgl_list_devices(d, 16, &n);
    if (st) {
        fprintf(stderr, "tensorgl devices: %s: %s\n", tgl_status_string(st), tgl_last_error(NULL));
        return 1;
    }
    printf("%d EGL device%s (TGL_DEVICE=N picks one by index, TGL_DEVICE=text by a part of its name, driver or "
           "node):\n", n, n == 1 ? "" : "s");
    for (int i = 0; i < n && i < 16; i++) {
        printf("  %d: %s%s\n", d[i].index, d[i].name[0] ? d[i].name : "(no context)",
               d[i].software ? " [software]" : "");
        /* ES version strings start with "OpenGL ES" already; desktop ones with the number. */
        int named = d[i].api[0] && !strncmp(d[i].version, d[i].api, strlen(d[i].api));
        printf("     driver %s; %s%s%s\n", d[i].driver[0] ? d[i].driver : "?",
               !d[i].api[0] ? "not usable: " : named ? "" : d[i].api, d[i].api[0] && !named ? " " : "",
               d[i].api[0] ? d[i].version : d[i].problem);
        printf("     DRM node %s\n", d[i].drm_node[0] ? d[i].drm_node : "not reported");
    }
    if (n > 16)
        printf("  ... and %d more\n", n - 16);
    return 0;
}

/* `tensorgl warmup`: builds the kernels of the default device into the caches (tgl_warmup). */
int tgl_cmd_warmup(int argc, char **argv)
{
    if (argc > 1)
        return tgl_cli_bad_option("warmup", argv[1],
                                  "tensorgl warmup (no options; TGL_CACHE_DIR, TGL_DEVICE and TGL_API choose as for "
                                  "any program)");
    tgl_backend *b;
    if (tgl_open(NULL, &b)) {
        fprintf(stderr, "tensorgl warmup: no usable device: %s\n", tgl_last_error(NULL));
        return 1;
    }
    struct tgl_device_info i;
    tgl_device_info(b, &i);
    /* The call itself says nothing until it is done: up to a minute with empty caches. */
    printf("tensorgl warmup: compiling every op family's kernels on %s into the caches (up to a minute "
           "with empty caches; later runs of any program skip it)...\n", i.renderer);
    fflush(stdout);
    double t0 = tgl_bench_now();
    unsigned calls = 0;
    tgl_status st = tgl_warmup(b, &calls);
    double ms = 1e3 * (tgl_bench_now() - t0);
    if (st)
        fprintf(stderr, "tensorgl warmup: %s: %s\n", tgl_status_string(st), tgl_last_error(b));
    else
        printf("warmed %u op calls on %s (%s %s) in %.0f ms\n", calls, i.renderer, i.api, i.version, ms);
    tgl_close(b);
    return st ? 1 : 0;
}

/* `tensorgl tune [--size N]`: tgl_tune on the default device, its report on stdout. */
int tgl_cmd_tune(int argc, char **argv)
{
    size_t size = 0;
    if (argc == 3 && !strcmp(argv[1], "--size")) {
        char *end;
        unsigned long v = strtoul(argv[2], &end, 10);
        if (*end || end == argv[2] || v < 64 || v > 8192)
            return tgl_cli_bad_value("tune", "--size", argv[2], "takes a whole number from 64 to 8192");
        size = v;
    } else if (argc == 2 && !strcmp(argv[1], "--size")) {
        return tgl_cli_missing_value("tune", "--size");
    } else if (argc != 1) {
        return tgl_cli_bad_option("tune", argv[strcmp(argv[1], "--size") ? 1 : 3],
                                  "tensorgl tune [--size N] (saves under TGL_CACHE_DIR for later programs)");
    }
    tgl_backend *b;
    if (tgl_open(NULL, &b)) {
        fprintf(stderr, "tensorgl tune: no usable device: %s\n", tgl_last_error(NULL));
        return 1;
    }
    struct tgl_device_info i;
    tgl_device_info(b, &i);
    printf("tuning GEMM shapes on %s (%s %s)\n", i.renderer, i.api, i.version);
    tgl_status st = tgl_tune(b, size, stdout);
    if (st)
        fprintf(stderr, "tensorgl tune: %s: %s\n", tgl_status_string(st), tgl_last_error(b));
    tgl_close(b);
    return st ? 1 : 0;
}
