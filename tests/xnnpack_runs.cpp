// Small ONNX graphs run on the xnnpack backend, and the double-precision formulas the engine
// tests hold them to (xnnpack_runs.h).
#include "xnnpack_runs.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "jetagent/engines/model_file.h"

namespace jetagent::test {

bool xnnpackBuilt()
{
    const auto backends = listBackends();
    return std::any_of(backends.begin(), backends.end(),
        [](const BackendInfo& b) { return b.name == "xnnpack" && b.available; });
}

// Runs `g` on the xnnpack backend (`options`, batch and backend set here) with `input` for its
// only input of shape `dims`; its outputs, and the plan's steps where `steps` is given.
testing::AssertionResult runXnnpackWith(EngineOptions options, const GraphBuilder& g,
    std::vector<float> input, const std::vector<int64_t>& dims,
    std::vector<std::vector<float>>* outputs, std::vector<EngineStep>* steps)
{
    auto parsed = parseModelBytes(g.bytes(), "ops.onnx");
    if (!parsed)
        return testing::AssertionFailure() << parsed.status().message();
    options.backend = "xnnpack";
    options.batch = static_cast<int>(dims[0]);
    auto engine = buildEngine(parsed.value(), options);
    if (!engine)
        return testing::AssertionFailure() << engine.status().message();
    if (steps)
        *steps = engine.value()->steps();
    auto session = engine.value()->createSession();
    if (!session)
        return testing::AssertionFailure() << session.status().message();
    TensorView view;
    view.data = input.data();
    view.shape.rank = static_cast<int>(dims.size());
    std::copy(dims.begin(), dims.end(), view.shape.dims.begin());
    if (Status s = session.value()->run(&view, 1, nullptr); !s)
        return testing::AssertionFailure() << s.message();
    outputs->clear();
    for (size_t k = 0; k < session.value()->outputCount(); ++k) {
        const ConstTensorView out = session.value()->output(k);
        outputs->emplace_back(out.data, out.data + out.shape.elementCount());
    }
    return testing::AssertionSuccess();
}

// The same with the default options; the operators of the plan's steps where `ops` is given.
testing::AssertionResult runXnnpack(const GraphBuilder& g, std::vector<float> input,
    const std::vector<int64_t>& dims, std::vector<std::vector<float>>* outputs,
    std::vector<std::string>* ops)
{
    std::vector<EngineStep> steps;
    auto result = runXnnpackWith(EngineOptions(), g, std::move(input), dims, outputs, &steps);
    if (ops) {
        ops->clear();
        for (const EngineStep& step : steps)
            ops->push_back(step.op);
    }
    return result;
}

std::vector<float> noise(size_t n, uint32_t seed)
{
    std::vector<float> v(n);
    for (auto& x : v) {
        seed = seed * 1664525u + 1013904223u;
        x = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
    }
    return v;
}

void expectNear(const std::vector<float>& got, const std::vector<double>& want, const char* what)
{
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-5 + 1e-5 * std::fabs(want[i])) << what << " element " << i;
}

// A convolution in double precision over NCHW `x` ([n][c][h][w]) with [m][c][k][k] weights, stride
// 1 and `pad` on every side.
std::vector<double> convolve(const std::vector<double>& x, size_t n, size_t c, size_t h, size_t w,
    const std::vector<float>& weights, size_t m, size_t k, size_t pad)
{
    std::vector<double> y(n * m * h * w, 0.0);
    for (size_t b = 0; b < n; ++b)
        for (size_t o = 0; o < m; ++o)
            for (size_t r = 0; r < h; ++r)
                for (size_t q = 0; q < w; ++q) {
                    double sum = 0.0;
                    for (size_t i = 0; i < c; ++i)
                        for (size_t u = 0; u < k; ++u)
                            for (size_t v = 0; v < k; ++v) {
                                const long rr = long(r + u) - long(pad),
                                           qq = long(q + v) - long(pad);
                                if (rr < 0 || qq < 0 || rr >= long(h) || qq >= long(w))
                                    continue;
                                sum += x[((b * c + i) * h + size_t(rr)) * w + size_t(qq)] *
                                    weights[((o * c + i) * k + u) * k + v];
                            }
                    y[((b * m + o) * h + r) * w + q] = sum;
                }
    return y;
}

// Runs `g` on two threads (the process's pool is sized by its first engine: one run per test) and
// expects `want`; the plan's steps.
void expectOnTwoThreads(const GraphBuilder& g, const std::vector<float>& x,
    const std::vector<int64_t>& dims, const std::vector<double>& want,
    std::vector<EngineStep>* steps)
{
    EngineOptions options;
    options.threads = 2;
    std::vector<std::vector<float>> out;
    ASSERT_TRUE(runXnnpackWith(options, g, x, dims, &out, steps));
    expectNear(out[0], want, "two threads");
}

} // namespace jetagent::test
