// Image classification: preprocess, infer through the engine interface, softmax, smoothing, top-k.
#include "classification_task.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "scores.h"

namespace jetagent {

Expected<std::vector<std::string>> loadLabels(const std::string& path)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return Status::notFound("labels file '" + path + "' does not exist");
    std::ifstream in(path);
    if (!in)
        return Status::notFound("labels file '" + path + "' cannot be opened");
    std::vector<std::string> labels;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        labels.push_back(line);
    }
    while (!labels.empty() && labels.back().find_first_not_of(" \t") == std::string::npos)
        labels.pop_back();
    if (labels.empty())
        return Status::invalid("labels file '" + path + "' is empty");
    return labels;
}

Expected<std::unique_ptr<ClassificationTask>> ClassificationTask::create(
    const AgentConfig& agent, size_t index, const SourceInfo& source)
{
    const TaskConfig& config = agent.tasks.at(index);
    const std::string key = "tasks[" + std::to_string(index) + "]";
    auto log = logger("engine");

    std::vector<std::string> labels;
    if (!config.labels.empty()) {
        auto loaded = loadLabels(config.labels);
        if (!loaded)
            return loaded.status().withContext(agent.where(key + ".labels"));
        labels = std::move(loaded).value();
    }

    auto model = loadModelFile(config.model);
    if (!model)
        return model.status().withContext(agent.where(key + ".model"));
    auto engine = buildEngine(model.value(), config.engine);
    if (!engine)
        return engine.status().withContext(agent.where(key + ".engine"));

    // The model must take one image batch, N x 3 x H x W float.
    const auto& inputs = engine.value()->inputs();
    if (inputs.size() != 1)
        return Status::invalid(agent.where(key + ".model") +
            ": a classification model takes one input; '" + config.model + "' has " +
            std::to_string(inputs.size()));
    const TensorInfo& input = inputs[0];
    if (input.dims.size() != 4 || (input.dims[1] != 3 && input.dims[1] != -1))
        return Status::invalid(agent.where(key + ".model") + ": input '" + input.name + "' of '" +
            config.model + "' is " + input.shapeString() +
            "; a classification model takes N x 3 x H x W");
    if (input.type != DataType::Float32)
        return Status::invalid(agent.where(key + ".model") + ": input '" + input.name + "' is " +
            dataTypeName(input.type) + "; only float32 inputs are supported");

    int modelBatch = static_cast<int>(input.dims[0]);
    if (modelBatch > 0 && modelBatch != config.engine.batch)
        return Status::invalid(agent.where(key + ".engine.batch") +
            ": the model's batch dimension is fixed at " + std::to_string(modelBatch) +
            ", but batch is " + std::to_string(config.engine.batch));

    PreprocessConfig pre = config.preprocess;
    const int64_t modelH = input.dims[2], modelW = input.dims[3];
    if (pre.cropWidth == 0) {
        if (modelH <= 0 || modelW <= 0)
            return Status::invalid(agent.where(key + ".preprocess.crop") +
                ": the model's input size is not fixed (" + input.shapeString() +
                "); set crop to the size it expects");
        pre.cropWidth = static_cast<int>(modelW);
        pre.cropHeight = static_cast<int>(modelH);
    } else if ((modelH > 0 && modelH != pre.cropHeight) ||
        (modelW > 0 && modelW != pre.cropWidth)) {
        return Status::invalid(agent.where(key + ".preprocess.crop") + ": crop " +
            std::to_string(pre.cropWidth) + "x" + std::to_string(pre.cropHeight) +
            " does not match the model's input " + input.shapeString() +
            " (crop is width x height)");
    }
    const int largest = std::max(pre.cropWidth, pre.cropHeight);
    if (pre.resizeSize == 0)
        pre.resizeSize = largest * 256 / 224;
    else if (pre.resize == ResizeMode::ShorterSide && pre.resizeSize < largest)
        return Status::invalid(agent.where(key + ".preprocess.resize_size") + ": " +
            std::to_string(pre.resizeSize) + " is smaller than the crop (" +
            std::to_string(largest) + "); the crop must fit");

    std::unique_ptr<ClassificationTask> task(new ClassificationTask(config, pre));
    task->engine_ = std::move(engine).value();
    task->modelBatch_ = modelBatch;

    // Classes, when the model states them: every output dimension after the batch.
    const auto& outputs = task->engine_->outputs();
    if (!outputs.empty() && outputs[0].dims.size() >= 2) {
        int64_t classes = 1;
        for (size_t d = 1; d < outputs[0].dims.size(); ++d)
            classes = outputs[0].dims[d] > 0 && classes > 0 ? classes * outputs[0].dims[d] : -1;
        if (classes > 0)
            task->classes_ = static_cast<size_t>(classes);
    }
    if (!labels.empty() && task->classes_ > 0 && labels.size() != task->classes_)
        return Status::invalid(agent.where(key + ".labels") + ": '" + config.labels + "' has " +
            std::to_string(labels.size()) + " labels, but the model has " +
            std::to_string(task->classes_) + " outputs");
    if (task->classes_ == 0 && labels.empty())
        return Status::invalid(agent.where(key + ".labels") +
            ": the model does not state how many classes it has (" +
            (outputs.empty() ? std::string("no output") : outputs[0].shapeString()) +
            "); give a labels file with one line per class");
    if (task->classes_ == 0)
        task->classes_ = labels.size(); // checked against the first output
    if (labels.empty())
        for (size_t i = 0; i < task->classes_; ++i)
            labels.push_back("class" + std::to_string(i));
    task->labels_ = std::move(labels);

    if (config.postprocess.topK > static_cast<int>(task->labels_.size()) && !task->labels_.empty())
        return Status::invalid(agent.where(key + ".postprocess.top_k") + ": top_k " +
            std::to_string(config.postprocess.topK) + " exceeds the model's " +
            std::to_string(task->labels_.size()) + " classes");

    // Match the source's class names to labels, so frames with a known class are scored.
    for (const auto& cls : source.classNames) {
        auto it = std::find(task->labels_.begin(), task->labels_.end(), cls);
        task->truthToLabel_.push_back(
            it == task->labels_.end() ? -1 : static_cast<int>(it - task->labels_.begin()));
        if (it == task->labels_.end() && !config.labels.empty())
            log->warn("task {}: the source's class '{}' is not among the labels; its frames are "
                      "not scored",
                config.name, cls);
    }

    auto session = task->engine_->createSession();
    if (!session)
        return session.status().withContext(agent.where(key + ".model"));
    task->session_ = std::move(session).value();

    const size_t rows = static_cast<size_t>(modelBatch > 0 ? modelBatch : config.engine.batch);
    task->input_.assign(rows * task->preprocessor_.outputElements(), 0.0f);
    task->probabilities_.assign(task->classes_, 0.0f);
    task->smoothed_.assign(task->classes_, 0.0f);
    return task;
}

nlohmann::json ClassificationTask::describe() const
{
    const PreprocessConfig& p = preprocessor_.config();
    static const char* const kInterpolation[] = {"nearest", "linear", "area", "cubic"};
    return {{"labels", config_.labels}, {"classes", labels_.size()},
        {"preprocess",
            {{"resize", p.resize == ResizeMode::ShorterSide ? "shorter_side" : "stretch"},
                {"resize_size",
                    p.resize == ResizeMode::ShorterSide ? nlohmann::json(p.resizeSize)
                                                        : nlohmann::json(nullptr)},
                {"crop", {p.cropWidth, p.cropHeight}},
                {"interpolation", kInterpolation[static_cast<int>(p.interpolation)]},
                {"color", p.color == ColorOrder::Rgb ? "rgb" : "bgr"}, {"divisor", p.divisor},
                {"mean", p.mean}, {"std", p.std}}},
        {"postprocess",
            {{"output",
                 config_.postprocess.output == OutputKind::Logits ? "logits" : "probabilities"},
                {"top_k", config_.postprocess.topK},
                {"smoothing", config_.postprocess.smoothing}}}};
}

Status ClassificationTask::checkOutput(const ConstTensorView& output, size_t rows)
{
    if (rows == 0 || output.data == nullptr || output.shape.rank < 1 ||
        output.shape[0] != static_cast<int64_t>(rows))
        return Status::runtime("model '" + config_.model + "' returned output " +
            output.shape.toString() + " for a batch of " + std::to_string(rows));
    const size_t perRow = static_cast<size_t>(output.shape.elementCount()) / rows;
    if (perRow != classes_)
        return Status::runtime("model '" + config_.model + "' returned " + std::to_string(perRow) +
            " scores per frame; its labels expect " + std::to_string(classes_));
    return Status();
}

Status ClassificationTask::process(
    const Frame* const* frames, size_t count, int64_t dequeuedNs, FrameRecord* records)
{
    const size_t elements = preprocessor_.outputElements();
    for (size_t i = 0; i < count; ++i)
        preprocessor_.run(frames[i]->image, input_.data() + i * elements);
    // A model with a fixed batch runs full batches; the rows no frame filled are left as they were.
    const size_t rows = modelBatch_ > 0 ? static_cast<size_t>(modelBatch_) : count;
    const int64_t preprocessedNs = monotonicNs();

    TensorView view;
    view.data = input_.data();
    view.shape = TensorShape {static_cast<int64_t>(rows), 3, preprocessor_.config().cropHeight,
        preprocessor_.config().cropWidth};
    RunTiming timing;
    Status status = session_->run(&view, 1, &timing);
    const int64_t inferredNs = monotonicNs();
    const ConstTensorView output = session_->output(0);
    if (status)
        status = checkOutput(output, rows);

    const bool cold = firstRun_;
    firstRun_ = false;
    const int k = config_.postprocess.topK;
    for (size_t i = 0; i < count; ++i) {
        FrameRecord& r = records[i];
        r.frameId = frames[i]->sequence;
        r.capturedNs = frames[i]->captureNs;
        r.dequeuedNs = dequeuedNs;
        r.preprocessedNs = preprocessedNs;
        r.inferredNs = inferredNs;
        r.computeNs = timing.computeNs;
        r.batch = static_cast<int32_t>(count);
        const int truth = frames[i]->truthClass;
        r.truth = truth >= 0 && static_cast<size_t>(truth) < truthToLabel_.size()
            ? truthToLabel_[static_cast<size_t>(truth)]
            : -1;
        r.ok = status.ok();
        r.coldStart = cold; // every frame of the first inference shares its warm-up
        r.topK = 0;
        if (!status)
            continue;
        const float* row = output.data + i * classes_;
        if (config_.postprocess.output == OutputKind::Logits)
            softmax(row, probabilities_.data(), classes_);
        else
            std::copy(row, row + classes_, probabilities_.begin());
        smoothScores(probabilities_.data(), smoothed_.data(), classes_,
            config_.postprocess.smoothing, firstScores_);
        r.topK = k;
        topK(smoothed_.data(), classes_, static_cast<size_t>(k), r.labels.data());
        for (int j = 0; j < k; ++j)
            r.scores[static_cast<size_t>(j)] =
                smoothed_[static_cast<size_t>(r.labels[static_cast<size_t>(j)])];
        firstScores_ = false;
    }
    const int64_t doneNs = monotonicNs();
    for (size_t i = 0; i < count; ++i)
        records[i].doneNs = doneNs;
    return status;
}

} // namespace jetagent
