// CRC-32 (the IEEE polynomial, reflected, as zlib computes it) folded 64 and 16 bytes at a time with carry-less
// multiplication (PCLMULQDQ), after Gopal et al., "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ
// Instruction" (Intel, 2009), the method zlib's and the Linux kernel's x86 code use. Swift cannot emit the
// instruction, so this one loop is C. Only x86-64, and only where the CPU has PCLMUL and SSE4.1 (asked once):
// everywhere else it folds nothing and Swift's table code (StoragePolicyFileSystem's CRC32) does all the bytes.
#include "CPosix.h"
#include <stdint.h>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#define FOLDS __attribute__((target("pclmul,sse4.1")))

// The constants of the paper's appendix for the reflected polynomial 0xEDB88320: x^(512+32) and x^(512-32) mod P
// (folding 64 bytes), x^(128+32) and x^(128-32) mod P (16 bytes), x^64 mod P, then P and the Barrett constant.
static const uint64_t k1k2[2] __attribute__((aligned(16))) = { 0x0154442bd4, 0x01c6e41596 };
static const uint64_t k3k4[2] __attribute__((aligned(16))) = { 0x01751997d0, 0x00ccaa009e };
static const uint64_t k5k0[2] __attribute__((aligned(16))) = { 0x0163cd6124, 0x0000000000 };
static const uint64_t poly[2] __attribute__((aligned(16))) = { 0x01db710641, 0x01f7011641 };

// `len` is at least 64 and a multiple of 16; `crc` is the running register (not inverted at the ends).
FOLDS static uint32_t fold(const unsigned char *buf, size_t len, uint32_t crc) {
    __m128i x0, x1, x2, x3, x4, x5, x6, x7, x8, y5, y6, y7, y8;
    x1 = _mm_loadu_si128((const __m128i *)(buf + 0x00));
    x2 = _mm_loadu_si128((const __m128i *)(buf + 0x10));
    x3 = _mm_loadu_si128((const __m128i *)(buf + 0x20));
    x4 = _mm_loadu_si128((const __m128i *)(buf + 0x30));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    x0 = _mm_load_si128((const __m128i *)k1k2);
    buf += 64;
    len -= 64;
    // Four lanes of 16 bytes, each folded 64 bytes ahead.
    while (len >= 64) {
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x6 = _mm_clmulepi64_si128(x2, x0, 0x00);
        x7 = _mm_clmulepi64_si128(x3, x0, 0x00);
        x8 = _mm_clmulepi64_si128(x4, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x2 = _mm_clmulepi64_si128(x2, x0, 0x11);
        x3 = _mm_clmulepi64_si128(x3, x0, 0x11);
        x4 = _mm_clmulepi64_si128(x4, x0, 0x11);
        y5 = _mm_loadu_si128((const __m128i *)(buf + 0x00));
        y6 = _mm_loadu_si128((const __m128i *)(buf + 0x10));
        y7 = _mm_loadu_si128((const __m128i *)(buf + 0x20));
        y8 = _mm_loadu_si128((const __m128i *)(buf + 0x30));
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), y5);
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), y6);
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), y7);
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), y8);
        buf += 64;
        len -= 64;
    }
    // The four lanes into one.
    x0 = _mm_load_si128((const __m128i *)k3k4);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);
    // The rest 16 bytes at a time.
    while (len >= 16) {
        x2 = _mm_loadu_si128((const __m128i *)buf);
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
        buf += 16;
        len -= 16;
    }
    // 128 bits to 64, then Barrett's reduction to 32.
    x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
    x3 = _mm_setr_epi32(~0, 0, ~0, 0);
    x1 = _mm_srli_si128(x1, 8);
    x1 = _mm_xor_si128(x1, x2);
    x0 = _mm_loadl_epi64((const __m128i *)k5k0);
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_and_si128(x1, x3);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    x0 = _mm_load_si128((const __m128i *)poly);
    x2 = _mm_and_si128(x1, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
    x2 = _mm_and_si128(x2, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}

static int has_folds(void) {
    // 0: not asked yet, 1: yes, 2: no. Asking twice on a race is harmless.
    static int known = 0;
    int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (k == 0) {
        __builtin_cpu_init();
        k = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1") ? 1 : 2;
        __atomic_store_n(&known, k, __ATOMIC_RELAXED);
    }
    return k == 1;
}

size_t cposix_crc32_fold(uint32_t *crc, const void *bytes, size_t count) {
    if (count < 64 || !has_folds()) return 0;
    size_t folded = count & ~(size_t)15;
    *crc = fold((const unsigned char *)bytes, folded, *crc);
    return folded;
}
#else
size_t cposix_crc32_fold(uint32_t *crc, const void *bytes, size_t count) {
    (void)crc; (void)bytes; (void)count;
    return 0;
}
#endif
