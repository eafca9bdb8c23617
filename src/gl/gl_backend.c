/* The GL backend: opening (context, strings, limits), its vtable, and device info. */
#include "gl_internal.h"

#include <stdlib.h>
#include <string.h>

static void copy_gl_string(char *dst, size_t size, GLenum name)
{
    const GLubyte *s = glGetString(name);
    tgl__strlcpy(dst, s ? (const char *)s : "", size);
}

static tgl_status gl_activate(tgl_backend *b)
{
    return tgl_egl_make_current(b, &tgl_gl_of(b)->egl);
}

static tgl_status gl_detach(tgl_backend *b)
{
    return tgl_egl_release(b, &tgl_gl_of(b)->egl);
}

static void gl_destroy(tgl_backend *b)
{
    tgl_gl *gl = tgl_gl_of(b);
    if (!gl)
        return;
    tgl_gl_release_scratch(b); /* the working buffers that hold nothing between calls */
    if (gl->rope_table)
        tgl_gl_buffer_destroy(b, gl->rope_table);
    if (gl->rope_t_table)
        tgl_gl_buffer_destroy(b, gl->rope_t_table);
    free(gl->rope_t_host);
    if (gl->status)
        tgl_gl_buffer_destroy(b, gl->status);
    tgl_gl_variant_list_free(&gl->variants);
    int current = tgl_egl_make_current(b, &gl->egl) == TGL_OK;
    tgl_gl_pool_fini(b, current);
    if (current) {
        tgl_gl_programs_free(&gl->programs);
        for (int i = 0; i < TGL_GL_TEXTURE_SLOTS; i++)
            if (gl->textures[i])
                glDeleteTextures(1, &gl->textures[i]);
        if (gl->timer_query)
            glDeleteQueries(1, &gl->timer_query);
        for (size_t i = 0; i < sizeof gl->staging / sizeof gl->staging[0]; i++)
            if (gl->staging[i])
                glDeleteBuffers(1, &gl->staging[i]);
        if (gl->readback_block.name)
            glDeleteBuffers(1, &gl->readback_block.name);
    }
    free(gl->spirv.active);
    tgl_egl_destroy(&gl->egl);
    free(gl);
    b->impl = NULL;
}

static void gl_print_profile(tgl_backend *b, FILE *out)
{
    tgl_gl_profile_print(&tgl_gl_of(b)->limits, out);
}

static void gl_device_info(tgl_backend *b, struct tgl_device_info *info)
{
    tgl_gl *gl = tgl_gl_of(b);
    const tgl_gl_limits *l = &gl->limits;
    tgl__strlcpy(info->api, gl->egl.es ? "OpenGL ES" : "OpenGL", sizeof info->api);
    tgl__strlcpy(info->version, gl->gl_version, sizeof info->version);
    tgl__strlcpy(info->glsl_version, gl->glsl_version, sizeof info->glsl_version);
    tgl__strlcpy(info->vendor, gl->vendor, sizeof info->vendor);
    tgl__strlcpy(info->renderer, gl->renderer, sizeof info->renderer);
    tgl__strlcpy(info->egl_path, gl->egl.path, sizeof info->egl_path);
    tgl__strlcpy(info->egl_version, gl->egl.version, sizeof info->egl_version);
    info->robust = gl->egl.robust && gl->has_reset_query;
    info->debug = gl->egl.debug;
    info->max_ssbo_block_size = l->max_ssbo_block;
    info->ssbo_offset_alignment = l->ssbo_align;
    memcpy(info->max_workgroup_size, l->wg_size, sizeof l->wg_size);
    memcpy(info->max_workgroup_count, l->wg_count, sizeof l->wg_count);
    info->max_workgroup_invocations = l->wg_invocations;
    info->max_shared_memory = l->shared_memory;
    info->workgroup_size = l->workgroup_size;
    info->device_memory = l->memory_bytes;
    info->reduce_workgroup_size = l->reduce_workgroup_size;
    info->max_storage_blocks = l->storage_blocks;
    tgl__strlcpy(info->shaders, gl->spirv.enabled ? "SPIR-V" : "GLSL", sizeof info->shaders);
}

static int reset_query_available(const tgl_egl *e)
{
    if (!e->robust)
        return 0;
    int v = epoxy_gl_version();
    return e->es ? v >= 32 || epoxy_has_gl_extension("GL_KHR_robustness")
                 : v >= 45 || epoxy_has_gl_extension("GL_KHR_robustness");
}

static void gl_memory_info(tgl_backend *b, struct tgl_memory_info *info)
{
    tgl_gl *gl = tgl_gl_of(b);
    tgl_gl_pool_stats(b, &info->reserved, &info->pooled);
    info->device_total = gl->limits.memory_bytes;
    info->device_available = tgl_gl_device_available_bytes();
}

static const tgl__vtable gl_vtable = {
    .name = "gl",
    .process_bound = 1,
    .activate = gl_activate,
    .detach = gl_detach,
    .destroy = gl_destroy,
    .device_info = gl_device_info,
    .memory_info = gl_memory_info,
    .buffer_create = tgl_gl_buffer_create,
    .buffer_destroy = tgl_gl_buffer_destroy,
    .release_scratch = tgl_gl_release_scratch,
    .upload = tgl_gl_upload,
    .download = tgl_gl_download,
    .copy = tgl_gl_copy,
    .synchronize = tgl_gl_finish,
    .timer_begin = tgl_gl_timer_begin,
    .timer_end = tgl_gl_timer_end,
    .unary = tgl_gl_unary,
    .binary = tgl_gl_binary,
    .reduce = tgl_gl_reduce,
    .arg_reduce = tgl_gl_arg_reduce,
    .rows = tgl_gl_rows,
    .fill = tgl_gl_fill,
    .scale_add = tgl_gl_scale_add,
    .cast = tgl_gl_cast,
    .rope = tgl_gl_rope,
    .rope_t = tgl_gl_rope_t,
    .gather_rows_t = tgl_gl_gather_rows_t,
    .gather_rows = tgl_gl_gather_rows,
    .strided = tgl_gl_strided,
    .tensor_ewise = tgl_gl_tensor_ewise,
    .gather = tgl_gl_gather,
    .reduce_t = tgl_gl_reduce_t,
    .compact = tgl_gl_compact,
    .scatter = tgl_gl_scatter,
    .sort = tgl_gl_sort,
    .sort_temp_bytes = tgl_gl_sort_temp_bytes,
    .interpolate = tgl_gl_interpolate,
    .adaptive_pool2d = tgl_gl_adaptive_pool2d,
    .map = tgl_gl_map,
    .gemm = tgl_gl_gemm,
    .matvec = tgl_gl_matvec,
    .attention = tgl_gl_attention,
    .conv2d = tgl_gl_conv2d,
    .pool2d = tgl_gl_pool2d,
    .conv_transpose2d = tgl_gl_conv_transpose2d,
    .matvec_t = tgl_gl_matvec_t,
    .quantize = tgl_gl_quantize,
    .tune = tgl_gl_tune,
    .print_profile = gl_print_profile,
};

tgl_status tgl_gl_open(tgl_backend *b)
{
    tgl_gl *gl = calloc(1, sizeof *gl);
    if (!gl)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_open: no host memory for the GL backend");
    b->impl = gl;
    gl->test.conv2d_config = -1;
    gl->test.attention_path = -1;
    tgl_status st = tgl_egl_create(b, &gl->egl);
    if (st == TGL_OK) {
        copy_gl_string(gl->gl_version, sizeof gl->gl_version, GL_VERSION);
        copy_gl_string(gl->glsl_version, sizeof gl->glsl_version, GL_SHADING_LANGUAGE_VERSION);
        copy_gl_string(gl->vendor, sizeof gl->vendor, GL_VENDOR);
        copy_gl_string(gl->renderer, sizeof gl->renderer, GL_RENDERER);
        gl->has_reset_query = reset_query_available(&gl->egl);
        st = tgl_gl_limits_query(b, &gl->limits);
        if (!st) {
            tgl_gl_disk_cache_init(b, &gl->disk);
            st = tgl_gl_spirv_init(b, &gl->spirv);
        }
        if (!st)
            tgl_gl_pool_init(b);
    }
    if (st) {
        tgl_egl_destroy(&gl->egl);
        free(gl);
        b->impl = NULL;
        return st;
    }
    /* Last: the checks run kernels, so they need everything above. */
    if ((st = tgl_gl_driver_check(b))) {
        gl_destroy(b);
        return st;
    }
    b->vt = &gl_vtable;
    return TGL_OK;
}
