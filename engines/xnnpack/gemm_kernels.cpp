// Our matrix-product kernel for the products whose second operand is computed at run time
// (attention's Q.K^T and P.V), which XNNPACK's 2022 snapshot cannot run: its fully connected
// operator packs a constant kernel when it is created. Register tiles of 4 rows by 16 columns:
// AVX2 with FMA on x86 (chosen at run time: the project builds for baseline x86-64), NEON on
// aarch64, plain loops elsewhere.
#include "gemm_kernels.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace jetagent {
namespace xnnplan {

namespace {

// Rows i of C (up to 4) over all n columns, plain loops; the inner loop over columns is what the
// compiler vectorizes. C is overwritten.
void rowsPlain(const GemmShape& s, const float* a, const float* b, float* c, size_t rows)
{
    for (size_t i = 0; i < rows; ++i)
        std::memset(c + i * s.ldc, 0, s.n * sizeof(float));
    for (size_t p = 0; p < s.k; ++p) {
        const float* bp = b + p * s.ldb;
        for (size_t i = 0; i < rows; ++i) {
            const float x = a[i * s.lda + p];
            float* ci = c + i * s.ldc;
            for (size_t j = 0; j < s.n; ++j)
                ci[j] += x * bp[j];
        }
    }
}

#if defined(__x86_64__)

template <size_t R>
__attribute__((target("avx2,fma"))) void rowsAvx2(
    const GemmShape& s, const float* a, const float* b, float* c)
{
    size_t j = 0;
    for (; j + 16 <= s.n; j += 16) {
        __m256 acc[R][2];
        for (size_t i = 0; i < R; ++i)
            acc[i][0] = acc[i][1] = _mm256_setzero_ps();
        for (size_t p = 0; p < s.k; ++p) {
            const float* bp = b + p * s.ldb + j;
            const __m256 b0 = _mm256_loadu_ps(bp);
            const __m256 b1 = _mm256_loadu_ps(bp + 8);
            for (size_t i = 0; i < R; ++i) {
                const __m256 x = _mm256_broadcast_ss(a + i * s.lda + p);
                acc[i][0] = _mm256_fmadd_ps(x, b0, acc[i][0]);
                acc[i][1] = _mm256_fmadd_ps(x, b1, acc[i][1]);
            }
        }
        for (size_t i = 0; i < R; ++i) {
            _mm256_storeu_ps(c + i * s.ldc + j, acc[i][0]);
            _mm256_storeu_ps(c + i * s.ldc + j + 8, acc[i][1]);
        }
    }
    for (; j + 8 <= s.n; j += 8) {
        __m256 acc[R];
        for (size_t i = 0; i < R; ++i)
            acc[i] = _mm256_setzero_ps();
        for (size_t p = 0; p < s.k; ++p) {
            const __m256 b0 = _mm256_loadu_ps(b + p * s.ldb + j);
            for (size_t i = 0; i < R; ++i)
                acc[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + i * s.lda + p), b0, acc[i]);
        }
        for (size_t i = 0; i < R; ++i)
            _mm256_storeu_ps(c + i * s.ldc + j, acc[i]);
    }
    if (j < s.n) {
        const size_t rest = s.n - j;
        for (size_t i = 0; i < R; ++i) {
            float sum[8] = {};
            for (size_t p = 0; p < s.k; ++p) {
                const float x = a[i * s.lda + p];
                const float* bp = b + p * s.ldb + j;
                for (size_t q = 0; q < rest; ++q)
                    sum[q] += x * bp[q];
            }
            std::memcpy(c + i * s.ldc + j, sum, rest * sizeof(float));
        }
    }
}

bool haveAvx2()
{
    static const bool have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return have;
}

void rows(const GemmShape& s, const float* a, const float* b, float* c, size_t r)
{
    if (!haveAvx2())
        return rowsPlain(s, a, b, c, r);
    switch (r) {
    case 4: return rowsAvx2<4>(s, a, b, c);
    case 3: return rowsAvx2<3>(s, a, b, c);
    case 2: return rowsAvx2<2>(s, a, b, c);
    default: return rowsAvx2<1>(s, a, b, c);
    }
}

#elif defined(__aarch64__)

template <size_t R>
void rowsNeon(const GemmShape& s, const float* a, const float* b, float* c)
{
    size_t j = 0;
    for (; j + 16 <= s.n; j += 16) {
        float32x4_t acc[R][4];
        for (size_t i = 0; i < R; ++i)
            for (auto& v : acc[i])
                v = vdupq_n_f32(0.0f);
        for (size_t p = 0; p < s.k; ++p) {
            const float* bp = b + p * s.ldb + j;
            const float32x4_t b0 = vld1q_f32(bp), b1 = vld1q_f32(bp + 4), b2 = vld1q_f32(bp + 8),
                              b3 = vld1q_f32(bp + 12);
            for (size_t i = 0; i < R; ++i) {
                const float x = a[i * s.lda + p];
                acc[i][0] = vfmaq_n_f32(acc[i][0], b0, x);
                acc[i][1] = vfmaq_n_f32(acc[i][1], b1, x);
                acc[i][2] = vfmaq_n_f32(acc[i][2], b2, x);
                acc[i][3] = vfmaq_n_f32(acc[i][3], b3, x);
            }
        }
        for (size_t i = 0; i < R; ++i)
            for (size_t q = 0; q < 4; ++q)
                vst1q_f32(c + i * s.ldc + j + 4 * q, acc[i][q]);
    }
    if (j < s.n) {
        GemmShape rest = s;
        rest.n = s.n - j;
        rowsPlain(rest, a, b + j, c + j, R);
    }
}

void rows(const GemmShape& s, const float* a, const float* b, float* c, size_t r)
{
    switch (r) {
    case 4: return rowsNeon<4>(s, a, b, c);
    case 3: return rowsNeon<3>(s, a, b, c);
    case 2: return rowsNeon<2>(s, a, b, c);
    default: return rowsNeon<1>(s, a, b, c);
    }
}

#else

void rows(const GemmShape& s, const float* a, const float* b, float* c, size_t r)
{
    rowsPlain(s, a, b, c, r);
}

#endif

} // namespace

const char* gemmKernelName()
{
#if defined(__x86_64__)
    return haveAvx2() ? "avx2+fma" : "plain";
#elif defined(__aarch64__)
    return "neon";
#else
    return "plain";
#endif
}

void gemmRows(
    const GemmShape& s, const float* a, const float* b, float* c, size_t first, size_t count)
{
    const size_t end = std::min(s.m, first + count);
    for (size_t i = first; i < end; i += kGemmTileRows)
        rows(s, a + i * s.lda, b, c + i * s.ldc, std::min(kGemmTileRows, end - i));
}

} // namespace xnnplan
} // namespace jetagent
