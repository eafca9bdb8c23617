/* `tensorgl doctor [--size small|medium]`: a self-test to paste into a bug report. Runs every op
 * of the standard benchmark set (bench_ops.c) once on the device and on the CPU backend from the
 * same inputs, compares every buffer, and prints the device, its profile and what passed and
 * failed. Exit 0 when every op agreed, 1 when one did not (or no device could be opened),
 * 2 for an argument error. */
#include "bench_clock.h"
#include "bench_suite.h"
#include "cli_args.h"
#include "commands.h"
#include "core/internal.h"

#include <stdio.h>
#include <string.h>

/* Bit-identical or within this NMSE: on llvmpipe the worst op is gemm_f16 at 8e-11 (binary16
 * operands, f32 sums against the CPU backend's double), most are bit-identical; a wrong kernel
 * is off by orders of magnitude more. */
#define DOCTOR_TOLERANCE 1e-6

int tgl_cmd_doctor(int argc, char **argv)
{
    static const char usage[] = "tensorgl doctor [--size small|medium]";
    int size = BENCH_SMALL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: %s\n", usage);
            return 0;
        }
        if (strcmp(argv[i], "--size"))
            return tgl_cli_bad_option("doctor", argv[i], usage);
        if (i + 1 >= argc)
            return tgl_cli_missing_value("doctor", "--size");
        const char *v = argv[++i];
        static const char *const sizes[] = {"small", "medium"};
        if (!strcmp(v, sizes[0]))
            size = BENCH_SMALL;
        else if (!strcmp(v, sizes[1]))
            size = BENCH_MEDIUM;
        else
            return tgl_cli_bad_choice("doctor", "size", v, strlen(v), sizes, 2);
    }
    tgl_backend *b = NULL, *cpu = NULL;
    tgl_options o = {.kind = TGL_BACKEND_GL};
    tgl_status st = tgl_open(&o, &b);
    if (st) {
        printf("tensorgl doctor: no GL device (%s): %s\n", tgl_status_string(st), tgl_last_error(NULL));
        return 1;
    }
    o.kind = TGL_BACKEND_CPU;
    if ((st = tgl_open(&o, &cpu))) {
        printf("tensorgl doctor: the CPU backend did not open (%s): %s\n", tgl_status_string(st), tgl_last_error(NULL));
        tgl_close(b);
        return 1;
    }
    struct tgl_device_info i;
    tgl_device_info(b, &i);
    printf("tensorgl %d.%d.%d doctor\n", TGL_VERSION_MAJOR, TGL_VERSION_MINOR, TGL_VERSION_PATCH);
    printf("renderer:  %s\nvendor:    %s\nversion:   %s (%s; kernels from %s)\negl:       %s, %s\n", i.renderer,
           i.vendor, i.version, i.api, i.shaders, i.egl_version, i.egl_path);
    printf("limits:    SSBO block %llu bytes, %u storage blocks per kernel, %llu bytes shared memory, "
           "%u invocations per workgroup; robust: %s\n",
           (unsigned long long)i.max_ssbo_block_size, i.max_storage_blocks, (unsigned long long)i.max_shared_memory,
           i.max_workgroup_invocations, i.robust ? "yes" : "no");
    tgl__print_device_profile(b, stdout);
    printf("\nevery op of the standard set at its %s size, on the device and on the CPU backend from the same "
           "inputs (bit-identical or NMSE at most %.0e; first runs include compiling the kernels):\n",
           tgl_bench_size_names[size], DOCTOR_TOLERANCE);
    fflush(stdout);
    double t0 = tgl_bench_now();
    int failed = tgl_bench_check(b, cpu, size, DOCTOR_TOLERANCE, stdout);
    printf("\ndoctor: %d of %zu ops agree with the CPU backend on %s (%.1f s)%s\n",
           (int)tgl_bench_op_count - failed, tgl_bench_op_count, i.renderer, tgl_bench_now() - t0,
           failed ? "; the FAILED lines above are worth a bug report (tensorgl's or the driver's)" : "");
    tgl_close(cpu);
    tgl_close(b);
    return failed ? 1 : 0;
}
