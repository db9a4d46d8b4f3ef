// Fuzz target: the agent's YAML config, as `jetagent run --config` loads it (text to AgentConfig,
// every key checked), and what the loaded config is asked for afterwards (where a key came from,
// the section texts a reload compares). Anchors and aliases are refused in one pass (a nest of them
// took exponential time); dictionaries/config.dict gives the fuzzer their tokens.
#include <cstdio>
#include <cstdlib>

#include "config/config.h"
#include "fuzz_support.h"

namespace {

// Configs are a few kilobytes; longer inputs only slow the fuzzer down.
constexpr size_t kMaxConfigBytes = 64 * 1024;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace jetagent;
    if (size > kMaxConfigBytes)
        return -1;
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto parsed = parseConfig(text, "fuzz.yaml", "/nonexistent/config-dir");
    if (!parsed) {
        if (parsed.status().message().empty()) {
            std::fprintf(stderr, "a rejected config must say why\n");
            std::abort();
        }
        return 0;
    }
    const AgentConfig& config = parsed.value();
    // A rate or interval is 0 (its own meaning) or large enough to act on: a positive value
    // that rounds to an infinite period or to 0 ns must have been refused.
    const auto usable = [](double v, double lo) { return v == 0.0 || v >= lo; };
    if (!usable(config.source().fps, 0.01) || !usable(config.display.fps, 0.01) ||
        !usable(config.run.durationS, 0.001) || !usable(config.logging.statusIntervalS, 0.1) ||
        !(config.power.railHz >= 0.1) || !(config.power.stateHz >= 0.01)) {
        std::fprintf(stderr, "a rate or interval too small to act on was accepted\n");
        std::abort();
    }
    for (const TaskConfig& task : config.tasks)
        if (!usable(task.deadlineMs, 0.001)) {
            std::fprintf(stderr, "deadline_ms %g was accepted\n", task.deadlineMs);
            std::abort();
        }
    for (const auto& [key, line] : config.lines)
        if (line < 1 || config.where(key).empty()) {
            std::fprintf(stderr, "key %s: line %d\n", key.c_str(), line);
            std::abort();
        }
    // A reload of the same text must see no section changed.
    auto again = parseConfig(text, "fuzz.yaml", "/nonexistent/config-dir");
    if (!again || again->sections != config.sections) {
        std::fprintf(stderr, "the same config parsed twice gives different sections\n");
        std::abort();
    }
    return 0;
}
