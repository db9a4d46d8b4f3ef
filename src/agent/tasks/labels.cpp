// Labels files and their match against the model and the source.
#include "tasks/labels.h"

#include <algorithm>
#include <sstream>

#include "config/config.h"
#include "jetagent/base/log.h"
#include "jetagent/base/regular_file.h"
#include "jetagent/base/text.h"

namespace jetagent {

Expected<std::vector<std::string>> loadLabels(const std::string& path)
{
    // Far more than any model's classes (ImageNet-21k's names take 0.4 MB).
    constexpr uint64_t kMaxLabelsBytes = uint64_t {16} << 20;
    std::string text;
    if (Status s = readRegularFile(path, "labels file '" + path + "'", kMaxLabelsBytes, text); !s)
        return s;
    // Editors on Windows start a UTF-8 file with a byte-order mark; it is no part of the first
    // class's name (nor a second one, which a tool adding a mark to a marked file leaves). A
    // UTF-16 file would give every name with NULs between its letters.
    if (text.rfind("\xFF\xFE", 0) == 0 || text.rfind("\xFE\xFF", 0) == 0)
        return Status::invalid("labels file '" + path +
            "' is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8");
    while (text.rfind("\xEF\xBB\xBF", 0) == 0)
        text.erase(0, 3);
    std::vector<std::string> labels = splitLines(text);
    for (std::string& label : labels)
        if (!label.empty() && label.back() == '\r')
            label.pop_back();
    while (!labels.empty() && labels.back().find_first_not_of(" \t") == std::string::npos)
        labels.pop_back();
    if (labels.empty())
        return Status::invalid("labels file '" + path + "' is empty");
    // Line N names output N: a blank line would be a class with no name (shown as nothing in
    // every output), and a control character (a NUL, an escape) would be written raw into the CSV
    // and the console. Both are refused at their line.
    for (size_t i = 0; i < labels.size(); ++i) {
        const std::string& label = labels[i];
        const std::string where = "labels file '" + path + "', line " + std::to_string(i + 1);
        if (label.find_first_not_of(" \t") == std::string::npos)
            return Status::invalid(where +
                " is blank: each line names the class of that output "
                "(write a name, e.g. 'background')");
        if (std::any_of(label.begin(), label.end(),
                [](unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }))
            return Status::invalid(where +
                " holds a control character (a NUL or an escape, "
                "say): a class name is text");
    }
    return labels;
}

Expected<TaskLabels> setupLabels(const AgentConfig& agent, size_t index, const std::string& key,
    const TensorInfo* output, const SourceInfo& source)
{
    const TaskConfig& config = agent.tasks.at(index);
    TaskLabels result;
    std::vector<std::string>& labels = result.labels;
    if (!config.labels.empty()) {
        auto loaded = loadLabels(config.labels);
        if (!loaded)
            return loaded.status().withContext(agent.where(key + ".labels"));
        labels = std::move(loaded).value();
    }

    // Classes, when the model states them: every output dimension after the batch.
    size_t classes = 0;
    if (output && output->dims.size() >= 2) {
        int64_t n = 1;
        for (size_t d = 1; d < output->dims.size(); ++d)
            n = output->dims[d] > 0 && n > 0 ? n * output->dims[d] : -1;
        if (n > 0)
            classes = static_cast<size_t>(n);
    }
    if (!labels.empty() && classes > 0 && labels.size() != classes)
        return Status::invalid(agent.where(key + ".labels") + ": '" + config.labels + "' has " +
            std::to_string(labels.size()) + " labels, but the model has " +
            std::to_string(classes) + " outputs");
    if (classes == 0 && labels.empty())
        return Status::invalid(agent.where(key + ".labels") +
            ": the model does not state how many classes it has (" +
            (output ? output->shapeString() : std::string("no output")) +
            "); give a labels file with one line per class");
    if (labels.empty())
        for (size_t i = 0; i < classes; ++i)
            labels.push_back("class" + std::to_string(i));

    if (config.postprocess.topK > static_cast<int>(labels.size()))
        return Status::invalid(agent.where(key + ".postprocess.top_k") + ": top_k " +
            std::to_string(config.postprocess.topK) + " exceeds the model's " +
            std::to_string(labels.size()) + " classes");

    // Match the source's class names to labels, so frames with a known class are scored.
    for (const auto& cls : source.classNames) {
        auto it = std::find(labels.begin(), labels.end(), cls);
        result.truthToLabel.push_back(
            it == labels.end() ? -1 : static_cast<int>(it - labels.begin()));
        if (it == labels.end() && !config.labels.empty())
            logger("engine")->warn(
                "task {}: the source's class '{}' is not among the labels; its frames are not "
                "scored",
                config.name, cls);
    }
    return result;
}

} // namespace jetagent
