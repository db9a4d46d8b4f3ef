// Action recognition over clips of frames: clip mode (one model over T frames) and streaming mode
// (a per-frame backbone and a temporal head over T embeddings), both reading the clip in place
// from a ring.
#include "tasks/action_task.h"

#include <algorithm>

#include "config/config.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "tasks/calibration.h"
#include "tasks/image_input.h"
#include "tasks/labels.h"
#include "tasks/preprocess.h"
#include "tasks/scores.h"

namespace jetagent {

namespace {

const char* layoutName(ClipLayout layout)
{
    return nameOf(kClipLayoutNames, layout);
}

// Loads and builds one of the task's models; errors name the key that gave its path, or the
// engine section for what the backend refused.
Expected<std::shared_ptr<const Engine>> buildModel(const AgentConfig& agent,
    const std::shared_ptr<const ModelFile>& model, const EngineOptions& options,
    const std::string& key)
{
    auto engine = buildEngine(model, options);
    if (!engine)
        return engine.status().withContext(agent.where(key + ".engine") + " (" + model->path + ")");
    return engine;
}

Expected<std::shared_ptr<const ModelFile>> loadModel(
    const AgentConfig& agent, const std::string& path, const std::string& pathKey)
{
    auto model = loadModelFile(path);
    if (!model)
        return model.status().withContext(agent.where(pathKey));
    return model;
}

// The single float32 input of a model, or an error naming `pathKey`.
Expected<TensorInfo> singleFloatInput(const AgentConfig& agent,
    const std::vector<TensorInfo>& inputs, const std::string& path, const std::string& pathKey,
    const char* role)
{
    if (inputs.size() != 1)
        return Status::invalid(agent.where(pathKey) + ": " + role + " takes one input; '" + path +
            "' has " + std::to_string(inputs.size()));
    if (inputs[0].type != DataType::Float32)
        return Status::invalid(agent.where(pathKey) + ": input '" + inputs[0].name + "' of '" +
            path + "' is " + dataTypeName(inputs[0].type) + "; only float32 inputs are supported");
    return inputs[0];
}

// The clip length from the config and the model's T dimension (-1 when open).
Expected<int> resolveClipLength(const AgentConfig& agent, const std::string& key,
    const TaskConfig& config, int64_t modelT, const std::string& what)
{
    const int configured = config.action.clipLength;
    if (configured > 0 && modelT > 0 && configured != modelT)
        return Status::invalid(agent.where(key + ".action.clip_length") + ": clip_length " +
            std::to_string(configured) + " does not match the model: " + what + " takes " +
            std::to_string(modelT) + " frames per clip");
    if (configured == 0 && modelT <= 0)
        return Status::invalid(agent.where(key + ".action.clip_length") +
            ": the model's clip length is open (" + what +
            "); set clip_length to the frames per clip it was trained on");
    return configured > 0 ? configured : static_cast<int>(modelT);
}

// What the action section asks that no model is needed to judge; a calibration source that int8
// does not use is only warned about.
Status checkActionConfig(const AgentConfig& agent, const std::string& key, const TaskConfig& config)
{
    const ActionConfig& action = config.action;
    if (!config.calibration.source.empty() && config.engine.precision != Precision::Int8)
        logger("engine")->warn("{}: ignored; precision is {}, calibration is for int8",
            agent.where(key + ".engine.calibration"), precisionName(config.engine.precision));
    if (config.engine.batch != 1)
        return Status::invalid(agent.where(key + ".engine.batch") +
            ": an action task infers one clip at a time; batch must be 1 (got " +
            std::to_string(config.engine.batch) + ")");
    if (action.stride < 1)
        return Status::invalid(agent.where(key + ".action.stride") + ": must be at least 1 (got " +
            std::to_string(action.stride) + ")");
    if (action.frameStep < 1)
        return Status::invalid(agent.where(key + ".action.frame_step") +
            ": must be at least 1 (got " + std::to_string(action.frameStep) + ")");
    if (action.mode == ActionMode::Streaming && action.head.empty())
        return Status::invalid(agent.where(key + ".action.head") +
            ": streaming mode needs the temporal head's ONNX file");
    return Status();
}

// The task's first model (the clip model, or the streaming backbone) read from its file, and its
// input, which must be a single float32 tensor of batch 1 or open.
struct FirstModel {
    std::shared_ptr<const ModelFile> file;
    TensorInfo input;
    std::string shape; // "input 'NAME' of 'PATH' is SHAPE", for messages
};

Expected<FirstModel> loadFirstModel(
    const AgentConfig& agent, const std::string& key, const TaskConfig& config, bool streaming)
{
    auto model = loadModel(agent, config.model, key + ".model");
    if (!model)
        return model.status();
    auto input = singleFloatInput(agent, model.value()->inputs, config.model, key + ".model",
        streaming ? "a streaming backbone" : "a clip model");
    if (!input)
        return input.status();
    FirstModel first {model.value(), input.value(),
        "input '" + input->name + "' of '" + config.model + "' is " + input->shapeString()};
    const std::vector<int64_t>& dims = first.input.dims;
    if (dims.empty() || (dims[0] != 1 && dims[0] != -1))
        return Status::invalid(agent.where(key + ".model") + ": " + first.shape +
            "; its batch dimension must be 1 or open, as an action task runs one clip at a time");
    return first;
}

// The engines of either mode and the shapes they fix: what the task and its clip ring are made
// from.
struct ActionEngines {
    PreprocessConfig pre;
    int length = 0; // frames per clip
    std::shared_ptr<const Engine> clipEngine; // the clip model, or the temporal head
    std::shared_ptr<const Engine> backbone; // streaming mode only
    TensorShape clipShape;
    size_t embedding = 0; // streaming mode: values per frame's embedding
    ClipRing::Layout ringLayout = ClipRing::Layout::TimeFirst;
    int ringChannels = 1;
};

// Clip mode: one model over N x C x T x H x W (ncthw) or N x T x C x H x W (ntchw).
Expected<ActionEngines> buildClipMode(const AgentConfig& agent, const std::string& key,
    const TaskConfig& config, const FirstModel& model)
{
    const ActionConfig& action = config.action;
    const TensorInfo& input = model.input;
    const std::string& shape = model.shape;
    const bool ncthw = action.layout == ClipLayout::Ncthw;
    const size_t cDim = ncthw ? 1 : 2, tDim = ncthw ? 2 : 1;
    if (input.dims.size() != 5)
        return Status::invalid(agent.where(key + ".model") + ": " + shape +
            "; a clip model takes N x C x T x H x W (layout ncthw) or N x T x C x H x W "
            "(ntchw)" +
            (input.dims.size() == 4 ? " (an image model? use type: classification, or it "
                                      "as the backbone of streaming mode)"
                                    : ""));
    if (input.dims[cDim] != 3 && input.dims[cDim] != -1) {
        const bool other = input.dims[tDim] == 3;
        return Status::invalid(agent.where(key + ".action.layout") + ": " + shape +
            "; with layout " + layoutName(action.layout) + " its dimension " +
            std::to_string(cDim) + " is the 3 colour channels" +
            (other ? std::string("; the model looks ") +
                        (ncthw ? "N x T x C x H x W: set layout: ntchw"
                               : "N x C x T x H x W: set layout: ncthw")
                   : std::string()));
    }
    ActionEngines built;
    auto t = resolveClipLength(agent, key, config, input.dims[tDim],
        shape + " (layout " + layoutName(action.layout) + ")");
    if (!t)
        return t.status();
    built.length = t.value();
    built.pre = config.preprocess;
    if (Status s = resolveImageInput(agent, key, input.dims[3], input.dims[4], shape, built.pre);
        !s)
        return s;
    EngineOptions options = config.engine;
    if (options.precision == Precision::Int8 && !config.calibration.source.empty()) {
        auto calibration = makeClipCalibrationData(config.calibration, built.pre,
            ClipSamples {built.length, action.frameStep, ncthw},
            [&](const std::string& k) { return agent.where(key + ".engine.calibration." + k); });
        if (!calibration)
            return calibration.status();
        logger("engine")->info("task {}: int8 calibration samples: {} (read where no calibration "
                               "is cached)",
            config.name, calibration.value()->description());
        options.calibration = std::move(calibration).value();
    }
    auto engine = buildModel(agent, model.file, options, key);
    if (!engine)
        return engine.status();
    built.clipEngine = engine.value();
    const PreprocessConfig& pre = built.pre;
    built.clipShape = ncthw ? TensorShape {1, 3, built.length, pre.cropHeight, pre.cropWidth}
                            : TensorShape {1, built.length, 3, pre.cropHeight, pre.cropWidth};
    built.ringLayout = ncthw ? ClipRing::Layout::ChannelsFirst : ClipRing::Layout::TimeFirst;
    built.ringChannels = 3;
    return built;
}

// Streaming mode's backbone: N x 3 x H x W in, a fixed-size embedding per frame (N x D) out.
Status buildBackbone(const AgentConfig& agent, const std::string& key, const TaskConfig& config,
    const FirstModel& model, ActionEngines& built)
{
    const TensorInfo& input = model.input;
    if (input.dims.size() != 4 || (input.dims[1] != 3 && input.dims[1] != -1))
        return Status::invalid(agent.where(key + ".model") + ": " + model.shape +
            "; a streaming backbone takes one frame, N x 3 x H x W");
    built.pre = config.preprocess;
    if (Status s =
            resolveImageInput(agent, key, input.dims[2], input.dims[3], model.shape, built.pre);
        !s)
        return s;
    EngineOptions options = config.engine;
    if (options.precision == Precision::Int8 && !config.calibration.source.empty()) {
        auto calibration = makeCalibrationData(config.calibration, built.pre,
            [&](const std::string& k) { return agent.where(key + ".engine.calibration." + k); });
        if (!calibration)
            return calibration.status();
        logger("engine")->info("task {}: int8 calibration samples for the backbone: {} (read "
                               "where no calibration is cached)",
            config.name, calibration.value()->description());
        options.calibration = std::move(calibration).value();
    }
    auto engine = buildModel(agent, model.file, options, key);
    if (!engine)
        return engine.status();
    built.backbone = engine.value();
    const auto& outs = built.backbone->outputs();
    int64_t d = outs.empty() || outs[0].dims.size() < 2 ? -1 : 1;
    for (size_t i = 1; d > 0 && i < outs[0].dims.size(); ++i)
        d = outs[0].dims[i] > 0 ? d * outs[0].dims[i] : -1;
    if (d <= 0)
        return Status::invalid(agent.where(key + ".model") + ": the backbone's output " +
            (outs.empty() ? std::string("is missing")
                          : "'" + outs[0].name + "' is " + outs[0].shapeString()) +
            "; it must give an embedding of fixed size per frame (N x D)");
    built.embedding = static_cast<size_t>(d);
    return Status();
}

// Streaming mode's temporal head: N x T x D embeddings of the backbone in, the clip length from
// its T.
Status buildHead(const AgentConfig& agent, const std::string& key, const TaskConfig& config,
    ActionEngines& built)
{
    const ActionConfig& action = config.action;
    auto headModel = loadModel(agent, action.head, key + ".action.head");
    if (!headModel)
        return headModel.status();
    // int8 covers the backbone, where the time goes; the head, a few thousand
    // multiply-adds over embeddings that no calibration image gives, stays fp32.
    EngineOptions headOptions = config.engine;
    if (headOptions.precision == Precision::Int8) {
        headOptions.precision = Precision::Fp32;
        logger("engine")->info(
            "task {}: int8 backbone; the temporal head '{}' runs fp32", config.name, action.head);
    }
    auto head = buildModel(agent, headModel.value(), headOptions, key);
    if (!head)
        return head.status();
    auto headInput = singleFloatInput(
        agent, head.value()->inputs(), action.head, key + ".action.head", "a temporal head");
    if (!headInput)
        return headInput.status();
    const TensorInfo& h = headInput.value();
    const std::string headShape =
        "input '" + h.name + "' of '" + action.head + "' is " + h.shapeString();
    if (h.dims.size() != 3 || (h.dims[0] != 1 && h.dims[0] != -1))
        return Status::invalid(agent.where(key + ".action.head") + ": " + headShape +
            "; a temporal head takes N x T x D embeddings (N 1 or open)");
    if (h.dims[2] > 0 && static_cast<size_t>(h.dims[2]) != built.embedding)
        return Status::invalid(agent.where(key + ".action.head") + ": " + headShape +
            ", embeddings of " + std::to_string(h.dims[2]) + " values, but the backbone '" +
            config.model + "' gives " + std::to_string(built.embedding));
    auto t = resolveClipLength(agent, key, config, h.dims[1], headShape);
    if (!t)
        return t.status();
    built.length = t.value();
    built.clipEngine = head.value();
    built.clipShape = TensorShape {1, built.length, static_cast<int64_t>(built.embedding)};
    return Status();
}

// Streaming mode: a per-frame backbone and a temporal head over T embeddings.
Expected<ActionEngines> buildStreamingMode(const AgentConfig& agent, const std::string& key,
    const TaskConfig& config, const FirstModel& model)
{
    ActionEngines built;
    if (Status s = buildBackbone(agent, key, config, model, built); !s)
        return s;
    if (Status s = buildHead(agent, key, config, built); !s)
        return s;
    return built;
}

} // namespace

Expected<std::unique_ptr<ActionTask>> ActionTask::create(
    const AgentConfig& agent, size_t index, const SourceInfo& source)
{
    const TaskConfig& config = agent.tasks.at(index);
    const ActionConfig& action = config.action;
    const std::string key = "tasks[" + std::to_string(index) + "]";
    const bool streaming = action.mode == ActionMode::Streaming;
    if (Status s = checkActionConfig(agent, key, config); !s)
        return s;

    // The first model's input is read from the file before its engine is built: int8
    // calibration needs the preprocessing (and clip length) resolved from it.
    auto firstModel = loadFirstModel(agent, key, config, streaming);
    if (!firstModel)
        return firstModel.status();
    auto engines = streaming ? buildStreamingMode(agent, key, config, firstModel.value())
                             : buildClipMode(agent, key, config, firstModel.value());
    if (!engines)
        return engines.status();
    const ActionEngines& built = engines.value();
    const int length = built.length;
    const size_t embedding = built.embedding;
    const std::shared_ptr<const Engine>& clipEngine = built.clipEngine;

    std::unique_ptr<ActionTask> task(new ActionTask(config, built.pre));
    task->streaming_ = streaming;
    task->clipEngine_ = clipEngine;
    task->clipShape_ = built.clipShape;
    task->embeddingSize_ = embedding;
    if (streaming)
        task->backbone_ = built.backbone;

    const auto& outputs = clipEngine->outputs();
    auto labels = setupLabels(agent, index, key, outputs.empty() ? nullptr : &outputs[0], source);
    if (!labels)
        return labels.status();
    task->labels_ = std::move(labels.value().labels);
    task->truthToLabel_ = std::move(labels.value().truthToLabel);
    task->classes_ = task->labels_.size();

    // Stream 0's ring, the one a run of a single stream uses; prepareStreams() adds the others'
    // like it.
    auto ring = ClipRing::create(length, built.ringChannels,
        streaming ? embedding : task->preprocessor_.planeElements(), built.ringLayout);
    if (!ring)
        return ring.status().withContext("task " + config.name);
    task->streams_.emplace_back();
    task->streams_[0].ring = std::move(ring).value();

    auto clipSession = clipEngine->createSession();
    if (!clipSession)
        return clipSession.status().withContext(
            agent.where(key + (streaming ? ".action.head" : ".model")));
    task->clipSession_ = std::move(clipSession).value();
    if (streaming) {
        auto session = task->backbone_->createSession();
        if (!session)
            return session.status().withContext(agent.where(key + ".model"));
        task->backboneSession_ = std::move(session).value();
        task->frameInput_.assign(task->preprocessor_.outputElements(), 0.0f);
    }
    task->probabilities_.assign(task->classes_, 0.0f);
    task->streams_[0].smoothed.assign(task->classes_, 0.0f);

    const ClipRing& first = *task->streams_[0].ring;
    logger("engine")->info(
        "task {}: {} mode, clips of {} frames ({}), an inference every {} clip frames; a clip "
        "ring per stream, {} planes, {:.0f} KiB",
        config.name, streaming ? "streaming" : "clip", length,
        action.frameStep == 1 ? std::string("every frame")
                              : "every " + std::to_string(action.frameStep) + "th frame",
        action.stride, first.planes(), static_cast<double>(first.mappedBytes()) / 1024.0);
    return task;
}

Expected<ActionTask::StreamClips> ActionTask::newStream() const
{
    const ClipRing& first = *streams_[0].ring;
    auto ring =
        ClipRing::create(first.length(), first.channels(), first.planeElements(), first.layout());
    if (!ring)
        return ring.status();
    StreamClips clips;
    clips.ring = std::move(ring).value();
    clips.smoothed.assign(classes_, 0.0f);
    return clips;
}

void ActionTask::prepareStreams(size_t count)
{
    // Stream 0 stays whatever the count: accessors and single-stream callers rely on it.
    const size_t wanted = std::max<size_t>(count, 1);
    streamsFailure_ = Status();
    if (streams_.size() > wanted)
        streams_.resize(wanted);
    streams_.reserve(wanted);
    while (streams_.size() < wanted) {
        auto clips = newStream();
        if (!clips) {
            // The run goes on for the streams that have a ring; process() names this reason for
            // the frames of the others.
            streamsFailure_ = clips.status().withContext(
                "task " + config_.name + ", stream " + std::to_string(streams_.size()));
            logger("engine")->error("{}", streamsFailure_.message());
            return;
        }
        streams_.push_back(std::move(clips).value());
    }
    if (wanted > 1)
        logger("engine")->info("task {}: {} clip rings, one per stream, {:.0f} KiB in all",
            config_.name, wanted,
            static_cast<double>(streams_[0].ring->mappedBytes() * wanted) / 1024.0);
}

size_t ActionTask::liveQueueCapacity(size_t /*streams*/) const
{
    // Per stream: each stream has its own clips.
    // Room for the frames that arrive while a clip is inferred, up to one stride of them.
    const int64_t frames = static_cast<int64_t>(config_.action.stride) * config_.action.frameStep;
    return static_cast<size_t>(std::clamp<int64_t>(frames, 2, 32));
}

std::vector<EngineDescription> ActionTask::engines() const
{
    if (streaming_)
        return {backbone_->description(), clipEngine_->description()};
    return {clipEngine_->description()};
}

nlohmann::json ActionTask::describe() const
{
    const ActionConfig& a = config_.action;
    const ClipRing& ring = *streams_[0].ring;
    nlohmann::json action = {{"mode", nameOf(kActionModeNames, a.mode)},
        {"clip_length", ring.length()}, {"stride", a.stride}, {"frame_step", a.frameStep},
        {"clip_span_frames", (ring.length() - 1) * a.frameStep + 1},
        {"clip_input", clipShape_.toString()},
        // One ring per stream, each of this size.
        {"ring", {{"planes", ring.planes()}, {"mapped_bytes", ring.mappedBytes()}}},
        {"clip_rings", streams_.size()},
        {"scored", "clips whose frames all have the same known class"}};
    if (streaming_) {
        action["head"] = a.head;
        action["embedding_size"] = embeddingSize_;
    } else {
        action["layout"] = layoutName(a.layout);
    }
    return {{"labels", config_.labels}, {"classes", labels_.size()}, {"action", action},
        {"preprocess", describePreprocess(preprocessor_.config())},
        {"postprocess", describePostprocess(config_.postprocess)}};
}

Status ActionTask::addFrame(
    StreamClips& clips, const Frame& frame, int64_t* preprocessedNs, int64_t* computeNs)
{
    ClipRing& ring = *clips.ring;
    const int truth =
        frame.truthClass >= 0 && static_cast<size_t>(frame.truthClass) < truthToLabel_.size()
        ? truthToLabel_[static_cast<size_t>(frame.truthClass)]
        : -1;
    if (!streaming_) {
        if (Status s = preprocessor_.run(frame.image, ring.next(), ring.channelStride()); !s)
            return s;
        *preprocessedNs = monotonicNs();
    } else {
        if (Status s = preprocessor_.run(frame.image, frameInput_.data()); !s)
            return s;
        *preprocessedNs = monotonicNs(); // the backbone's pass is inference
        TensorView view;
        view.data = frameInput_.data();
        view.shape =
            TensorShape {1, 3, preprocessor_.config().cropHeight, preprocessor_.config().cropWidth};
        RunTiming timing;
        if (Status s = backboneSession_->run(&view, 1, &timing); !s)
            return s;
        *computeNs += timing.computeNs;
        const ConstTensorView out = backboneSession_->output(0);
        if (out.data == nullptr || out.shape.rank < 1 || out.shape[0] != 1 ||
            static_cast<size_t>(out.shape.elementCount()) != embeddingSize_)
            return Status::runtime("backbone '" + config_.model + "' returned " +
                out.shape.toString() + "; the head expects 1 x " + std::to_string(embeddingSize_));
        std::copy(out.data, out.data + embeddingSize_, ring.next());
    }
    ring.push({frame.sequence, frame.captureNs, truth});
    ++clips.sampled;
    return Status();
}

Status ActionTask::inferClip(StreamClips& clips, FrameRecord& r, int64_t* computeNs)
{
    const ClipRing& ring = *clips.ring;
    const int length = ring.length();
    const ClipRing::FrameInfo& oldest = ring.info(0);
    const ClipRing::FrameInfo& newest = ring.info(length - 1);
    r.clipFrames = length;
    r.clipFirstId = oldest.frameId;
    r.clipLastId = newest.frameId;
    r.clipFirstNs = oldest.capturedNs;
    r.clipLastNs = newest.capturedNs;
    const uint64_t span = newest.frameId - oldest.frameId;
    const uint64_t expected =
        static_cast<uint64_t>(length - 1) * static_cast<uint64_t>(config_.action.frameStep);
    r.clipGaps =
        span > expected ? static_cast<int32_t>(std::min<uint64_t>(span - expected, 1u << 30)) : 0;
    int truth = oldest.truth;
    for (int t = 1; t < length && truth >= 0; ++t)
        if (ring.info(t).truth != truth)
            truth = -1;
    r.truth = truth;

    // The model reads the clip where the ring holds it; engines only read their inputs.
    TensorView view;
    view.data = const_cast<float*>(ring.clip()); // NOLINT(cppcoreguidelines-pro-type-const-cast)
    view.shape = clipShape_;
    clips.lastClipInput = view.data;
    ++clips.clipInferences;
    RunTiming timing;
    const int64_t start = monotonicNs();
    Status status = clipSession_->run(&view, 1, &timing);
    r.clipInferenceNs = monotonicNs() - start;
    *computeNs += timing.computeNs;
    if (!status)
        return status;
    const ConstTensorView out = clipSession_->output(0);
    if (out.data == nullptr || out.shape.rank < 1 || out.shape[0] != 1 ||
        static_cast<size_t>(out.shape.elementCount()) != classes_)
        return Status::runtime("model '" + (streaming_ ? config_.action.head : config_.model) +
            "' returned " + out.shape.toString() + " for one clip; its labels expect " +
            std::to_string(classes_) + " scores");
    return Status();
}

Status ActionTask::unpreparedStream(const Frame& frame, FrameRecord& r) const
{
    std::string message = "task " + config_.name + ": a frame of stream " +
        std::to_string(frame.stream) + ", but the task has clip rings for " +
        std::to_string(streams_.size()) + " stream" + (streams_.size() == 1 ? "" : "s");
    if (!streamsFailure_.ok())
        message += " (" + streamsFailure_.message() + ")";
    r.preprocessedNs = r.dequeuedNs;
    r.inferredNs = r.doneNs = monotonicNs();
    r.ok = false;
    r.failure = FrameFailure::Inference;
    r.hasResult = true; // a failure is a result the log and the view must show
    return Status::invalid(message);
}

Status ActionTask::process(
    const Frame* const* frames, size_t count, int64_t dequeuedNs, FrameRecord* records)
{
    if (count != 1)
        return Status::invalid("an action task takes one frame at a time");
    const Frame& frame = *frames[0];
    FrameRecord& r = records[0];
    r = FrameRecord();
    r.frameId = frame.sequence;
    r.capturedNs = frame.captureNs;
    r.dequeuedNs = dequeuedNs;
    r.hasResult = false;
    if (static_cast<size_t>(frame.stream) >= streams_.size())
        return unpreparedStream(frame, r);
    StreamClips& clips = streams_[frame.stream];
    ClipRing& ring = *clips.ring;

    const bool sample = clips.received % static_cast<uint64_t>(config_.action.frameStep) == 0;
    ++clips.received;
    int64_t compute = 0;
    Status status;
    r.preprocessedNs = dequeuedNs; // a frame left out of the clips costs nothing
    if (sample) {
        r.coldStart = firstFrame_;
        firstFrame_ = false;
        status = addFrame(clips, frame, &r.preprocessedNs, &compute);
    }
    const uint64_t length = static_cast<uint64_t>(ring.length());
    const bool clipDue = status && sample && ring.full() &&
        (clips.sampled - length) % static_cast<uint64_t>(config_.action.stride) == 0;
    if (clipDue) {
        r.hasResult = true;
        r.coldStart = r.coldStart || firstClip_;
        firstClip_ = false;
        status = inferClip(clips, r, &compute);
    }
    r.inferredNs = monotonicNs();
    r.computeNs = compute;
    r.ok = status.ok();
    r.failure = status ? FrameFailure::None : FrameFailure::Inference;
    if (!status)
        r.hasResult = true; // a failure is a result the log and the view must show
    else if (clipDue &&
        !scoreRow(clipSession_->output(0).data, classes_, config_.postprocess,
            probabilities_.data(), clips.smoothed.data(), clips.firstScores, r))
        status = nonFiniteOutput(streaming_ ? config_.action.head : config_.model, r.frameId);
    r.doneNs = monotonicNs();
    return status;
}

} // namespace jetagent
