// Our matrix-product kernel (gemm_kernels.cpp): C = A B for row-major matrices with leading
// dimensions, used where the second operand is computed at run time.
#pragma once

#include <cstddef>

namespace jetagent {
namespace xnnplan {

// C[m x n] = A[m x k] B[k x n]; ld*: elements between consecutive rows.
struct GemmShape {
    size_t m = 0, k = 0, n = 0;
    size_t lda = 0, ldb = 0, ldc = 0;
};

// The rows one call of the kernel computes together (its register tile's height).
constexpr size_t kGemmTileRows = 4;

// Rows [first, first + count) of C (clipped to m), overwritten.
void gemmRows(
    const GemmShape& s, const float* a, const float* b, float* c, size_t first, size_t count);

// Which kernel runs here: "avx2+fma", "neon" or "plain".
const char* gemmKernelName();

} // namespace xnnplan
} // namespace jetagent
