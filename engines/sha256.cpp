// SHA-256 (FIPS 180-4), for identifying models and keying cached engine artefacts.
#include "jetagent/engines/sha256.h"

#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace jetagent {

namespace {

constexpr uint32_t kRound[64] = {0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b,
    0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74,
    0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3,
    0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354,
    0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3,
    0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa,
    0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t rotr(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

// FIPS 180-4 section 6.2.2 for one 64-byte block.
void compressPortable(uint32_t* state, const uint8_t* block)
{
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
        w[i] = static_cast<uint32_t>(block[4 * i]) << 24 |
            static_cast<uint32_t>(block[4 * i + 1]) << 16 |
            static_cast<uint32_t>(block[4 * i + 2]) << 8 | static_cast<uint32_t>(block[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; ++i) {
        uint32_t t1 =
            h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
}

using CompressFn = void (*)(uint32_t* state, const uint8_t* blocks, size_t count);

void compressPortableBlocks(uint32_t* state, const uint8_t* blocks, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        compressPortable(state, blocks + 64 * i);
}

#if defined(__x86_64__)

// The SHA extensions keep the state as two vectors, ABEF and CDGH, and run two rounds per
// instruction; the message schedule is computed four words at a time.
__attribute__((target("sha,sse4.1,ssse3"))) void compressShaNi(
    uint32_t* state, const uint8_t* blocks, size_t count)
{
    __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
    __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));
    const __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
    const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
    // Message words are big-endian.
    const __m128i byteSwap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);

    for (size_t b = 0; b < count; ++b) {
        const uint8_t* p = blocks + 64 * b;
        const __m128i abefSaved = abef;
        const __m128i cdghSaved = cdgh;
        __m128i w[16];
        for (int g = 0; g < 16; ++g) {
            if (g < 4) {
                w[g] = _mm_shuffle_epi8(
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * g)), byteSwap);
            } else {
                // W[t-16] + s0(W[t-15]), then + W[t-7], then + s1(W[t-2]).
                __m128i t = _mm_sha256msg1_epu32(w[g - 4], w[g - 3]);
                t = _mm_add_epi32(t, _mm_alignr_epi8(w[g - 1], w[g - 2], 4));
                w[g] = _mm_sha256msg2_epu32(t, w[g - 1]);
            }
            __m128i k = _mm_add_epi32(
                w[g], _mm_loadu_si128(reinterpret_cast<const __m128i*>(kRound + 4 * g)));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k);
            k = _mm_shuffle_epi32(k, 0x0E);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, k);
        }
        abef = _mm_add_epi32(abef, abefSaved);
        cdgh = _mm_add_epi32(cdgh, cdghSaved);
    }

    const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    dcba = _mm_blend_epi16(feba, dchg, 0xF0);
    hgfe = _mm_alignr_epi8(dchg, feba, 8);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(state), dcba);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), hgfe);
}

bool hasShaNi()
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3))
        return false;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return false;
    return (b & bit_SHA) != 0;
}

#elif defined(__aarch64__)

__attribute__((target("+crypto"))) void compressArmv8(
    uint32_t* state, const uint8_t* blocks, size_t count)
{
    uint32x4_t abcd = vld1q_u32(state);
    uint32x4_t efgh = vld1q_u32(state + 4);
    for (size_t b = 0; b < count; ++b) {
        const uint8_t* p = blocks + 64 * b;
        const uint32x4_t abcdSaved = abcd;
        const uint32x4_t efghSaved = efgh;
        uint32x4_t m[4];
        for (int i = 0; i < 4; ++i)
            m[i] = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(p + 16 * i)));
        for (int g = 0; g < 16; ++g) {
            uint32x4_t& w = m[g % 4];
            if (g >= 4)
                w = vsha256su1q_u32(
                    vsha256su0q_u32(w, m[(g + 1) % 4]), m[(g + 2) % 4], m[(g + 3) % 4]);
            const uint32x4_t k = vaddq_u32(w, vld1q_u32(kRound + 4 * g));
            const uint32x4_t before = abcd;
            abcd = vsha256hq_u32(abcd, efgh, k);
            efgh = vsha256h2q_u32(efgh, before, k);
        }
        abcd = vaddq_u32(abcd, abcdSaved);
        efgh = vaddq_u32(efgh, efghSaved);
    }
    vst1q_u32(state, abcd);
    vst1q_u32(state + 4, efgh);
}

#endif

struct Implementation {
    CompressFn fn;
    const char* name;
};

Implementation detect()
{
#if defined(__x86_64__)
    if (hasShaNi())
        return {compressShaNi, "x86 SHA extensions"};
#elif defined(__aarch64__)
    if (getauxval(AT_HWCAP) & HWCAP_SHA2)
        return {compressArmv8, "ARMv8 SHA2"};
#endif
    return {compressPortableBlocks, "portable"};
}

Implementation& active()
{
    static Implementation impl = detect();
    return impl;
}

} // namespace

const char* Sha256::implementation()
{
    return active().name;
}

void Sha256::forcePortable(bool portable)
{
    active() = portable ? Implementation {compressPortableBlocks, "portable"} : detect();
}

void Sha256::compress(const uint8_t* blocks, size_t count)
{
    active().fn(state_.data(), blocks, count);
}

Sha256::Sha256()
    : state_ {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
          0x5be0cd19}
{
}

void Sha256::update(const void* data, size_t size)
{
    const auto* p = static_cast<const uint8_t*>(data);
    totalBytes_ += size;
    if (buffered_ > 0) {
        size_t take = std::min(size, buffer_.size() - buffered_);
        std::memcpy(buffer_.data() + buffered_, p, take);
        buffered_ += take;
        p += take;
        size -= take;
        if (buffered_ < buffer_.size())
            return;
        compress(buffer_.data(), 1);
        buffered_ = 0;
    }
    if (size >= 64) {
        const size_t blocks = size / 64;
        compress(p, blocks);
        p += 64 * blocks;
        size -= 64 * blocks;
    }
    if (size > 0) {
        std::memcpy(buffer_.data(), p, size);
        buffered_ = size;
    }
}

std::array<uint8_t, 32> Sha256::finish()
{
    const uint64_t bits = totalBytes_ * 8;
    const uint8_t one = 0x80;
    update(&one, 1);
    const uint8_t zero = 0;
    while (buffered_ != 56)
        update(&zero, 1);
    uint8_t length[8];
    for (int i = 0; i < 8; ++i)
        length[i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
    update(length, 8);

    std::array<uint8_t, 32> digest {};
    for (size_t i = 0; i < 8; ++i)
        for (size_t j = 0; j < 4; ++j)
            digest[4 * i + j] = static_cast<uint8_t>(state_[i] >> (24 - 8 * j));
    return digest;
}

std::string Sha256::hex(const void* data, size_t size)
{
    Sha256 h;
    h.update(data, size);
    return h.finishHex();
}

std::string Sha256::finishHex()
{
    const auto digest = finish();
    static const char* const kDigits = "0123456789abcdef";
    std::string out;
    out.reserve(64);
    for (uint8_t byte : digest) {
        out.push_back(kDigits[byte >> 4]);
        out.push_back(kDigits[byte & 15]);
    }
    return out;
}

} // namespace jetagent
