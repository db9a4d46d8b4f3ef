// Fuzz target: labels files, as a task reads them (the file against the model's classes and
// top_k, the source's class names matched to it) and writes them (the per-frame CSV and JSON
// Lines, whose every line must still parse).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "fuzz_support.h"
#include "output/frame_log.h"
#include "tasks/image_input.h"
#include "tasks/labels.h"
#include "tasks/preprocess.h"
#include "tasks/scores.h"

namespace {

constexpr size_t kMaxLabelsBytes = 256 * 1024;

using jetagent::fuzz::fail;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace jetagent;
    if (size > kMaxLabelsBytes)
        return -1;
    fuzz::ByteReader in(data, size);
    // The model's output: its class count fixed (1..255) or left open (0).
    const auto classes = static_cast<int64_t>(in.byte());
    const auto topK = static_cast<int>(in.range(1, FrameRecord::kMaxTopK));
    const std::string text = in.rest();

    AgentConfig agent;
    agent.path = "fuzz.yaml";
    TaskConfig task;
    task.name = "fuzz";
    task.labels = fuzz::scratchDirectory() + "/labels.txt";
    task.postprocess.topK = topK;
    agent.tasks.push_back(task);
    fuzz::writeFileOrDie(task.labels, text);

    TensorInfo output;
    output.name = "logits";
    output.type = DataType::Float32;
    output.dims = {-1, classes > 0 ? classes : -1};
    // The source's classes: an image directory whose class folders are the first lines.
    SourceInfo source;
    for (size_t start = 0, n = 0; start < text.size() && n < 4; ++n) {
        const size_t end = std::min(text.find('\n', start), text.size());
        source.classNames.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    auto setup = setupLabels(agent, 0, "tasks[0]", &output, source);
    if (!setup) {
        if (setup.status().message().find("tasks[0].") == std::string::npos)
            fail("a refused labels file must name the key: " + setup.status().message());
        return 0;
    }
    const std::vector<std::string>& labels = setup->labels;
    if (!labels.empty() && labels[0].rfind("\xEF\xBB\xBF", 0) == 0)
        fail("a UTF-8 byte-order mark was taken as part of the first label");
    if (labels.empty() || (classes > 0 && labels.size() != static_cast<size_t>(classes)) ||
        static_cast<size_t>(topK) > labels.size() ||
        setup->truthToLabel.size() != source.classNames.size())
        fail("accepted labels do not fit the model: " + std::to_string(labels.size()));

    // One frame's result through the task's scoring and into both per-frame logs.
    std::vector<float> row(labels.size());
    for (size_t i = 0; i < row.size(); ++i)
        row[i] = static_cast<float>(i % 7);
    std::vector<float> probabilities(labels.size());
    std::vector<float> smoothed(labels.size());
    bool first = true;
    FrameRecord record;
    record.truth = setup->truthToLabel.empty() ? -1 : setup->truthToLabel[0];
    scoreRow(row.data(), row.size(), task.postprocess, probabilities.data(), smoothed.data(), first,
        record);
    TaskLog log(task.name, labels, 4);
    std::string csv;
    std::string json;
    log.formatCsv(record, csv);
    log.formatJson(record, json);
    const auto parsed = nlohmann::json::parse(json, nullptr, false);
    if (parsed.is_discarded())
        fail("a JSON Lines record with these labels does not parse: " + json);
    return 0;
}
