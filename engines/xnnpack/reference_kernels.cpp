// Our reference kernels: plain loops for what XNNPACK's snapshot lacks, split over the shared
// thread pool by their outermost loop. Each follows the ONNX operator's definition directly.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "gemm_kernels.h"
#include "steps.h"

namespace jetagent {
namespace xnnplan {

namespace {

uint32_t poolFlags(bool last)
{
    return last ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0;
}

// A kernel as a function of one outer index, run over [0, range) on the pool.
template <typename Kernel>
class LoopExec final : public StepExec {
public:
    LoopExec(size_t range, uint32_t flags, Kernel kernel)
        : range_(range), flags_(flags), kernel_(std::move(kernel))
    {
    }
    Status run(pthreadpool_t pool) override
    {
        pthreadpool_parallelize_1d(
            pool, [](void* self, size_t i) { static_cast<LoopExec*>(self)->kernel_(i); }, this,
            range_, flags_);
        return Status();
    }

private:
    size_t range_;
    uint32_t flags_;
    Kernel kernel_;
};

template <typename Kernel>
std::unique_ptr<StepExec> loop(size_t range, bool last, Kernel kernel)
{
    return std::make_unique<LoopExec<Kernel>>(range, poolFlags(last), std::move(kernel));
}

// The elements an element-wise task takes: enough to be worth a dispatch.
constexpr size_t kElementChunk = 4096;

// A loop over [0, count) in blocks of `block` items, a task each: kernel(begin, end).
template <typename Kernel>
std::unique_ptr<StepExec> loopBlocks(size_t count, size_t block, bool last, Kernel kernel)
{
    return loop((count + block - 1) / block, last, [=](size_t task) {
        const size_t begin = task * block;
        kernel(begin, std::min(count, begin + block));
    });
}

// Hot loops compiled twice on x86-64, for the baseline (SSE2) and for AVX2 with FMA, the one the
// CPU runs picked when the library loads (GCC's and clang's function multi-versioning).
#if defined(__x86_64__) && defined(__linux__)
#define JETAGENT_VECTOR_CLONES __attribute__((target_clones("arch=haswell", "default")))
#else
#define JETAGENT_VECTOR_CLONES
#endif

// erf(x) as x P(x^2) / Q(x^2) on [-4, 4], +-1 beyond: a rational fit of degree 5 over 5 (fitted
// here by iterated weighted least squares on 8,000 points of [0, 4]), within 3.5e-7 of erf in
// float arithmetic over [-4.5, 4.5]. Branch-free, so that loops over it vectorize: always inlined
// and clamped by comparisons, not std::min/max, since GCC inlines nothing compiled for another
// -march into the AVX2 clone of a loop (it called both per element, and GELU stayed scalar).
__attribute__((always_inline)) inline float erfRational(float x)
{
    float c = x < -4.0f ? -4.0f : x;
    c = c > 4.0f ? 4.0f : c;
    const float t = c * c;
    const float p =
        ((((2.07900792e-06f * t + 2.81706449e-04f) * t + 3.60921588e-03f) * t + 5.22500093e-02f) *
                t +
            1.86693637e-01f) *
            t +
        1.12837916f;
    const float q =
        ((((3.82354243e-05f * t + 1.12567068e-03f) * t + 1.46494387e-02f) * t + 1.12568627e-01f) *
                t +
            4.98786072e-01f) *
            t +
        1.0f;
    float e = c * p / q;
    e = e < -1.0f ? -1.0f : e;
    return e > 1.0f ? 1.0f : e;
}

JETAGENT_VECTOR_CLONES void geluRange(const float* __restrict in, float* __restrict out, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        const float x = in[i];
        out[i] = 0.5f * x * (1.0f + erfRational(x * 0.707106781f));
    }
}

// The tanh form, as 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u)); std::exp keeps it scalar, which the
// models that use this form (rare among vision backbones) can afford.
void geluTanhRange(const float* __restrict in, float* __restrict out, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        const float x = in[i];
        const float u = 0.7978845608f * (x + 0.044715f * x * x * x);
        out[i] = x / (1.0f + std::exp(-2.0f * u));
    }
}

// One row of a LayerNorm: the mean, the variance about it, then the normalised row.
JETAGENT_VECTOR_CLONES void layerNormRow(const float* __restrict x, float* __restrict y, size_t c,
    float eps, const float* __restrict gamma, const float* __restrict beta, float* meanOut,
    float* invOut)
{
    // Eight partial sums, so that the compiler can keep them in vector registers: a single float
    // accumulator is a chain it may not reorder.
    float part[8] = {};
    size_t i = 0;
    for (; i + 8 <= c; i += 8)
        for (size_t k = 0; k < 8; ++k)
            part[k] += x[i + k];
    float total = 0;
    for (; i < c; ++i)
        total += x[i];
    for (float p : part)
        total += p;
    const float mean = total / static_cast<float>(c);
    float dev[8] = {};
    for (i = 0; i + 8 <= c; i += 8)
        for (size_t k = 0; k < 8; ++k)
            dev[k] += (x[i + k] - mean) * (x[i + k] - mean);
    float squares = 0;
    for (; i < c; ++i)
        squares += (x[i] - mean) * (x[i] - mean);
    for (float p : dev)
        squares += p;
    const float inv = 1.0f / std::sqrt(squares / static_cast<float>(c) + eps);
    if (meanOut)
        *meanOut = mean;
    if (invOut)
        *invOut = inv;
    if (gamma && beta)
        for (i = 0; i < c; ++i)
            y[i] = (x[i] - mean) * inv * gamma[i] + beta[i];
    else if (gamma)
        for (i = 0; i < c; ++i)
            y[i] = (x[i] - mean) * inv * gamma[i];
    else
        for (i = 0; i < c; ++i)
            y[i] = (x[i] - mean) * inv;
}

float clampTo(float v, const OutputRange& r)
{
    return std::min(std::max(v, r.min), r.max);
}

} // namespace

namespace {

// out[a][c] = in[c][a] for a in [first, end), c < planes (3 or 4): a few planes interleaved (an
// NCHW image of 3 channels to NHWC, the input's layout conversion), each plane read in order. (Not
// a template: clang's target_clones takes none.)
JETAGENT_VECTOR_CLONES void interleavePlanes(
    const float* in, size_t planeStride, size_t planes, float* out, size_t first, size_t end)
{
    const float* p0 = in;
    const float* p1 = in + planeStride;
    const float* p2 = in + 2 * planeStride;
    if (planes == 3) {
        for (size_t a = first; a < end; ++a) {
            out[a * 3] = p0[a];
            out[a * 3 + 1] = p1[a];
            out[a * 3 + 2] = p2[a];
        }
        return;
    }
    const float* p3 = in + 3 * planeStride;
    for (size_t a = first; a < end; ++a) {
        out[a * 4] = p0[a];
        out[a * 4 + 1] = p1[a];
        out[a * 4 + 2] = p2[a];
        out[a * 4 + 3] = p3[a];
    }
}

} // namespace

Expected<std::unique_ptr<StepExec>> PermuteStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    const float* in = plan.address(arena, inputs[0]);
    float* out = plan.address(arena, output);
    const size_t fullRank = inputDims.size();
    std::vector<int64_t> inStrides(fullRank, 1);
    for (size_t d = fullRank; d-- > 1;)
        inStrides[d - 1] = inStrides[d] * inputDims[d];
    // Per output axis its length and input stride, with axes of length 1 dropped and output axes
    // that stay neighbours in the input merged (fewer, longer loops).
    std::vector<int64_t> outDims, strideOf;
    for (size_t i = 0; i < fullRank; ++i) {
        const auto from = static_cast<size_t>(perm[i]);
        if (inputDims[from] == 1)
            continue;
        if (!outDims.empty() && strideOf.back() == inStrides[from] * inputDims[from]) {
            outDims.back() *= inputDims[from];
            strideOf.back() = inStrides[from];
        } else {
            outDims.push_back(inputDims[from]);
            strideOf.push_back(inStrides[from]);
        }
    }
    if (outDims.empty()) {
        outDims = {1};
        strideOf = {1};
    }
    const size_t rank = outDims.size();
    if (rank > 8)
        return Status::unsupported(node + ": a permutation of more than 8 moving axes");
    // Three or four planes interleaved (an RGB image to channels-last): in blocks of pixels, a
    // task each, without the general loop's index arithmetic per three values (0.09-0.15 ms of
    // a 224x224 image on two threads, against 0.03 ms).
    if (rank == 2 && strideOf[0] == 1 && (outDims[1] == 3 || outDims[1] == 4) &&
        strideOf[1] >= outDims[0]) {
        const auto pixels = static_cast<size_t>(outDims[0]);
        const auto planes = static_cast<size_t>(outDims[1]);
        const auto planeStride = static_cast<size_t>(strideOf[1]);
        constexpr size_t kPixelsPerTask = 8192;
        return loop((pixels + kPixelsPerTask - 1) / kPixelsPerTask, last, [=](size_t task) {
            const size_t first = task * kPixelsPerTask;
            const size_t end = std::min(pixels, first + kPixelsPerTask);
            interleavePlanes(in, planeStride, planes, out, first, end);
        });
    }
    // Rows of the output's last axis, in about four parts per thread (the first output axis alone
    // may be shorter than the thread count: Swin's q, k, v split is 3).
    const int64_t innerLen = outDims[rank - 1];
    const int64_t innerStride = strideOf[rank - 1];
    const int64_t rows = product(outDims, 0, rank - 1);
    const size_t threads = pool ? std::max<size_t>(1, pthreadpool_get_threads_count(pool)) : 1;
    const auto parts =
        static_cast<size_t>(std::min<int64_t>(rows, static_cast<int64_t>(4 * threads)));
    return loop(parts, last, [=](size_t part) {
        const int64_t first = rows * static_cast<int64_t>(part) / static_cast<int64_t>(parts);
        const int64_t end = rows * static_cast<int64_t>(part + 1) / static_cast<int64_t>(parts);
        // The first row's index along each output axis but the last.
        std::array<int64_t, 8> index {};
        for (int64_t r = first, d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
            index[static_cast<size_t>(d)] = r % outDims[static_cast<size_t>(d)];
            r /= outDims[static_cast<size_t>(d)];
        }
        float* o = out + first * innerLen;
        for (int64_t row = first; row < end; ++row) {
            int64_t src = 0;
            for (size_t d = 0; d + 1 < rank; ++d)
                src += index[d] * strideOf[d];
            if (innerStride == 1) {
                std::memcpy(o, in + src, static_cast<size_t>(innerLen) * sizeof(float));
            } else {
                for (int64_t k = 0; k < innerLen; ++k)
                    o[k] = in[src + k * innerStride];
            }
            o += innerLen;
            for (size_t d = rank - 1; d-- > 0;) {
                if (++index[d] < outDims[d])
                    break;
                index[d] = 0;
            }
        }
    });
}

namespace {

// `rows` rows of n values from `in` (rows `inStride` apart) to `out` (`outStride` apart), each
// value times scale plus shift of its column, clamped to [lo, hi].
JETAGENT_VECTOR_CLONES void affineRows(const float* in, size_t inStride, float* out,
    size_t outStride, size_t rows, size_t n, const float* __restrict scale,
    const float* __restrict shift, float lo, float hi)
{
    for (size_t r = 0; r < rows; ++r) {
        const float* x = in + r * inStride;
        float* y = out + r * outStride;
        for (size_t c = 0; c < n; ++c) {
            float v = x[c] * scale[c] + shift[c];
            v = v < lo ? lo : v;
            y[c] = v > hi ? hi : v;
        }
    }
}

} // namespace

Expected<std::unique_ptr<StepExec>> ConcatAffineStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t /*pool*/, bool last) const
{
    std::vector<const float*> ins;
    for (int id : inputs)
        ins.push_back(plan.address(arena, id));
    float* out = plan.address(arena, output);
    const size_t total = scale.size();
    const size_t block = std::max<size_t>(1, kElementChunk / std::max<size_t>(1, total));
    const size_t blocks = (pixels + block - 1) / block;
    const size_t count = pixels;
    return loop(blocks, last,
        [ins, out, total, block, count, channels = channels, scale = scale, shift = shift,
            r = range](size_t task) {
            const size_t p0 = task * block;
            const size_t rows = std::min(block, count - p0);
            size_t offset = 0;
            for (size_t i = 0; i < ins.size(); ++i) {
                const size_t n = channels[i];
                affineRows(ins[i] + p0 * n, n, out + p0 * total + offset, total, rows, n,
                    scale.data() + offset, shift.data() + offset, r.min, r.max);
                offset += n;
            }
        });
}

Expected<std::unique_ptr<StepExec>> ChannelAffineStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t /*pool*/, bool last) const
{
    const float* in = plan.address(arena, inputs[0]);
    float* out = plan.address(arena, output);
    const size_t channels = scale.size();
    const float* s = scale.data();
    const float* t = shift.data();
    const size_t innerCount = inner;
    const OutputRange r = range;
    return loop(outer, last, [=](size_t o) {
        const size_t base = o * channels * innerCount;
        if (innerCount == 1) { // channels-last: one pixel's channels
            for (size_t c = 0; c < channels; ++c)
                out[base + c] = clampTo(in[base + c] * s[c] + t[c], r);
            return;
        }
        for (size_t c = 0; c < channels; ++c) {
            const float* x = in + base + c * innerCount;
            float* y = out + base + c * innerCount;
            for (size_t i = 0; i < innerCount; ++i)
                y[i] = clampTo(x[i] * s[c] + t[c], r);
        }
    });
}

Expected<std::unique_ptr<StepExec>> RefUnaryStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t /*pool*/, bool last) const
{
    const float* in = plan.address(arena, inputs[0]);
    float* out = plan.address(arena, output);
    const RefUnaryKind k = kind;
    const float a = alpha;
    const float b = beta;
    return loopBlocks(count, kElementChunk, last, [=](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
            const float x = in[i];
            switch (k) {
            case RefUnaryKind::Tanh: out[i] = std::tanh(x); break;
            case RefUnaryKind::HardSigmoid:
                out[i] = std::min(1.0f, std::max(0.0f, a * x + b));
                break;
            case RefUnaryKind::Exp: out[i] = std::exp(x); break;
            case RefUnaryKind::Log: out[i] = std::log(x); break;
            case RefUnaryKind::Erf: out[i] = std::erf(x); break;
            case RefUnaryKind::Relu: out[i] = x > 0 ? x : 0.0f; break;
            case RefUnaryKind::Pow: out[i] = std::pow(x, a); break;
            }
        }
    });
}

Expected<std::unique_ptr<StepExec>> BatchMatMulStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t /*pool*/, bool last) const
{
    const float* a = plan.address(arena, inputs[0]);
    const float* b = constantB.empty() ? plan.address(arena, inputs[1]) : constantB.data();
    float* c = plan.address(arena, output);
    GemmShape shape;
    shape.m = m;
    shape.k = k;
    shape.n = n;
    shape.lda = k;
    shape.ldb = n;
    shape.ldc = n;
    // Tasks of 16 rows of one batch element: enough of them to share out over the threads, each
    // long enough to be worth a dispatch.
    constexpr size_t kTaskRows = 4 * kGemmTileRows;
    const size_t blocks = (m + kTaskRows - 1) / kTaskRows;
    const std::vector<size_t> ao = aOffsets;
    const std::vector<size_t> bo = bOffsets;
    return loop(ao.size() * blocks, last, [=](size_t task) {
        const size_t batch = task / blocks;
        const size_t first = (task % blocks) * kTaskRows;
        gemmRows(
            shape, a + ao[batch], b + bo[batch], c + batch * shape.m * shape.n, first, kTaskRows);
    });
}

Expected<std::unique_ptr<StepExec>> LayerNormStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t /*pool*/, bool last) const
{
    const float* in = plan.address(arena, inputs[0]);
    float* out = plan.address(arena, output);
    const size_t c = channels;
    const float eps = epsilon;
    const float* gamma = scale.empty() ? nullptr : scale.data();
    const float* beta = bias.empty() ? nullptr : bias.data();
    float* means = meanOutput < 0
        ? nullptr
        : plan.address(arena, extraOutputs[static_cast<size_t>(meanOutput)]);
    float* invs = invStdDevOutput < 0
        ? nullptr
        : plan.address(arena, extraOutputs[static_cast<size_t>(invStdDevOutput)]);
    constexpr size_t kRowsPerTask = 8;
    return loopBlocks(rows, kRowsPerTask, last, [=](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r)
            layerNormRow(in + r * c, out + r * c, c, eps, gamma, beta, means ? means + r : nullptr,
                invs ? invs + r : nullptr);
    });
}

Expected<std::unique_ptr<StepExec>> GeluStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t /*pool*/, bool last) const
{
    const float* in = plan.address(arena, inputs[0]);
    float* out = plan.address(arena, output);
    const bool tanhForm = form == GeluForm::Tanh;
    return loopBlocks(count, kElementChunk, last, [=](size_t begin, size_t end) {
        if (tanhForm)
            geluTanhRange(in + begin, out + begin, end - begin);
        else
            geluRange(in + begin, out + begin, end - begin);
    });
}

namespace {

JETAGENT_VECTOR_CLONES void scaleChannels(const float* x, const float* __restrict scale, float* out,
    size_t pixels, size_t channels, float lo, float hi)
{
    for (size_t p = 0; p < pixels; ++p) {
        const float* xp = x + p * channels;
        float* op = out + p * channels;
        for (size_t c = 0; c < channels; ++c) {
            float v = xp[c] * scale[c];
            v = v < lo ? lo : v;
            op[c] = v > hi ? hi : v;
        }
    }
}

// The mean over `pixels` of channels [0, channels) of one image (row stride `stride`), clamped:
// sums in float, pixel by pixel, as XNNPACK's kernel does, so that a channel block's sums stay in
// registers while the rows stream past.
JETAGENT_VECTOR_CLONES void meanOfPixels(const float* x, size_t stride, float* __restrict out,
    size_t pixels, size_t channels, float lo, float hi)
{
    constexpr size_t kBlock = 64;
    float sum[kBlock];
    const float scale = 1.0f / static_cast<float>(pixels);
    for (size_t c0 = 0; c0 < channels; c0 += kBlock) {
        const size_t n = std::min(kBlock, channels - c0);
        for (size_t c = 0; c < n; ++c)
            sum[c] = 0.0f;
        for (size_t p = 0; p < pixels; ++p) {
            const float* xp = x + p * stride + c0;
            for (size_t c = 0; c < n; ++c)
                sum[c] += xp[c];
        }
        for (size_t c = 0; c < n; ++c) {
            float v = sum[c] * scale;
            v = v < lo ? lo : v;
            out[c0 + c] = v > hi ? hi : v;
        }
    }
}

} // namespace

std::unique_ptr<StepExec> globalMeanExec(const float* x, float* out, size_t images, size_t pixels,
    size_t channels, OutputRange range, bool last)
{
    // Tasks of whole images split into channel slices of at least 64 channels and about
    // kElementChunk * 16 elements, so that two threads share one image's work.
    const size_t perTask =
        std::max<size_t>(64, (kElementChunk * 16 / std::max<size_t>(1, pixels) + 63) / 64 * 64);
    const size_t slices = (channels + perTask - 1) / perTask;
    return loop(images * slices, last, [=](size_t task) {
        const size_t n = task / slices;
        const size_t c0 = task % slices * perTask;
        meanOfPixels(x + n * pixels * channels + c0, channels, out + n * channels + c0, pixels,
            std::min(perTask, channels - c0), range.min, range.max);
    });
}

std::unique_ptr<StepExec> channelScaleExec(const float* x, const float* scale, float* out,
    size_t images, size_t pixels, size_t channels, OutputRange range, bool last)
{
    const size_t block = std::max<size_t>(1, kElementChunk / std::max<size_t>(1, channels));
    const size_t blocks = (pixels + block - 1) / block;
    return loop(images * blocks, last, [=](size_t task) {
        const size_t n = task / blocks;
        const size_t p0 = task % blocks * block;
        const size_t offset = (n * pixels + p0) * channels;
        scaleChannels(x + offset, scale + n * channels, out + offset, std::min(block, pixels - p0),
            channels, range.min, range.max);
    });
}

Expected<std::unique_ptr<StepExec>> StridedSliceStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t /*pool*/, bool last) const
{
    const float* in = plan.address(arena, inputs[0]);
    float* out = plan.address(arena, output);
    const StridedSliceStep p = *this;
    // A task per leading index, or per block when there is only one leading index.
    const bool byBlock = outer == 1;
    return loop(byBlock ? count : outer, last, [in, out, p, byBlock](size_t task) {
        const size_t first = byBlock ? task : 0;
        const size_t end = byBlock ? task + 1 : p.count;
        const size_t o = byBlock ? 0 : task;
        for (size_t j = first; j < end; ++j)
            std::memcpy(out + (o * p.count + j) * p.inner,
                in + (o * p.extent + p.begin + j * p.step) * p.inner, p.inner * sizeof(float));
    });
}

Expected<std::unique_ptr<StepExec>> GatherTapsStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t /*pool*/, bool last) const
{
    const float* in = plan.address(arena, inputs[0]);
    float* out = plan.address(arena, output);
    const GatherTapsStep p = *this;
    // One task per output frame.
    return loop(batch * outputDepth, last, [in, out, p](size_t frame) {
        const size_t n = frame / p.outputDepth;
        const int64_t od = static_cast<int64_t>(frame % p.outputDepth);
        const size_t pixelIn = p.groups * p.channels;
        const size_t pixelOut = pixelIn * p.taps;
        float* o = out + frame * p.pixels * pixelOut;
        for (size_t t = 0; t < p.taps; ++t) {
            const int64_t d =
                od * static_cast<int64_t>(p.stride) - p.pad + static_cast<int64_t>(t * p.dilation);
            const bool inside = d >= 0 && d < static_cast<int64_t>(p.inputDepth);
            const float* src = inside
                ? in + (n * p.inputDepth + static_cast<size_t>(d)) * p.pixels * pixelIn
                : nullptr;
            for (size_t px = 0; px < p.pixels; ++px)
                for (size_t g = 0; g < p.groups; ++g) {
                    float* dst = o + px * pixelOut + (g * p.taps + t) * p.channels;
                    if (src)
                        std::memcpy(
                            dst, src + px * pixelIn + g * p.channels, p.channels * sizeof(float));
                    else
                        std::fill(dst, dst + p.channels, 0.0f);
                }
        }
    });
}

Expected<std::unique_ptr<StepExec>> ReduceStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t /*pool*/, bool last) const
{
    const float* in = plan.address(arena, inputs[0]);
    float* out = plan.address(arena, output);
    const size_t rank = inputDims.size();
    std::vector<int64_t> strides(rank, 1);
    for (size_t d = rank; d-- > 1;)
        strides[d - 1] = strides[d] * inputDims[d];
    // Output elements are the kept axes' index combinations in order; reduced ones are summed.
    std::vector<int64_t> keptDims, keptStrides, redDims, redStrides;
    int64_t reducedCount = 1;
    for (size_t d = 0; d < rank; ++d) {
        if (reduce[d]) {
            redDims.push_back(inputDims[d]);
            redStrides.push_back(strides[d]);
            reducedCount *= inputDims[d];
        } else {
            keptDims.push_back(inputDims[d]);
            keptStrides.push_back(strides[d]);
        }
    }
    const int64_t outCount = product(keptDims, 0, keptDims.size());
    const bool isMax = max;
    auto offsetOf = [](int64_t flat, const std::vector<int64_t>& dims,
                        const std::vector<int64_t>& st) {
        int64_t off = 0;
        for (size_t d = dims.size(); d-- > 0;) {
            off += (flat % dims[d]) * st[d];
            flat /= dims[d];
        }
        return off;
    };
    return loop(static_cast<size_t>(outCount), last, [=](size_t o) {
        const int64_t base = offsetOf(static_cast<int64_t>(o), keptDims, keptStrides);
        float acc = isMax ? -INFINITY : 0.0f;
        double sum = 0;
        for (int64_t r = 0; r < reducedCount; ++r) {
            const float v = in[base + offsetOf(r, redDims, redStrides)];
            if (isMax)
                acc = std::max(acc, v);
            else
                sum += v;
        }
        out[o] = isMax ? acc : static_cast<float>(sum / static_cast<double>(reducedCount));
    });
}

Expected<std::unique_ptr<StepExec>> Pool3dStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t /*pool*/, bool last) const
{
    const float* in = plan.address(arena, inputs[0]);
    float* out = plan.address(arena, output);
    const Pool3dStep p = *this;
    // One task per output voxel row (n, od, oh); channels innermost.
    return loop(
        static_cast<size_t>(batch * outDims[0] * outDims[1]), last, [in, out, p](size_t task) {
            const int64_t oh = static_cast<int64_t>(task) % p.outDims[1];
            const int64_t od = (static_cast<int64_t>(task) / p.outDims[1]) % p.outDims[0];
            const int64_t n = static_cast<int64_t>(task) / (p.outDims[1] * p.outDims[0]);
            for (int64_t ow = 0; ow < p.outDims[2]; ++ow) {
                // The output voxel's channels accumulate in place: nothing is allocated per run.
                float* dst = out +
                    (((n * p.outDims[0] + od) * p.outDims[1] + oh) * p.outDims[2] + ow) *
                        p.channels;
                std::fill(dst, dst + p.channels, p.max ? -INFINITY : 0.0f);
                int64_t counted = 0;
                const int64_t o[3] = {od, oh, ow};
                for (int64_t kd = 0; kd < p.kernel[0]; ++kd)
                    for (int64_t kh = 0; kh < p.kernel[1]; ++kh)
                        for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
                            const int64_t k[3] = {kd, kh, kw};
                            int64_t i[3];
                            bool inside = true;
                            for (int a = 0; a < 3; ++a) {
                                i[a] = o[a] * p.stride[a] - p.padBegin[a] + k[a] * p.dilation[a];
                                inside = inside && i[a] >= 0 && i[a] < p.inDims[a];
                            }
                            if (!inside)
                                continue;
                            ++counted;
                            const float* src = in +
                                (((n * p.inDims[0] + i[0]) * p.inDims[1] + i[1]) * p.inDims[2] +
                                    i[2]) *
                                    p.channels;
                            for (int64_t c = 0; c < p.channels; ++c)
                                dst[c] = p.max ? std::max(dst[c], src[c]) : dst[c] + src[c];
                        }
                if (!p.max)
                    for (int64_t c = 0; c < p.channels; ++c)
                        dst[c] /= static_cast<float>(std::max<int64_t>(counted, 1));
            }
        });
}

} // namespace xnnplan
} // namespace jetagent
