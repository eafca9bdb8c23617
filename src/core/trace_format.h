/* The trace file format (docs/trace-format.md): constants and little-endian encoding into a
 * growable buffer. */
#ifndef TGL_CORE_TRACE_FORMAT_H
#define TGL_CORE_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define TGL__TRACE_MAGIC "TGLTRACE"
#define TGL__TRACE_VERSION 1u
#define TGL__TRACE_INFO_MAX 4096u        /* header text */
#define TGL__TRACE_CALL_MAX (1u << 20)   /* a call record's payload */
#define TGL__TRACE_EXPR_MAX 4097u        /* tgl_map's limit plus one, so "too long" replays as such */
#define TGL__TRACE_NONE UINT32_MAX       /* no data / no allocation */
#define TGL__TRACE_SUFFIX ".tgltrace"

enum { TGL__REC_DATA = 1, TGL__REC_CALL = 2 };
/* How a device pointer argument is stored. */
enum { TGL__PTR_NULL = 0, TGL__PTR_ALLOC = 1, TGL__PTR_RAW = 2 };

/* A growable byte buffer; on allocation failure `failed` is set and appends stop. */
typedef struct tgl__bytes {
    uint8_t *data;
    size_t len, cap;
    int failed;
} tgl__bytes;

void tgl__bytes_put(tgl__bytes *o, const void *src, size_t n);
void tgl__bytes_u8(tgl__bytes *o, uint8_t v);
void tgl__bytes_u32(tgl__bytes *o, uint32_t v);
void tgl__bytes_u64(tgl__bytes *o, uint64_t v);
void tgl__bytes_free(tgl__bytes *o);

static inline uint32_t tgl__le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t tgl__le64(const uint8_t *p)
{
    return (uint64_t)tgl__le32(p) | (uint64_t)tgl__le32(p + 4) << 32;
}


#endif
