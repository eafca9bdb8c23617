/* The CPU reference backend: host memory and plain loops, synchronous. It is the oracle the
 * GL backend is tested against, so it stays obviously right rather than fast. */
#define _DEFAULT_SOURCE /* sysconf(_SC_PHYS_PAGES, _SC_AVPHYS_PAGES) */
#include "../core/internal.h"
#include "cpu_math.h"
#include "cpu_ops.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CPU_ALIGN 64

/* With overcommit, malloc accepts sizes the machine cannot back and the process dies at first
 * touch instead; an allocation larger than physical memory is refused up front. */
static uint64_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

static void cpu_destroy(tgl_backend *b)
{
    (void)b;
}

static void cpu_device_info(tgl_backend *b, struct tgl_device_info *info)
{
    (void)b;
    tgl__strlcpy(info->api, "C", sizeof info->api);
    snprintf(info->version, sizeof info->version, "tensorgl %d.%d.%d reference", TGL_VERSION_MAJOR,
             TGL_VERSION_MINOR, TGL_VERSION_PATCH);
    tgl__strlcpy(info->vendor, "tensorgl", sizeof info->vendor);
    tgl__strlcpy(info->renderer, "host CPU (single-threaded reference loops)", sizeof info->renderer);
    tgl__strlcpy(info->egl_path, "none", sizeof info->egl_path);
    info->device_memory = physical_memory();
}

static void cpu_memory_info(tgl_backend *b, struct tgl_memory_info *info)
{
    long avail = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    info->reserved = b->mem_in_use; /* malloc'd per allocation; nothing pooled */
    info->device_total = physical_memory();
    info->device_available = avail > 0 && page > 0 ? (uint64_t)avail * (uint64_t)page : 0;
}

static tgl_status cpu_buffer_create(tgl_backend *b, size_t bytes, void **out)
{
    uint64_t ram = physical_memory();
    if (ram && bytes > ram)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_alloc: %zu bytes exceed the machine's %llu MiB",
                         bytes, (unsigned long long)(ram >> 20));
    size_t rounded = (bytes + CPU_ALIGN - 1) / CPU_ALIGN * CPU_ALIGN;
    *out = aligned_alloc(CPU_ALIGN, rounded);
    if (!*out)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_alloc: no host memory for %zu bytes", bytes);
    return TGL_OK;
}

static void cpu_buffer_destroy(tgl_backend *b, void *buf)
{
    (void)b;
    free(buf);
}

static tgl_status cpu_upload(tgl_backend *b, tgl__view dst, const void *src, size_t bytes)
{
    (void)b;
    memcpy(tgl_cpu_at(dst), src, bytes);
    return TGL_OK;
}

static tgl_status cpu_download(tgl_backend *b, void *dst, tgl__view src, size_t bytes)
{
    (void)b;
    memcpy(dst, tgl_cpu_at(src), bytes);
    return TGL_OK;
}

static tgl_status cpu_copy(tgl_backend *b, tgl__view dst, tgl__view src, size_t bytes)
{
    (void)b;
    memcpy(tgl_cpu_at(dst), tgl_cpu_at(src), bytes);
    return TGL_OK;
}

static tgl_status cpu_synchronize(tgl_backend *b)
{
    (void)b;
    return TGL_OK;
}

static tgl_status cpu_unary(tgl_backend *b, tgl_unary_op op, tgl__view in, tgl__view out, size_t n)
{
    (void)b;
    const float *x = tgl_cpu_at(in);
    float *y = tgl_cpu_at(out);
    for (size_t i = 0; i < n; i++)
        y[i] = tgl_cpu_unary(op, x[i]);
    return TGL_OK;
}

static tgl_status cpu_binary(tgl_backend *b, tgl_binary_op op, tgl__view a, tgl__view bb,
                             tgl__view out, size_t n)
{
    (void)b;
    const float *x = tgl_cpu_at(a), *y = tgl_cpu_at(bb);
    float *z = tgl_cpu_at(out);
    for (size_t i = 0; i < n; i++)
        z[i] = tgl_cpu_binary(op, x[i], y[i]);
    return TGL_OK;
}

static const tgl__vtable cpu_vtable = {
    .name = "cpu",
    .destroy = cpu_destroy,
    .device_info = cpu_device_info,
    .memory_info = cpu_memory_info,
    .buffer_create = cpu_buffer_create,
    .buffer_destroy = cpu_buffer_destroy,
    .upload = cpu_upload,
    .download = cpu_download,
    .copy = cpu_copy,
    .synchronize = cpu_synchronize,
    .unary = cpu_unary,
    .binary = cpu_binary,
    .reduce = tgl_cpu_reduce,
    .arg_reduce = tgl_cpu_arg_reduce,
    .rows = tgl_cpu_rows,
    .fill = tgl_cpu_fill,
    .scale_add = tgl_cpu_scale_add,
    .cast = tgl_cpu_cast,
    .rope = tgl_cpu_rope,
    .rope_t = tgl_cpu_rope_t,
    .gather_rows_t = tgl_cpu_gather_rows_t,
    .gather_rows = tgl_cpu_gather_rows,
    .strided = tgl_cpu_strided,
    .map = tgl_cpu_map,
    .gemm = tgl_cpu_gemm,
    .matvec = tgl_cpu_matvec,
    .attention = tgl_cpu_attention,
    .conv2d = tgl_cpu_conv2d,
    .conv_transpose2d = tgl_cpu_conv_transpose2d,
    .pool2d = tgl_cpu_pool2d,
    .tensor_ewise = tgl_cpu_tensor_ewise,
    .gather = tgl_cpu_gather,
    .reduce_t = tgl_cpu_reduce_t,
    .compact = tgl_cpu_compact,
    .scatter = tgl_cpu_scatter,
    .sort = tgl_cpu_sort,
    .sort_temp_bytes = tgl_cpu_sort_temp_bytes,
    .matvec_t = tgl_cpu_matvec_t,
    .quantize = tgl_cpu_quantize,
    .interpolate = tgl_cpu_interpolate,
    .adaptive_pool2d = tgl_cpu_adaptive_pool2d,
};

tgl_status tgl_cpu_open(tgl_backend *b)
{
    b->vt = &cpu_vtable;
    b->impl = NULL;
    return TGL_OK;
}
