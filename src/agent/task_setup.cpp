// What classification and action tasks share when they are set up from a model and when they turn
// its output into a result.
#include "task_setup.h"

#include <algorithm>
#include <cmath>

#include "classification_task.h"
#include "config.h"
#include "jetagent/base/log.h"
#include "scores.h"

namespace jetagent {

Status resolveImageInput(const AgentConfig& agent, const std::string& key, int64_t modelHeight,
    int64_t modelWidth, const std::string& shape, PreprocessConfig& pre)
{
    if (pre.cropWidth == 0) {
        if (modelHeight <= 0 || modelWidth <= 0)
            return Status::invalid(agent.where(key + ".preprocess.crop") +
                ": the model's input size is not fixed (" + shape +
                "); set crop to the size it expects");
        pre.cropWidth = static_cast<int>(modelWidth);
        pre.cropHeight = static_cast<int>(modelHeight);
    } else if ((modelHeight > 0 && modelHeight != pre.cropHeight) ||
        (modelWidth > 0 && modelWidth != pre.cropWidth)) {
        return Status::invalid(agent.where(key + ".preprocess.crop") + ": crop " +
            std::to_string(pre.cropWidth) + "x" + std::to_string(pre.cropHeight) +
            " does not match the model's input " + shape + " (crop is width x height)");
    }
    const int largest = std::max(pre.cropWidth, pre.cropHeight);
    if (pre.resizeSize == 0)
        pre.resizeSize = largest * 256 / 224;
    else if (pre.resize == ResizeMode::ShorterSide && pre.resizeSize < largest)
        return Status::invalid(agent.where(key + ".preprocess.resize_size") + ": " +
            std::to_string(pre.resizeSize) + " is smaller than the crop (" +
            std::to_string(largest) + "); the crop must fit");
    return Status();
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

Status nonFiniteOutput(const std::string& model, uint64_t frameId)
{
    return Status::runtime("model '" + model + "' returned NaN or infinite scores for frame " +
        std::to_string(frameId) +
        " (a damaged model, or preprocessing settings that overflow); the frame counts as failed");
}

bool scoreRow(const float* row, size_t classes, const PostprocessConfig& post, float* probabilities,
    float* smoothed, bool& first, FrameRecord& record)
{
    if (!std::all_of(row, row + classes, [](float v) { return std::isfinite(v); })) {
        record.ok = false;
        record.failure = FrameFailure::NonFiniteOutput;
        record.topK = 0;
        return false;
    }
    if (post.output == OutputKind::Logits)
        softmax(row, probabilities, classes);
    else
        std::copy(row, row + classes, probabilities);
    smoothScores(probabilities, smoothed, classes, post.smoothing, first);
    first = false;
    const int k = post.topK;
    record.topK = k;
    topK(smoothed, classes, static_cast<size_t>(k), record.labels.data());
    for (int j = 0; j < k; ++j)
        record.scores[static_cast<size_t>(j)] =
            smoothed[static_cast<size_t>(record.labels[static_cast<size_t>(j)])];
    return true;
}

nlohmann::json describePreprocess(const PreprocessConfig& p)
{
    return {{"resize", nameOf(kResizeModeNames, p.resize)},
        {"resize_size",
            p.resize == ResizeMode::ShorterSide ? nlohmann::json(p.resizeSize)
                                                : nlohmann::json(nullptr)},
        {"crop", {p.cropWidth, p.cropHeight}},
        {"interpolation", nameOf(kInterpolationNames, p.interpolation)},
        {"color", nameOf(kColorOrderNames, p.color)}, {"divisor", p.divisor}, {"mean", p.mean},
        {"std", p.std}};
}

nlohmann::json describePostprocess(const PostprocessConfig& p)
{
    return {{"output", nameOf(kOutputKindNames, p.output)}, {"top_k", p.topK},
        {"smoothing", p.smoothing}};
}

} // namespace jetagent
