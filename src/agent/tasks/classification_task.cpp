// Image classification: preprocess, infer through the engine interface, softmax, smoothing, top-k.
#include "tasks/classification_task.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "config/config.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/base/regular_file.h"
#include "jetagent/base/text.h"
#include "tasks/calibration.h"
#include "tasks/image_input.h"
#include "tasks/labels.h"
#include "tasks/scores.h"

namespace jetagent {

Expected<std::unique_ptr<ClassificationTask>> ClassificationTask::create(
    const AgentConfig& agent, size_t index, const SourceInfo& source)
{
    const TaskConfig& config = agent.tasks.at(index);
    const std::string key = "tasks[" + std::to_string(index) + "]";

    auto model = loadModelFile(config.model);
    if (!model)
        return model.status().withContext(agent.where(key + ".model"));

    // The model must take one image batch, N x 3 x H x W float. Checked on the model's declared
    // input before the build, because int8 calibration needs the resolved preprocessing while the
    // engine builds, and again on the engine's.
    auto checkInput = [&](const std::vector<TensorInfo>& inputs) -> Status {
        if (inputs.size() != 1)
            return Status::invalid(agent.where(key + ".model") +
                ": a classification model takes one input; '" + config.model + "' has " +
                std::to_string(inputs.size()));
        const TensorInfo& input = inputs[0];
        if (input.dims.size() != 4 || (input.dims[1] != 3 && input.dims[1] != -1))
            return Status::invalid(agent.where(key + ".model") + ": input '" + input.name +
                "' of '" + config.model + "' is " + input.shapeString() +
                "; a classification model takes N x 3 x H x W" +
                (input.dims.size() == 5 ? " (a video model? use type: action)" : ""));
        if (input.type != DataType::Float32)
            return Status::invalid(agent.where(key + ".model") + ": input '" + input.name +
                "' is " + dataTypeName(input.type) + "; only float32 inputs are supported");
        return Status();
    };
    if (Status s = checkInput(model.value()->inputs); !s)
        return s;
    const TensorInfo& declared = model.value()->inputs[0];
    PreprocessConfig pre = config.preprocess;
    if (Status s = resolveImageInput(
            agent, key, declared.dims[2], declared.dims[3], declared.shapeString(), pre);
        !s)
        return s;

    EngineOptions options = config.engine;
    if (!config.calibration.source.empty()) {
        if (options.precision == Precision::Int8) {
            auto calibration =
                makeCalibrationData(config.calibration, pre, [&](const std::string& k) {
                    return agent.where(key + ".engine.calibration." + k);
                });
            if (!calibration)
                return calibration.status();
            logger("engine")->info(
                "task {}: int8 calibration samples: {} (read where no calibration is "
                "cached)",
                config.name, calibration.value()->description());
            options.calibration = std::move(calibration).value();
        } else {
            // Kept in the file so that switching precision back and forth needs no other edit.
            logger("engine")->warn("{}: ignored; precision is {}, calibration is for int8",
                agent.where(key + ".engine.calibration"), precisionName(options.precision));
        }
    }
    auto engine = buildEngine(model.value(), options);
    if (!engine)
        return engine.status().withContext(agent.where(key + ".engine"));

    const auto& inputs = engine.value()->inputs();
    if (Status s = checkInput(inputs); !s)
        return s;
    const TensorInfo& input = inputs[0];

    int modelBatch = static_cast<int>(input.dims[0]);
    if (modelBatch > 0 && modelBatch != config.engine.batch)
        return Status::invalid(agent.where(key + ".engine.batch") +
            ": the model's batch dimension is fixed at " + std::to_string(modelBatch) +
            ", but batch is " + std::to_string(config.engine.batch));

    // The engine's input as the model's: the preprocessing resolved above must still fit it.
    if (Status s =
            resolveImageInput(agent, key, input.dims[2], input.dims[3], input.shapeString(), pre);
        !s)
        return s;

    std::unique_ptr<ClassificationTask> task(new ClassificationTask(config, pre));
    task->engine_ = std::move(engine).value();
    // Every backend runs the model as prepared for engine.batch (model_prepare's set-batch pass;
    // XNNPACK and TensorRT plans are compiled for that shape), so a partial batch, which live
    // runs gather whenever fewer streams than the batch have a frame, and an offline run's last
    // batch, run padded to it. Only a TensorRT dynamic profile takes fewer rows, down to its
    // minimum.
    task->minRows_ = static_cast<size_t>(
        options.dynamicBatch() ? std::max(options.profileMin(), 1) : config.engine.batch);

    const auto& outputs = task->engine_->outputs();
    auto labels = setupLabels(agent, index, key, outputs.empty() ? nullptr : &outputs[0], source);
    if (!labels)
        return labels.status();
    task->labels_ = std::move(labels.value().labels);
    task->truthToLabel_ = std::move(labels.value().truthToLabel);
    task->classes_ = task->labels_.size(); // checked against the first output

    auto session = task->engine_->createSession();
    if (!session)
        return session.status().withContext(agent.where(key + ".model"));
    task->session_ = std::move(session).value();

    const auto rows = static_cast<size_t>(config.engine.batch); // a fixed batch dimension is it
    task->input_.assign(rows * task->preprocessor_.outputElements(), 0.0f);
    task->preprocessOk_.assign(rows, 0);
    task->probabilities_.assign(task->classes_, 0.0f);
    task->smoothed_.assign(task->classes_, 0.0f);
    return task;
}

void ClassificationTask::prepareStreams(size_t count)
{
    count = std::max<size_t>(count, 1);
    smoothed_.assign(count * classes_, 0.0f);
    firstScores_.assign(count, 1);
}

nlohmann::json ClassificationTask::describe() const
{
    return {{"labels", config_.labels}, {"classes", labels_.size()},
        {"preprocess", describePreprocess(preprocessor_.config())},
        {"postprocess", describePostprocess(config_.postprocess)}};
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
    // A frame that cannot be preprocessed fails on its own, with its own record: the batch's other
    // frames still run (its row is zeros, and never scored).
    Status preprocessFailure;
    size_t preprocessed = 0;
    for (size_t i = 0; i < count; ++i) {
        Status s = preprocessor_.run(frames[i]->image, input_.data() + i * elements);
        preprocessOk_[i] = s.ok();
        if (s) {
            ++preprocessed;
            continue;
        }
        std::fill_n(input_.data() + i * elements, elements, 0.0f);
        if (preprocessFailure)
            preprocessFailure = s.withContext("frame " + std::to_string(frames[i]->sequence));
    }
    // A partial batch runs padded to the rows the engine takes (minRows_); the rows no frame
    // filled are left as they were, and never scored.
    const size_t rows = std::max(count, minRows_);
    const int64_t preprocessedNs = monotonicNs();

    RunTiming timing;
    Status status;
    if (preprocessed > 0) {
        TensorView view;
        view.data = input_.data();
        view.shape = TensorShape {static_cast<int64_t>(rows), 3, preprocessor_.config().cropHeight,
            preprocessor_.config().cropWidth};
        status = session_->run(&view, 1, &timing);
    }
    const int64_t inferredNs = preprocessed > 0 ? monotonicNs() : preprocessedNs;
    const ConstTensorView output = preprocessed > 0 ? session_->output(0) : ConstTensorView {};
    if (status && preprocessed > 0)
        status = checkOutput(output, rows);

    const bool cold = firstRun_ && preprocessed > 0;
    if (preprocessed > 0)
        firstRun_ = false;
    const FrameRecord* nonFinite = nullptr; // a frame whose scores held NaN or infinity
    for (size_t i = 0; i < count; ++i) {
        FrameRecord& r = records[i];
        r.frameId = frames[i]->sequence;
        r.capturedNs = frames[i]->captureNs;
        r.dequeuedNs = dequeuedNs;
        r.preprocessedNs = preprocessedNs;
        r.inferredNs = inferredNs;
        r.computeNs = preprocessOk_[i] ? timing.computeNs : 0;
        r.batch = static_cast<int32_t>(count);
        const int truth = frames[i]->truthClass;
        r.truth = truth >= 0 && static_cast<size_t>(truth) < truthToLabel_.size()
            ? truthToLabel_[static_cast<size_t>(truth)]
            : -1;
        r.ok = status.ok() && preprocessOk_[i];
        r.failure = !preprocessOk_[i] ? FrameFailure::Preprocess
            : status                  ? FrameFailure::None
                                      : FrameFailure::Inference;
        r.coldStart = cold && preprocessOk_[i]; // every frame of the first inference shares it
        r.topK = 0;
        if (!r.ok)
            continue;
        // Smoothing follows each stream on its own; a stream the task was not prepared for
        // (a caller that never called prepareStreams) shares the first one's history.
        const size_t stream = frames[i]->stream < firstScores_.size() ? frames[i]->stream : 0;
        bool first = firstScores_[stream] != 0;
        const bool scored = scoreRow(output.data + i * classes_, classes_, config_.postprocess,
            probabilities_.data(), smoothed_.data() + stream * classes_, first, r);
        firstScores_[stream] = first ? 1 : 0;
        if (!scored)
            nonFinite = &r;
    }
    if (status && nonFinite)
        status = nonFiniteOutput(config_.model, nonFinite->frameId);
    if (status && !preprocessFailure)
        status = preprocessFailure;
    const int64_t doneNs = monotonicNs();
    for (size_t i = 0; i < count; ++i)
        records[i].doneNs = doneNs;
    return status;
}

} // namespace jetagent
