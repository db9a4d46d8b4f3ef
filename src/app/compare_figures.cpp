// `jetagent compare`'s measures, apart from the run: engine specs, output agreement and latency
// figures, and the command's help.
#include "compare.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "jetagent/base/clock.h"
#include "jetagent/base/text.h"
#include "run/latency_stats.h"

namespace jetagent {

namespace {

constexpr double kNsPerMs = 1e6;

bool parseSwitch(const std::string& value, bool* out)
{
    if (value == "on" || value == "true" || value == "1" || value == "yes") {
        *out = true;
        return true;
    }
    if (value == "off" || value == "false" || value == "0" || value == "no") {
        *out = false;
        return true;
    }
    return false;
}

bool parseCount(const std::string& value, int64_t lowest, int64_t highest, int64_t* out)
{
    if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos ||
        value.size() > 9)
        return false;
    const int64_t v = std::stoll(value);
    if (v < lowest || v > highest)
        return false;
    *out = v;
    return true;
}

Status setSpecKey(
    const std::string& spec, const std::string& key, const std::string& value, EngineOptions& o)
{
    auto bad = [&](const std::string& expected) {
        return Status::invalid(
            "engine spec '" + spec + "': " + key + "=" + value + ": expected " + expected);
    };
    int64_t n = 0;
    constexpr int64_t kMaxBatch = 256;
    constexpr int64_t kMaxThreads = 256;
    constexpr int64_t kMaxWorkspaceMb = int64_t {1} << 20;
    if (key == "fusion")
        return parseSwitch(value, &o.fusion) ? Status() : bad("on or off");
    if (key == "onednn")
        return parseSwitch(value, &o.onednn) ? Status() : bad("on or off");
    if (key == "dla_gpu_fallback")
        return parseSwitch(value, &o.gpuFallback) ? Status() : bad("on or off");
    if (key == "timing_cache")
        return parseSwitch(value, &o.timingCache) ? Status() : bad("on or off");
    if (key == "cuda_graph")
        return parseSwitch(value, &o.cudaGraph) ? Status() : bad("on or off");
    if (key == "io_memory") {
        for (IoMemory m : {IoMemory::Auto, IoMemory::Mapped, IoMemory::Device})
            if (value == ioMemoryName(m)) {
                o.ioMemory = m;
                return Status();
            }
        return bad("auto, mapped or device");
    }
    if (key == "threads") {
        if (!parseCount(value, 0, kMaxThreads, &n))
            return bad("0 (the backend's default) to 256");
        o.threads = static_cast<int>(n);
        return Status();
    }
    if (key == "batch" || key == "batch_min" || key == "batch_max") {
        if (!parseCount(value, key == "batch" ? 1 : 0, kMaxBatch, &n))
            return bad(key == "batch" ? "1 to 256" : "0 (= batch) to 256");
        (key == "batch"              ? o.batch
                : key == "batch_min" ? o.batchMin
                                     : o.batchMax) = static_cast<int>(n);
        return Status();
    }
    if (key == "workspace_mb") {
        if (!parseCount(value, 0, kMaxWorkspaceMb, &n))
            return bad("0 (TensorRT's default) to 1048576");
        o.workspaceMb = n;
        return Status();
    }
    return Status::invalid("engine spec '" + spec + "': unknown key '" + key +
        "' (known: fusion, onednn, threads, batch, batch_min, batch_max, workspace_mb, "
        "dla_gpu_fallback, timing_cache, cuda_graph, io_memory)");
}

} // namespace

Expected<EngineOptions> parseEngineSpec(const std::string& spec, const EngineOptions& base)
{
    const std::vector<std::string> items = splitFields(spec, ',');
    const std::vector<std::string> head = splitFields(items[0], ':');
    if (head[0].empty())
        return Status::invalid("engine spec '" + spec +
            "': no backend (expected BACKEND[:DEVICE[:PRECISION]][,key=value...], such as "
            "opencv:cpu:fp32)");
    if (head.size() > 3)
        return Status::invalid("engine spec '" + spec + "': '" + items[0] +
            "' has more than three parts (BACKEND:DEVICE:PRECISION)");
    EngineOptions o = base;
    if (head[0] != base.backend) {
        // Settings of another backend would be refused by this one; keep only the shared ones.
        const EngineOptions defaults;
        o.batchMin = defaults.batchMin;
        o.batchMax = defaults.batchMax;
        o.workspaceMb = defaults.workspaceMb;
        o.gpuFallback = defaults.gpuFallback;
        o.timingCache = defaults.timingCache;
        o.cudaGraph = defaults.cudaGraph;
        o.ioMemory = defaults.ioMemory;
        o.onednn = defaults.onednn;
        o.device = defaults.device;
        o.precision = defaults.precision;
    }
    o.backend = head[0];
    if (head.size() > 1 && !parseDevice(head[1], &o.device))
        return Status::invalid("engine spec '" + spec + "': unknown device '" + head[1] +
            "' (known: cpu, gpu, dla0, dla1)");
    if (head.size() > 2 && !parsePrecision(head[2], &o.precision))
        return Status::invalid("engine spec '" + spec + "': unknown precision '" + head[2] +
            "' (known: fp32, fp16, int8)");
    for (size_t i = 1; i < items.size(); ++i) {
        const size_t equals = items[i].find('=');
        if (equals == std::string::npos || equals == 0)
            return Status::invalid("engine spec '" + spec + "': '" + items[i] +
                "' is not key=value (such as fusion=off)");
        if (Status s = setSpecKey(spec, items[i].substr(0, equals), items[i].substr(equals + 1), o);
            !s)
            return s;
    }
    if (o.profileMin() > o.batch || o.profileMax() < o.batch)
        return Status::invalid("engine spec '" + spec + "': the batch profile " +
            std::to_string(o.profileMin()) + ".." + std::to_string(o.profileMax()) +
            " does not contain batch " + std::to_string(o.batch));
    return o;
}

double OutputAgreement::relativeError() const
{
    if (nonFinite > 0)
        return std::numeric_limits<double>::infinity();
    if (maxAbsReference == 0)
        return maxAbsError == 0 ? 0.0 : std::numeric_limits<double>::infinity();
    return maxAbsError / maxAbsReference;
}

double OutputAgreement::top1Agreement() const
{
    return inputs == 0 ? 0.0 : static_cast<double>(top1Agreements) / static_cast<double>(inputs);
}

double OutputAgreement::top5Overlap() const
{
    return inputs == 0 ? 0.0 : top5OverlapSum / static_cast<double>(inputs);
}

std::vector<size_t> topK(const float* row, size_t size, size_t k)
{
    std::vector<size_t> order(size);
    std::iota(order.begin(), order.end(), size_t {0});
    k = std::min(k, size);
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
        [row](size_t a, size_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
    order.resize(k);
    return order;
}

void accumulateAgreement(OutputAgreement& a, const float* reference, const float* candidate)
{
    for (size_t i = 0; i < a.classes; ++i) {
        if (!std::isfinite(reference[i]) || !std::isfinite(candidate[i])) {
            ++a.nonFinite;
            continue;
        }
        const double r = reference[i];
        a.maxAbsError = std::max(a.maxAbsError, std::fabs(static_cast<double>(candidate[i]) - r));
        a.maxAbsReference = std::max(a.maxAbsReference, std::fabs(r));
    }
    ++a.inputs;
    if (a.hasTop1() &&
        topK(reference, a.classes, 1).front() == topK(candidate, a.classes, 1).front())
        ++a.top1Agreements;
    if (a.hasTop5()) {
        constexpr size_t kTop = 5;
        const auto ref = topK(reference, a.classes, kTop);
        const auto cand = topK(candidate, a.classes, kTop);
        size_t common = 0;
        for (size_t c : cand)
            common += static_cast<size_t>(std::count(ref.begin(), ref.end(), c));
        a.top5OverlapSum += static_cast<double>(common) / static_cast<double>(kTop);
    }
}

LatencyFigures latencyFigures(std::vector<int64_t> wallNs, const std::vector<RunTiming>& timings)
{
    LatencyFigures f;
    f.runs = wallNs.size();
    if (wallNs.empty())
        return f;
    std::sort(wallNs.begin(), wallNs.end());
    constexpr double kMedian = 50, kP90 = 90, kP99 = 99;
    f.medianMs = nsToMs(nearestRankPercentile(wallNs, kMedian));
    f.p90Ms = nsToMs(nearestRankPercentile(wallNs, kP90));
    f.p99Ms = nsToMs(nearestRankPercentile(wallNs, kP99));
    f.meanMs = static_cast<double>(std::accumulate(wallNs.begin(), wallNs.end(), int64_t {0})) /
        static_cast<double>(wallNs.size()) / kNsPerMs;
    // A part is reported only when every run gave it.
    auto mean = [&timings](int64_t RunTiming::*part) {
        if (timings.empty())
            return -1.0;
        double sum = 0;
        for (const RunTiming& t : timings) {
            if (t.*part < 0)
                return -1.0;
            sum += static_cast<double>(t.*part);
        }
        return sum / static_cast<double>(timings.size()) / kNsPerMs;
    };
    f.hostToDeviceMs = mean(&RunTiming::hostToDeviceNs);
    f.computeMs = mean(&RunTiming::computeNs);
    f.deviceToHostMs = mean(&RunTiming::deviceToHostNs);
    return f;
}

} // namespace jetagent
