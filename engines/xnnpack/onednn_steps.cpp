// Dense (and wide depthwise) 2-D convolutions and fully connected layers of the xnnpack backend on
// oneDNN (x86-64 builds with libdnnl-dev): where XNNPACK's 2022 snapshot runs them several times
// slower (its small fp32 GEMM tiles; no depthwise kernel over 5x5; a transformer's linear layers
// ran at a third of oneDNN's rate).
//
// Threads: oneDNN's Debian build parallelises with OpenMP, whose idle workers spin, and a spinning
// pool takes the cores that capture and preprocessing need. So oneDNN never runs a parallel region
// here: every call runs on one thread (omp_set_num_threads(1) in the calling thread), and the step
// is split over the backend's own pthreadpool instead, one oneDNN primitive per part: a
// convolution by images of the batch or, for one image, by bands of output rows (both dense in
// NHWC, which oneDNN's fast kernels need; a channel slice of the output would be strided and fall
// to its reference kernel); a fully connected layer by bands of rows.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <dnnl.h>
#include <dnnl.hpp>
#include <omp.h>
#include <pthreadpool.h>
// GCC 12's AVX-512 headers trip its own maybe-uninitialized warning (a known false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include "steps.h"

namespace jetagent {
namespace xnnplan {

namespace {

using dnnl::memory;

// SiLU, x / (1 + exp(-x)), over `n` floats in place, 16 at a time in AVX-512 registers (the
// caller checks the CPU has them): exp by its range reduction to [-ln2/2, ln2/2] and a polynomial
// of degree 7 scaled by 2^k, the reciprocal by rcp14 and one Newton step (relative error about
// 1e-7). oneDNN 2.6's swish post-op divides, inside the convolution's kernel; with this pass after
// the primitive instead, efficientnet_b0 ran 5.24-5.50 ms against 5.58-5.69 (alternated 6 times),
// efficientnet_v2_s 49.4-50.2 against 50.3-51.8 (4 times), two threads. Below -87 the result is
// x times 0 (-0, or NaN for -inf as the formula gives) instead of x e^x, under 2e-36 in size there.
__attribute__((target("avx512f"))) void siluAvx512(float* data, size_t n)
{
    const __m512 log2e = _mm512_set1_ps(1.44269504088896341f);
    // ln 2 in two parts, so that k ln2 is subtracted without rounding error.
    const __m512 ln2hi = _mm512_set1_ps(0.693359375f), ln2lo = _mm512_set1_ps(-2.12194440e-4f);
    const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);
    const __m512 lo = _mm512_set1_ps(-87.0f), hi = _mm512_set1_ps(87.0f);
    // 1/n! for n = 7..2: exp(r) = 1 + r (1 + r (1/2 + r (1/6 + ...))).
    const float inverseFactorials[] = {
        1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f};
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 x = _mm512_loadu_ps(data + i);
        const __m512 t = _mm512_min_ps(_mm512_max_ps(_mm512_sub_ps(zero, x), lo), hi);
        const __m512 k = _mm512_roundscale_ps(
            _mm512_mul_ps(t, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m512 r = _mm512_fnmadd_ps(k, ln2lo, _mm512_fnmadd_ps(k, ln2hi, t));
        __m512 q = _mm512_set1_ps(inverseFactorials[0]);
        for (size_t c = 1; c < 6; ++c)
            q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(inverseFactorials[c]));
        q = _mm512_fmadd_ps(_mm512_fmadd_ps(q, r, one), r, one);
        const __m512 d = _mm512_add_ps(_mm512_scalef_ps(q, k), one); // 1 + exp(-x)
        __m512 y = _mm512_rcp14_ps(d);
        y = _mm512_mul_ps(y, _mm512_fnmadd_ps(d, y, two));
        const __mmask16 tiny = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ); // exp(-x) clamped there
        _mm512_storeu_ps(data + i, _mm512_mask_mul_ps(_mm512_mul_ps(x, y), tiny, x, zero));
    }
    for (; i < n; ++i)
        data[i] /= 1.0f + std::exp(-data[i]);
}

// Whether a convolution's SiLU runs as siluAvx512 after the primitive instead of as its post-op:
// on AVX-512, and where no clamp follows it (a post-op clamp would come first).
bool siluApart(const ConvStep& step)
{
    return step.gelu == GeluForm::Swish &&
        step.range.min == -std::numeric_limits<float>::infinity() &&
        step.range.max == std::numeric_limits<float>::infinity() && oneDnnHasAvx512();
}

// One part of the step: a primitive over a dense slice of the input and output.
struct Part {
    dnnl::stream stream; // one per part: the parts run at once on different threads
    dnnl::primitive primitive;
    memory src, dst, weights, bias, scratchpad;
    std::vector<dnnl_exec_arg_t> args;
    // int8 residual: copied over the part's output before it runs (oneDNN's sum post-op adds
    // what the output memory holds); residualBytes 0: none.
    const void* residual = nullptr;
    void* residualTo = nullptr;
    size_t residualBytes = 0;
    // A slice of the output channels (channelSlices): the part computes them densely into
    // `slice`, [pixels][sliceChannels], and copies them to their place in the output, whose rows
    // have `channels` values, from channel `firstChannel` on; a residual is copied in first.
    std::vector<float> slice;
    float* sliceOut = nullptr;
    size_t pixels = 0, firstChannel = 0, sliceChannels = 0, channels = 0;
    bool sliceResidual = false;
    // Primitives of one memory to another run before and after the convolution: a Winograd
    // convolution's re-layouts of its blocked input and output (winogradFits), and its activation
    // where the Winograd kernel takes none as a post-op (in place on the blocked output; oneDNN's
    // DNNL_ARG_SRC and DNNL_ARG_DST are its DNNL_ARG_FROM and DNNL_ARG_TO).
    struct Reorder {
        dnnl::primitive primitive;
        memory from, to;
    };
    std::vector<Reorder> before, after;
    // The output's SiLU (siluApart): `siluCount` floats from `silu`, after `after`; 0: none.
    float* silu = nullptr;
    size_t siluCount = 0;
    // Bytes of the scratchpad, and of the blocked input and output (Winograd's; 0: none), which
    // live in buffers of the thread that runs the part (threadBuffer), not in the part.
    size_t scratchpadBytes = 0, blockedSrcBytes = 0, blockedDstBytes = 0;
};

// A 64-byte aligned buffer of at least `bytes` of the calling thread, one per `slot`, kept for
// its next parts. A part's scratchpad and Winograd's re-laid input and output live there: a
// thread runs one part at a time, so a session's memory does not grow with its steps' parts (a
// second resnet50 session added 24.4 MiB with one of each per part, over the 24.3 MiB that
// ModelZooSessions.ShareOneDnnWeights allows).
void* threadBuffer(size_t slot, size_t bytes)
{
    struct Buffer {
        void* data = nullptr;
        size_t size = 0;
        ~Buffer() { ::operator delete(data, std::align_val_t(64)); }
    };
    thread_local Buffer buffers[3];
    Buffer& b = buffers[slot];
    if (b.size < bytes) {
        ::operator delete(b.data, std::align_val_t(64));
        b.data = nullptr;
        b.size = 0;
        b.data = ::operator new(bytes, std::align_val_t(64));
        b.size = bytes;
    }
    return b.data;
}

// Weights re-laid for a primitive, with the plain weights they came from.
struct PackedWeights {
    const void* source;
    memory packed;
};

// A slice of a convolution that one part computes: whole images of a batch, or a band of one
// image's output rows with the input rows it reads and the padding that falls inside it. Offsets
// are in elements from the input's and the output's start.
struct ConvBand {
    size_t inOffset = 0, outOffset = 0;
    size_t images = 1, inRows = 0;
    uint32_t padTop = 0, padBottom = 0;
    size_t outRows = 0, outW = 0;
};

// The bands of an NHWC convolution of `outPixels` output pixels per image, one per thread of
// `pool` (at most one per image, or per output row).
std::vector<ConvBand> convBands(const ConvGeometry& g, size_t outPixels, pthreadpool_t pool)
{
    const size_t ic = g.groups * g.groupInputChannels;
    const size_t oc = g.groups * g.groupOutputChannels;
    const size_t outW =
        (g.inputW + g.padLeft + g.padRight - (g.dilationW * (g.kernelW - 1) + 1)) / g.strideW + 1;
    const size_t outH = outPixels / outW;
    const size_t threads = pool ? std::max<size_t>(1, pthreadpool_get_threads_count(pool)) : 1;
    std::vector<ConvBand> bands;
    if (g.batch > 1) {
        const size_t parts = std::min(threads, g.batch);
        for (size_t p = 0; p < parts; ++p) {
            const size_t b0 = g.batch * p / parts, b1 = g.batch * (p + 1) / parts;
            ConvBand b;
            b.inOffset = b0 * g.inputH * g.inputW * ic;
            b.outOffset = b0 * outH * outW * oc;
            b.images = b1 - b0;
            b.inRows = g.inputH;
            b.padTop = g.padTop;
            b.padBottom = g.padBottom;
            b.outRows = outH;
            b.outW = outW;
            bands.push_back(b);
        }
        return bands;
    }
    const size_t parts = std::min(threads, outH);
    const long span = static_cast<long>(g.dilationH) * (static_cast<long>(g.kernelH) - 1) + 1;
    for (size_t p = 0; p < parts; ++p) {
        const long r0 = static_cast<long>(outH * p / parts);
        const long r1 = static_cast<long>(outH * (p + 1) / parts);
        const long first = r0 * static_cast<long>(g.strideH) - static_cast<long>(g.padTop);
        const long end =
            (r1 - 1) * static_cast<long>(g.strideH) - static_cast<long>(g.padTop) + span;
        const long h = static_cast<long>(g.inputH);
        const long from = std::max(0L, first), to = std::min(h, end);
        ConvBand b;
        b.inOffset = static_cast<size_t>(from) * g.inputW * ic;
        b.outOffset = static_cast<size_t>(r0) * outW * oc;
        b.inRows = static_cast<size_t>(to - from);
        b.padTop = static_cast<uint32_t>(std::max(0L, -first));
        b.padBottom = static_cast<uint32_t>(std::max(0L, end - h));
        b.outRows = static_cast<size_t>(r1 - r0);
        b.outW = outW;
        bands.push_back(b);
    }
    return bands;
}

// Whether a convolution has the shape of oneDNN's Winograd convolution (F(2x2, 3x3) or F(4x4,
// 3x3)): 3x3 of unit stride and dilation, one group, channels in 16s, where oneDNN has its
// AVX-512 kernels (it has no other). Its input and output are blocked by 16 channels (nChw16c),
// so each part re-lays its band before and after it. With that, measured on one core against the
// direct convolution in NHWC, whole images: 1.55x (64 channels, 56x56), 1.77x (128, 28x28), 1.79x
// (256, 14x14), 1.17x (512, 7x7), 1.42x (48, 56x56); but in resnet18 on two threads, bands of 14x7
// pixels ran 1.5x and of 7x4 2.3x slower than the direct convolution (too few tiles a band),
// bands of 28x14 alike, of 56x28 1.6-1.8x faster.
bool winogradShape(const ConvGeometry& g)
{
    return g.kernelH == 3 && g.kernelW == 3 && g.strideH == 1 && g.strideW == 1 &&
        g.dilationH == 1 && g.dilationW == 1 && g.groups == 1 && g.groupInputChannels % 16 == 0 &&
        g.groupOutputChannels % 16 == 0 && oneDnnHasAvx512();
}

// Output pixels a part needs for Winograd: a band of rows at least 28x28; a slice of output
// channels (channelSlices), which takes the whole image, at least 14x14.
constexpr size_t kWinogradBandPixels = 784, kWinogradSlicePixels = 196;

// Whether a part of `pixels` output pixels (a band, or a channel slice) runs as Winograd.
bool winogradFits(const ConvGeometry& g, size_t pixels, bool sliced)
{
    return winogradShape(g) && pixels >= (sliced ? kWinogradSlicePixels : kWinogradBandPixels);
}

// How many slices of output channels one image's convolution runs as, one part a slice: where
// its bands of rows would be too small for Winograd and the whole image is not (each slice at
// least 16 channels), or where its output rows would split unevenly over the pool's threads (a
// 7x7 output on two threads: bands of 4 and 3 rows, and a thread of 4 rows ran resnet18's last 3x3
// convolutions at 1.26x one thread's speed; each slice at least 32 channels); 1: split by rows
// (convBands). Slices are multiples of 16 channels (the AVX-512 kernels' block).
size_t channelSlices(const ConvGeometry& g, size_t outPixels, pthreadpool_t pool)
{
    const size_t threads = pool ? std::max<size_t>(1, pthreadpool_get_threads_count(pool)) : 1;
    const size_t oc = g.groups * g.groupOutputChannels;
    const size_t outW =
        (g.inputW + g.padLeft + g.padRight - (g.dilationW * (g.kernelW - 1) + 1)) / g.strideW + 1;
    const size_t outH = outPixels / outW;
    if (threads < 2 || g.batch != 1 || g.groups != 1 || oc % 16 != 0 || oc < 16 * threads)
        return 1;
    const size_t parts = std::min(threads, outH);
    const size_t tallest = (outH + parts - 1) / parts;
    // Bands too small for Winograd, the whole image large enough: slices that each run the
    // whole image as Winograd (resnet's 14x14 stages).
    if (tallest * outW < kWinogradBandPixels && winogradFits(g, outPixels, true))
        return threads;
    if (oc < 32 * threads)
        return 1;
    // The row split's slowest thread against an even share, within 10%: keep it.
    return tallest * parts * 10 > outH * 11 ? threads : 1;
}

class OneDnnExec final : public StepExec {
public:
    explicit OneDnnExec(dnnl::engine engine) : engine_(std::move(engine)) { }

    Status buildConv(const ConvStep& step, float* arena, const Plan& plan, pthreadpool_t pool)
    {
        node_ = step.node;
        float* in = plan.address(arena, step.inputs[0]);
        float* out = plan.address(arena, step.output);
        const Value& y = plan.values[static_cast<size_t>(step.output)];
        // The output is NHWC [batch][outH][outW][channels] whatever the value's logical rank.
        const size_t oc = step.groups * step.groupOutputChannels;
        const size_t outPixels = static_cast<size_t>(y.count()) / (step.batch * oc);
        // oneDNN sizes a primitive's work split by the creating thread's OpenMP thread count: one.
        omp_set_num_threads(1);
        try {
            const size_t slices = channelSlices(step, outPixels, pool);
            if (slices > 1) {
                const ConvBand whole = convBands(step, outPixels, nullptr).at(0);
                const size_t blocks = oc / 16;
                for (size_t p = 0; p < slices; ++p)
                    addConvPart(step, in, out, whole, 16 * (blocks * p / slices),
                        16 * (blocks * (p + 1) / slices));
                return Status();
            }
            for (const ConvBand& b : convBands(step, outPixels, pool))
                addConvPart(step, in + b.inOffset, out + b.outOffset, b, 0, oc);
        } catch (const dnnl::error& e) {
            return Status::unsupported(
                step.node + ": oneDNN cannot run this convolution (" + e.what() + ")");
        }
        return Status();
    }

    // An int8 convolution over the plan's int8 values (signed, with their zero points: oneDNN
    // reads XNNPACK's representation as it is), split as buildConv's. A 1x1 convolution of unit
    // stride and no padding (a fully connected layer among them) runs as one image of all the
    // batch's rows, so that one image or a batch of rows splits into bands alike.
    Status buildQConv(const QConvStep& step, float* arena, const Plan& plan, pthreadpool_t pool)
    {
        node_ = step.node;
        auto* in = reinterpret_cast<int8_t*>(plan.address(arena, step.inputs[0]));
        auto* out = reinterpret_cast<int8_t*>(plan.address(arena, step.output));
        const int8_t* residual = step.residual
            ? reinterpret_cast<const int8_t*>(plan.address(arena, step.inputs[1]))
            : nullptr;
        ConvGeometry g = step;
        if (g.kernelH == 1 && g.kernelW == 1 && g.strideH == 1 && g.strideW == 1 && g.padTop == 0 &&
            g.padBottom == 0 && g.padLeft == 0 && g.padRight == 0) {
            g.inputH *= g.batch;
            g.batch = 1;
        }
        const size_t oc = g.groups * g.groupOutputChannels;
        const size_t outPixels =
            static_cast<size_t>(plan.values[static_cast<size_t>(step.output)].count()) /
            (g.batch * oc);
        omp_set_num_threads(1);
        try {
            for (const ConvBand& b : convBands(g, outPixels, pool))
                addQConvPart(step, g, plan, in + b.inOffset, out + b.outOffset,
                    residual ? residual + b.outOffset : nullptr, b);
        } catch (const dnnl::error& e) {
            return Status::unsupported(
                step.node + ": oneDNN cannot run this int8 convolution (" + e.what() + ")");
        }
        return Status();
    }

    // Bands of rows of [rows][in] times the [out][in] kernel, one part per thread of the pool (a
    // band of fewer than kMinRows rows does not pay for its wake-up).
    Status buildFullyConnected(
        const FullyConnectedStep& step, float* arena, const Plan& plan, pthreadpool_t pool)
    {
        constexpr size_t kMinRows = 8;
        node_ = step.node;
        const float* in = plan.address(arena, step.inputs[0]);
        float* out = plan.address(arena, step.output);
        const size_t threads = pool ? std::max<size_t>(1, pthreadpool_get_threads_count(pool)) : 1;
        const size_t parts = std::max<size_t>(1, std::min(threads, step.rows / kMinRows));
        omp_set_num_threads(1);
        try {
            for (size_t p = 0; p < parts; ++p) {
                const size_t r0 = step.rows * p / parts, r1 = step.rows * (p + 1) / parts;
                addFullyConnectedPart(
                    step, in + r0 * step.inputChannels, out + r0 * step.outputChannels, r1 - r0);
            }
        } catch (const dnnl::error& e) {
            return Status::unsupported(
                step.node + ": oneDNN cannot run this fully connected layer (" + e.what() + ")");
        }
        return Status();
    }

    Status run(pthreadpool_t pool) override
    {
        if (parts_.size() == 1 || !pool) {
            for (size_t p = 0; p < parts_.size(); ++p)
                execute(p);
        } else {
            pthreadpool_parallelize_1d(
                pool, [](void* self, size_t p) { static_cast<OneDnnExec*>(self)->execute(p); },
                this, parts_.size(), 0);
        }
        for (dnnl_status_t s : status_)
            if (s != dnnl_success)
                return Status::runtime(
                    node_ + ": oneDNN failed (status " + std::to_string(static_cast<int>(s)) + ")");
        return Status();
    }

private:
    void execute(size_t p)
    {
        omp_set_num_threads(1); // this thread's OpenMP regions: none (see the file's comment)
        Part& part = parts_[p];
        if (part.scratchpadBytes)
            part.scratchpad.set_data_handle(threadBuffer(0, part.scratchpadBytes));
        if (part.blockedSrcBytes)
            part.src.set_data_handle(threadBuffer(1, part.blockedSrcBytes));
        if (part.blockedDstBytes)
            part.dst.set_data_handle(threadBuffer(2, part.blockedDstBytes));
        if (part.residualBytes)
            std::memcpy(part.residualTo, part.residual, part.residualBytes);
        const size_t sliceBytes = part.sliceChannels * sizeof(float);
        if (part.sliceResidual)
            for (size_t i = 0; i < part.pixels; ++i)
                std::memcpy(part.slice.data() + i * part.sliceChannels,
                    part.sliceOut + i * part.channels + part.firstChannel, sliceBytes);
        dnnl_status_t s = dnnl_success;
        for (Part::Reorder& r : part.before)
            if (s == dnnl_success)
                s = reorder(part, r);
        if (s == dnnl_success)
            s = dnnl_primitive_execute(part.primitive.get(), part.stream.get(),
                static_cast<int>(part.args.size()), part.args.data());
        for (Part::Reorder& r : part.after)
            if (s == dnnl_success)
                s = reorder(part, r);
        if (s == dnnl_success && part.siluCount)
            siluAvx512(part.silu, part.siluCount);
        status_[p] = s;
        for (size_t i = 0; i < part.pixels; ++i)
            std::memcpy(part.sliceOut + i * part.channels + part.firstChannel,
                part.slice.data() + i * part.sliceChannels, sliceBytes);
    }

    static dnnl_status_t reorder(Part& part, Part::Reorder& r)
    {
        const dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, r.from.get()}, {DNNL_ARG_TO, r.to.get()}};
        return dnnl_primitive_execute(r.primitive.get(), part.stream.get(), 2, args);
    }

    // A band of a Winograd convolution (winogradFits): its input rows re-laid to nChw16c, the
    // residual too where there is one (the sum post-op adds what the output holds), the
    // convolution, its output re-laid to NHWC. False where oneDNN has no Winograd kernel for it
    // (nothing added).
    bool addWinogradPart(const ConvStep& step, Part& part, const memory::desc& srcDesc,
        const memory::desc& dstDesc, float* in, float* out, const memory::desc& plainWeights,
        const memory::desc& biasDesc, const memory::dims& padL, const memory::dims& padR,
        size_t firstChannel, GeluForm gelu)
    {
        const auto blocked = memory::format_tag::nChw16c;
        const memory::desc srcBlocked(srcDesc.dims(), memory::data_type::f32, blocked);
        const memory::desc dstBlocked(dstDesc.dims(), memory::data_type::f32, blocked);
        const memory::desc anyWeights(
            plainWeights.dims(), memory::data_type::f32, memory::format_tag::any);
        const memory::dims ones {1, 1}, zeros {0, 0};
        // The activation as a post-op; else (oneDNN 2.6's Winograd kernel takes Relu and clamps
        // only) as eltwise primitives on the blocked output after it. SiLU now runs apart
        // (siluApart), but this is how efficientnet_v2_s's 3x3 convolutions with their SiLU
        // became Winograd: on two threads, those of 48 channels to 192 at 56x56 took 3.1-3.6 ms
        // against 3.9-4.0 direct, of 64 to 256 at 28x28 1.2-1.4 against 1.7-1.9, and the model
        // 53.6-56.0 ms against 60.1-62.3 (alternated 3 times).
        const std::vector<Eltwise> acts = activations(step.range, gelu);
        std::unique_ptr<dnnl::convolution_forward::primitive_desc> pd;
        bool apart = false;
        try {
            const auto desc = step.bias.empty()
                ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                      dnnl::algorithm::convolution_winograd, srcBlocked, anyWeights, dstBlocked,
                      ones, zeros, padL, padR)
                : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                      dnnl::algorithm::convolution_winograd, srcBlocked, anyWeights, biasDesc,
                      dstBlocked, ones, zeros, padL, padR);
            try {
                pd = std::make_unique<dnnl::convolution_forward::primitive_desc>(
                    desc, attributes(step.residual, acts), engine_);
            } catch (const dnnl::error&) {
                if (acts.empty())
                    return false; // no Winograd kernel for it at all
                pd = std::make_unique<dnnl::convolution_forward::primitive_desc>(
                    desc, attributes(step.residual, {}), engine_);
                apart = true;
            }
        } catch (const dnnl::error&) {
            return false;
        }
        try {
            part.primitive = dnnl::convolution_forward(*pd);
            const memory srcPlain(srcDesc, engine_, in), dstPlain(dstDesc, engine_, out);
            part.src = memory(srcBlocked, engine_, DNNL_MEMORY_NONE);
            part.dst = memory(dstBlocked, engine_, DNNL_MEMORY_NONE);
            part.blockedSrcBytes = srcBlocked.get_size();
            part.blockedDstBytes = dstBlocked.get_size();
            part.before.push_back({dnnl::reorder(srcPlain, part.src), srcPlain, part.src});
            if (step.residual)
                part.before.push_back({dnnl::reorder(dstPlain, part.dst), dstPlain, part.dst});
            if (apart)
                for (const Eltwise& e : acts) {
                    const dnnl::eltwise_forward::primitive_desc epd(
                        {dnnl::prop_kind::forward_inference, e.alg, dstBlocked, e.alpha, e.beta},
                        engine_);
                    part.after.push_back({dnnl::eltwise_forward(epd), part.dst, part.dst});
                }
            part.after.push_back({dnnl::reorder(part.dst, dstPlain), part.dst, dstPlain});
            // oneDNN re-lays weights into its Winograd format only from oihw.
            const memory::dims& d = plainWeights.dims();
            const auto oc = static_cast<size_t>(d[0]), ic = static_cast<size_t>(d[1]);
            const size_t taps = static_cast<size_t>(d[2] * d[3]);
            const float* kernel = step.kernel.data() + firstChannel * taps * ic;
            std::vector<float> oihw(oc * taps * ic);
            for (size_t o = 0; o < oc; ++o)
                for (size_t t = 0; t < taps; ++t)
                    for (size_t i = 0; i < ic; ++i)
                        oihw[(o * ic + i) * taps + t] = kernel[(o * taps + t) * ic + i];
            part.weights = weightsFor(step.packedMutex, step.packed,
                {d, memory::data_type::f32, memory::format_tag::oihw}, oihw.data(),
                pd->weights_desc(), kernel);
        } catch (const dnnl::error&) {
            // A re-layout oneDNN cannot make: the direct convolution instead (it re-sets the
            // rest of the part).
            part.before.clear();
            part.after.clear();
            return false;
        }
        addPart(std::move(part), pd->scratchpad_desc(),
            step.bias.empty() ? nullptr : step.bias.data() + firstChannel, biasDesc);
        return true;
    }

    // A band of the convolution (images or rows) and of its output channels, [firstChannel,
    // endChannel): all of them, or a slice of one group's (channelSlices).
    void addConvPart(const ConvStep& step, float* in, float* out, const ConvBand& band,
        size_t firstChannel, size_t endChannel)
    {
        const auto f32 = memory::data_type::f32;
        const auto groups = static_cast<memory::dim>(step.groups);
        const auto gic = static_cast<memory::dim>(step.groupInputChannels);
        const bool sliced = endChannel - firstChannel != step.groups * step.groupOutputChannels;
        const auto goc =
            static_cast<memory::dim>(sliced ? endChannel - firstChannel : step.groupOutputChannels);
        const auto ic = groups * gic, oc = groups * goc;
        const auto n = static_cast<memory::dim>(band.images);
        const size_t inRows = band.inRows, outRows = band.outRows, outW = band.outW;
        const uint32_t padTop = band.padTop, padBottom = band.padBottom;
        const auto kh = static_cast<memory::dim>(step.kernelH);
        const auto kw = static_cast<memory::dim>(step.kernelW);
        const memory::desc srcDesc(
            {n, ic, static_cast<memory::dim>(inRows), static_cast<memory::dim>(step.inputW)}, f32,
            memory::format_tag::nhwc);
        const memory::desc dstDesc(
            {n, oc, static_cast<memory::dim>(outRows), static_cast<memory::dim>(outW)}, f32,
            memory::format_tag::nhwc);
        // The step's kernel is [groups][group out][kh][kw][group in]: oneDNN's gohwi, or ohwi for
        // one group.
        const memory::dims weightDims =
            groups == 1 ? memory::dims {oc, ic, kh, kw} : memory::dims {groups, goc, gic, kh, kw};
        const memory::desc plainWeights(
            weightDims, f32, groups == 1 ? memory::format_tag::ohwi : memory::format_tag::gohwi);
        const memory::desc anyWeights(weightDims, f32, memory::format_tag::any);
        const memory::desc biasDesc({oc}, f32, memory::format_tag::x);
        const memory::dims strides {step.strideH, step.strideW};
        const memory::dims dilation {step.dilationH - 1, step.dilationW - 1};
        const memory::dims padL {padTop, step.padLeft}, padR {padBottom, step.padRight};
        Part part;
        part.stream = dnnl::stream(engine_);
        if (sliced) {
            part.pixels = static_cast<size_t>(n) * outRows * outW;
            part.slice.resize(part.pixels * static_cast<size_t>(oc));
            part.sliceOut = out;
            part.firstChannel = firstChannel;
            part.sliceChannels = static_cast<size_t>(oc);
            part.channels = step.groupOutputChannels;
            part.sliceResidual = step.residual;
        }
        float* dst = sliced ? part.slice.data() : out;
        const GeluForm gelu = siluApart(step) ? GeluForm::None : step.gelu;
        if (gelu != step.gelu) {
            part.silu = dst;
            part.siluCount = dstDesc.get_size() / sizeof(float);
        }
        if (winogradFits(step, band.images * outRows * outW, sliced) &&
            addWinogradPart(step, part, srcDesc, dstDesc, in, dst, plainWeights, biasDesc, padL,
                padR, firstChannel, gelu))
            return;
        const auto desc = step.bias.empty()
            ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                  dnnl::algorithm::convolution_direct, srcDesc, anyWeights, dstDesc, strides,
                  dilation, padL, padR)
            : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                  dnnl::algorithm::convolution_direct, srcDesc, anyWeights, biasDesc, dstDesc,
                  strides, dilation, padL, padR);
        const dnnl::convolution_forward::primitive_desc pd(
            desc, attributes(step.range, step.residual, gelu), engine_);
        part.primitive = dnnl::convolution_forward(pd);
        part.src = memory(srcDesc, engine_, in);
        part.dst = memory(dstDesc, engine_, dst);
        const size_t weightsPerChannel = static_cast<size_t>(ic * kh * kw);
        part.weights = weightsFor(step.packedMutex, step.packed, plainWeights,
            step.kernel.data() + firstChannel * weightsPerChannel, pd.weights_desc());
        addPart(std::move(part), pd.scratchpad_desc(),
            step.bias.empty() ? nullptr : step.bias.data() + firstChannel, biasDesc);
    }

    // One band of an int8 convolution: s8 pixels with the input's zero point, s8 weights of one
    // scale per output channel (oneDNN re-lays them, on CPUs without VNNI halved to 7 bits so
    // that its 16-bit pair sums cannot saturate), s32 bias, s8 output with the output's zero
    // point; the residual's sum and the clamp as post-ops, in units of the output's scale.
    void addQConvPart(const QConvStep& step, const ConvGeometry& g, const Plan& plan, int8_t* in,
        int8_t* out, const int8_t* residual, const ConvBand& band)
    {
        const auto s8 = memory::data_type::s8;
        const auto groups = static_cast<memory::dim>(g.groups);
        const auto gic = static_cast<memory::dim>(g.groupInputChannels);
        const auto goc = static_cast<memory::dim>(g.groupOutputChannels);
        const auto ic = groups * gic, oc = groups * goc;
        const auto n = static_cast<memory::dim>(band.images);
        const auto kh = static_cast<memory::dim>(g.kernelH);
        const auto kw = static_cast<memory::dim>(g.kernelW);
        const memory::desc srcDesc(
            {n, ic, static_cast<memory::dim>(band.inRows), static_cast<memory::dim>(g.inputW)}, s8,
            memory::format_tag::nhwc);
        const memory::desc dstDesc(
            {n, oc, static_cast<memory::dim>(band.outRows), static_cast<memory::dim>(band.outW)},
            s8, memory::format_tag::nhwc);
        const memory::dims weightDims =
            groups == 1 ? memory::dims {oc, ic, kh, kw} : memory::dims {groups, goc, gic, kh, kw};
        const memory::desc plainWeights(
            weightDims, s8, groups == 1 ? memory::format_tag::ohwi : memory::format_tag::gohwi);
        const memory::desc anyWeights(weightDims, s8, memory::format_tag::any);
        const memory::desc biasDesc({oc}, memory::data_type::s32, memory::format_tag::x);
        const memory::dims strides {g.strideH, g.strideW};
        const memory::dims dilation {g.dilationH - 1, g.dilationW - 1};
        const memory::dims padL {band.padTop, g.padLeft}, padR {band.padBottom, g.padRight};
        const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
            dnnl::algorithm::convolution_direct, srcDesc, anyWeights, biasDesc, dstDesc, strides,
            dilation, padL, padR);

        const Value& x = plan.rootOf(step.inputs[0]);
        const Value& y = plan.rootOf(step.output);
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        std::vector<float> scales(step.kernelScale.size());
        for (size_t c = 0; c < scales.size(); ++c)
            scales[c] = static_cast<float>(double(x.scale) * step.kernelScale[c] / y.scale);
        attr.set_output_scales(1 << 1, scales); // per channel: axis 1 of the output's dims
        if (x.zeroPoint != 0)
            attr.set_zero_points(DNNL_ARG_SRC, 0, {x.zeroPoint});
        if (y.zeroPoint != 0)
            attr.set_zero_points(DNNL_ARG_DST, 0, {y.zeroPoint});
        dnnl::post_ops ops;
        if (step.residual) {
            const Value& r = plan.rootOf(step.inputs[1]);
            ops.append_sum(r.scale / y.scale, r.zeroPoint);
        }
        // The clamp, before the output's zero point is added.
        if (step.outputMin > -128 || step.outputMax < 127)
            ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip,
                static_cast<float>(step.outputMin - y.zeroPoint),
                static_cast<float>(step.outputMax - y.zeroPoint));
        if (ops.len() > 0)
            attr.set_post_ops(ops);
        const dnnl::convolution_forward::primitive_desc pd(desc, attr, engine_);

        Part part;
        part.stream = dnnl::stream(engine_);
        part.primitive = dnnl::convolution_forward(pd);
        part.src = memory(srcDesc, engine_, in);
        part.dst = memory(dstDesc, engine_, out);
        part.weights = weightsFor(
            step.packedMutex, step.packed, plainWeights, step.kernel.data(), pd.weights_desc());
        if (residual) {
            part.residual = residual;
            part.residualTo = out;
            part.residualBytes =
                static_cast<size_t>(n) * band.outRows * band.outW * static_cast<size_t>(oc);
        }
        part.scratchpad = memory(pd.scratchpad_desc(), engine_, DNNL_MEMORY_NONE);
        part.scratchpadBytes = pd.scratchpad_desc().get_size();
        part.bias = memory(biasDesc, engine_, const_cast<int32_t*>(step.bias.data()));
        part.args = {{DNNL_ARG_SRC, part.src.get()}, {DNNL_ARG_WEIGHTS, part.weights.get()},
            {DNNL_ARG_DST, part.dst.get()}, {DNNL_ARG_SCRATCHPAD, part.scratchpad.get()},
            {DNNL_ARG_BIAS, part.bias.get()}};
        parts_.push_back(std::move(part));
        status_.push_back(dnnl_success);
    }

    // A band of rows as a 1x1 convolution over a column of `rows` pixels: oneDNN's jit 1x1
    // convolution (blocked weights) ran these products at 70-78 GFLOP/s a core here, its inner
    // product (a plain sgemm) at 55-60.
    void addFullyConnectedPart(
        const FullyConnectedStep& step, const float* in, float* out, size_t rows)
    {
        const auto f32 = memory::data_type::f32;
        const auto ic = static_cast<memory::dim>(step.inputChannels);
        const auto oc = static_cast<memory::dim>(step.outputChannels);
        const auto n = static_cast<memory::dim>(rows);
        const memory::desc srcDesc({1, ic, n, 1}, f32, memory::format_tag::nhwc);
        const memory::desc dstDesc({1, oc, n, 1}, f32, memory::format_tag::nhwc);
        const memory::desc anyWeights({oc, ic, 1, 1}, f32, memory::format_tag::any);
        const memory::desc biasDesc({oc}, f32, memory::format_tag::x);
        const memory::dims ones {1, 1}, zeros {0, 0};
        const auto desc = step.bias.empty()
            ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                  dnnl::algorithm::convolution_direct, srcDesc, anyWeights, dstDesc, ones, zeros,
                  zeros, zeros)
            : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                  dnnl::algorithm::convolution_direct, srcDesc, anyWeights, biasDesc, dstDesc, ones,
                  zeros, zeros, zeros);
        const dnnl::convolution_forward::primitive_desc pd(
            desc, attributes(step.range, false, step.gelu), engine_);
        Part part;
        part.stream = dnnl::stream(engine_);
        part.primitive = dnnl::convolution_forward(pd);
        part.src = memory(srcDesc, engine_, const_cast<float*>(in));
        part.dst = memory(dstDesc, engine_, out);
        // The step's kernel is [out][in]: oneDNN's oihw with unit height and width.
        part.weights = weightsFor(step.packedMutex, step.packed,
            {{oc, ic, 1, 1}, f32, memory::format_tag::oihw}, step.kernel.data(), pd.weights_desc());
        addPart(std::move(part), pd.scratchpad_desc(),
            step.bias.empty() ? nullptr : step.bias.data(), biasDesc);
    }

    // Scratchpad and argument list of a part (bias: none when null), then the part itself.
    void addPart(
        Part part, const memory::desc& scratchpad, const float* bias, const memory::desc& biasDesc)
    {
        part.scratchpad = memory(scratchpad, engine_, DNNL_MEMORY_NONE);
        part.scratchpadBytes = scratchpad.get_size();
        part.args = {{DNNL_ARG_SRC, part.src.get()}, {DNNL_ARG_WEIGHTS, part.weights.get()},
            {DNNL_ARG_DST, part.dst.get()}, {DNNL_ARG_SCRATCHPAD, part.scratchpad.get()}};
        if (bias) {
            part.bias = memory(biasDesc, engine_, const_cast<float*>(bias));
            part.args.push_back({DNNL_ARG_BIAS, part.bias.get()});
        }
        parts_.push_back(std::move(part));
        status_.push_back(dnnl_success);
    }

    // An elementwise function on a step's output, as oneDNN names it.
    struct Eltwise {
        dnnl::algorithm alg;
        float alpha, beta;
    };

    // The activation (GELU, SiLU, HardSwish, Sigmoid), then the output clamp.
    static std::vector<Eltwise> activations(const OutputRange& range, GeluForm gelu)
    {
        std::vector<Eltwise> acts;
        // swish is x sigmoid(alpha x); hardswish is x relu6(x + 3) / 6 (no parameter in 2.6).
        if (gelu == GeluForm::Erf)
            acts.push_back({dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f});
        else if (gelu == GeluForm::Tanh)
            acts.push_back({dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f});
        else if (gelu == GeluForm::Swish)
            acts.push_back({dnnl::algorithm::eltwise_swish, 1.0f, 0.0f});
        else if (gelu == GeluForm::HardSwish)
            acts.push_back({dnnl::algorithm::eltwise_hardswish, 0.0f, 0.0f});
        else if (gelu == GeluForm::Sigmoid)
            acts.push_back({dnnl::algorithm::eltwise_logistic, 0.0f, 0.0f});
        if (range.min > -std::numeric_limits<float>::infinity() ||
            range.max < std::numeric_limits<float>::infinity()) {
            if (range.min == 0.0f && range.max == std::numeric_limits<float>::infinity())
                acts.push_back({dnnl::algorithm::eltwise_relu, 0.0f, 0.0f});
            else
                acts.push_back({dnnl::algorithm::eltwise_clip, range.min, range.max});
        }
        return acts;
    }

    // A user scratchpad (allocated here, not per call), the residual sum, then `acts`.
    static dnnl::primitive_attr attributes(bool residual, const std::vector<Eltwise>& acts)
    {
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        dnnl::post_ops ops;
        if (residual)
            ops.append_sum(1.0f); // the output buffer holds the residual (graph_compiler.cpp)
        for (const Eltwise& e : acts)
            ops.append_eltwise(1.0f, e.alg, e.alpha, e.beta);
        if (ops.len() > 0)
            attr.set_post_ops(ops);
        return attr;
    }

    static dnnl::primitive_attr attributes(const OutputRange& range, bool residual, GeluForm gelu)
    {
        return attributes(residual, activations(range, gelu));
    }

    // The weights re-laid for a primitive's kernel, once per layout the parts ask for, shared by
    // every session of the engine (the step keeps them; all sessions use one oneDNN engine).
    // They are found again by `key` (the step's weights they came from; `data` by default).
    memory weightsFor(std::mutex& mutex, std::vector<std::shared_ptr<void>>& kept,
        const memory::desc& plainDesc, const void* data, const memory::desc& wanted,
        const void* key = nullptr)
    {
        if (!key)
            key = data;
        std::lock_guard<std::mutex> lock(mutex);
        for (const auto& k : kept) {
            const auto& w = *static_cast<const PackedWeights*>(k.get());
            if (w.source == key && w.packed.get_desc() == wanted)
                return w.packed;
        }
        memory plain(plainDesc, engine_, const_cast<void*>(data));
        memory packed(wanted, engine_);
        omp_set_num_threads(1);
        dnnl::stream stream(engine_);
        dnnl::reorder(plain, packed).execute(stream, plain, packed);
        stream.wait();
        kept.push_back(std::make_shared<PackedWeights>(PackedWeights {key, packed}));
        return packed;
    }

    dnnl::engine engine_;
    std::string node_;
    std::vector<Part> parts_;
    std::vector<dnnl_status_t> status_;
};

// One oneDNN CPU engine for the process, so that sessions can share re-laid weights.
const dnnl::engine& sharedEngine()
{
    static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

} // namespace

bool oneDnnAvailable()
{
    try {
        (void)sharedEngine();
        return true;
    } catch (const dnnl::error&) {
        return false;
    }
}

bool oneDnnHasVnni()
{
    // The ISA values are nested bit sets: 0x40 is in every AVX-512 VNNI level, 0x400 in AVX-VNNI.
    const unsigned isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
    return (isa & (dnnl_cpu_isa_avx512_core_vnni & ~dnnl_cpu_isa_avx512_core)) != 0 ||
        (isa & (dnnl_cpu_isa_avx2_vnni & ~dnnl_cpu_isa_avx2)) != 0;
}

bool oneDnnHasAvx512()
{
    // avx512_core's bits are in every later level (VNNI, BF16, AMX).
    const unsigned isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
    return (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
}

namespace {

// A step's oneDNN exec, built by `build` (one of OneDnnExec's), or why oneDNN cannot run it.
template <typename Step, typename Build>
Expected<std::unique_ptr<StepExec>> instantiateOneDnn(const Step& step, Build build)
{
    try {
        auto exec = std::make_unique<OneDnnExec>(sharedEngine());
        Status s = build(*exec);
        if (!s.ok())
            return s;
        return std::unique_ptr<StepExec>(std::move(exec));
    } catch (const dnnl::error& e) {
        return Status::unsupported(step.node + ": oneDNN: " + e.what());
    }
}

} // namespace

Expected<std::unique_ptr<StepExec>> instantiateOneDnnConv(
    const ConvStep& step, float* arena, const Plan& plan, pthreadpool_t pool)
{
    return instantiateOneDnn(
        step, [&](OneDnnExec& exec) { return exec.buildConv(step, arena, plan, pool); });
}

Expected<std::unique_ptr<StepExec>> instantiateOneDnnQConv(
    const QConvStep& step, float* arena, const Plan& plan, pthreadpool_t pool)
{
    return instantiateOneDnn(
        step, [&](OneDnnExec& exec) { return exec.buildQConv(step, arena, plan, pool); });
}

Expected<std::unique_ptr<StepExec>> instantiateOneDnnFullyConnected(
    const FullyConnectedStep& step, float* arena, const Plan& plan, pthreadpool_t pool)
{
    return instantiateOneDnn(
        step, [&](OneDnnExec& exec) { return exec.buildFullyConnected(step, arena, plan, pool); });
}

} // namespace xnnplan
} // namespace jetagent
