// gzip (RFC 1952) through zlib, for the journal's rotated history files (Docs/journal.md, "History"): zlib is on
// every Debian and Apple system, and a gzip file is what an operator already reads (`zcat`, `zless`, `jq`).
// Whole buffers in, whole buffers out: a history file is written once and read whole.
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "CPosix.h"

int cposix_gzip(const void *input, size_t length, void **output, size_t *outputLength) {
    *output = NULL;
    *outputLength = 0;
    z_stream s;
    memset(&s, 0, sizeof s);
    // 15 + 16: a gzip wrapper (header and CRC-32 trailer) around a deflate stream with the largest window.
    if (deflateInit2(&s, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
    size_t capacity = deflateBound(&s, (uLong)length) + 64;
    unsigned char *out = malloc(capacity);
    if (!out) { deflateEnd(&s); return -1; }
    const unsigned char *in = input;
    size_t done = 0;
    int status = Z_OK;
    // zlib's counts are 32-bit: a larger buffer is fed in slices.
    while (status == Z_OK) {
        size_t slice = length - done > (1u << 30) ? (1u << 30) : length - done;
        s.next_in = (Bytef *)(in + done);
        s.avail_in = (uInt)slice;
        if (capacity - s.total_out == 0) break;
        size_t room = capacity - s.total_out > (1u << 30) ? (1u << 30) : capacity - s.total_out;
        s.next_out = out + s.total_out;
        s.avail_out = (uInt)room;
        int flush = done + slice == length ? Z_FINISH : Z_NO_FLUSH;
        status = deflate(&s, flush);
        done += slice - s.avail_in;
    }
    size_t produced = s.total_out;
    deflateEnd(&s);
    if (status != Z_STREAM_END) { free(out); return -1; }
    *output = out;
    *outputLength = produced;
    return 0;
}

int cposix_gunzip(const void *input, size_t length, size_t limit, void **output, size_t *outputLength) {
    *output = NULL;
    *outputLength = 0;
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, 15 + 16) != Z_OK) return -1;
    size_t capacity = length * 4 + 4096;
    if (capacity > limit) capacity = limit;
    unsigned char *out = malloc(capacity ? capacity : 1);
    if (!out) { inflateEnd(&s); return -1; }
    const unsigned char *in = input;
    size_t consumed = 0, produced = 0;
    int status = Z_OK;
    while (status != Z_STREAM_END) {
        if (produced == capacity) {
            if (capacity >= limit) { status = Z_BUF_ERROR; break; }
            size_t grown = capacity * 2 > limit ? limit : capacity * 2;
            unsigned char *bigger = realloc(out, grown);
            if (!bigger) { status = Z_MEM_ERROR; break; }
            out = bigger;
            capacity = grown;
        }
        size_t inSlice = length - consumed > (1u << 30) ? (1u << 30) : length - consumed;
        size_t outSlice = capacity - produced > (1u << 30) ? (1u << 30) : capacity - produced;
        s.next_in = (Bytef *)(in + consumed);
        s.avail_in = (uInt)inSlice;
        s.next_out = out + produced;
        s.avail_out = (uInt)outSlice;
        status = inflate(&s, Z_NO_FLUSH);
        consumed += inSlice - s.avail_in;
        produced += outSlice - s.avail_out;
        if (status == Z_STREAM_END) break;
        if (status != Z_OK && status != Z_BUF_ERROR) break;
        // No progress with input left and room left: a truncated or damaged stream.
        if (status == Z_BUF_ERROR && consumed == length) break;
    }
    inflateEnd(&s);
    if (status != Z_STREAM_END) { free(out); return -1; }
    *output = out;
    *outputLength = produced;
    return 0;
}
