// Action recognition over clips of frames, in two modes that share the source and the pipeline:
//
//   clip mode       frame -> preprocess into the clip ring -> every `stride` frames: the clip model
//                   on the newest T frames (N x C x T x H x W, or N x T x C x H x W)
//   streaming mode  frame -> preprocess -> backbone (N x 3 x H x W -> N x D) -> embedding ring ->
//                   every `stride` frames: the temporal head on the newest T embeddings (N x T x D)
//
// In both, each frame is preprocessed and written once, and the model reads the clip in place from
// the ring (clip_ring.h): no clip is assembled or shifted per inference.
//
// A run may feed the task several streams (Frame::stream): each has its own ring and its own
// place in its clips (frame step, stride, smoothing), so one camera's frames never land in
// another's clip. The engines, their sessions and the scratch buffers are the task's, shared by
// the streams: frames come one at a time from the task's worker thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "run/task.h"
#include "tasks/clip_ring.h"
#include "tasks/preprocess.h"
#include "tasks/task_config.h"

namespace jetagent {

struct AgentConfig;

class ActionTask final : public Task {
public:
    // Loads the model(s) and labels, builds the engines and the ring, and checks them against the
    // config and the source. Errors name the config file, line and key they concern
    // (action.clip_length, action.head, action.layout, model, labels, engine.batch, ...).
    static Expected<std::unique_ptr<ActionTask>> create(
        const AgentConfig& agent, size_t index, const SourceInfo& source);

    const std::string& name() const override { return config_.name; }
    int batchSize() const override { return 1; }
    size_t liveQueueCapacity(size_t streams) const override;
    // A ring per stream (stream 0's exists from create(), so a caller with one stream need not
    // call this). Streams kept from before keep their clips. A ring that cannot be mapped is
    // logged, and frames of its stream and those after it fail in process() with the reason.
    void prepareStreams(size_t count) override;
    const std::vector<std::string>& labels() const override { return labels_; }
    std::vector<EngineDescription> engines() const override;
    nlohmann::json describe() const override;
    // One frame at a time (batchSize() is 1), into its stream's clips; a stream that was not
    // prepared is an error.
    Status process(const Frame* const* frames, size_t count, int64_t dequeuedNs,
        FrameRecord* records) override;

    const TaskConfig& config() const { return config_; }
    int clipLength() const { return streams_[0].ring->length(); }
    const PreprocessConfig& preprocessing() const { return preprocessor_.config(); }
    size_t streamCount() const { return streams_.size(); } // streams with a ring
    // The ring the clip model or the head reads for a stream: preprocessed frames (clip mode) or
    // embeddings (streaming mode).
    const ClipRing& ring(size_t stream = 0) const { return *streams_.at(stream).ring; }
    // What a stream's last clip inference was given: the data pointer of its input, and how many
    // clip inferences ran on the stream. For tests of the mechanism (the input is the ring's own
    // memory).
    const float* lastClipInput(size_t stream = 0) const
    {
        return streams_.at(stream).lastClipInput;
    }
    uint64_t clipInferences(size_t stream = 0) const { return streams_.at(stream).clipInferences; }

private:
    // One stream's clips so far: the frames in its ring and where it stands in its frame steps,
    // strides and score smoothing.
    struct StreamClips {
        std::unique_ptr<ClipRing> ring;
        std::vector<float> smoothed;
        uint64_t received = 0; // frames of the stream the task has been given
        uint64_t sampled = 0; // ... of which went into the ring (every frame_step-th)
        bool firstScores = true; // smoothing has no history yet
        const float* lastClipInput = nullptr;
        uint64_t clipInferences = 0;
    };

    explicit ActionTask(TaskConfig config, const PreprocessConfig& resolved)
        : config_(std::move(config)), preprocessor_(resolved)
    {
    }
    // Clip mode: preprocesses the frame straight into the ring. Streaming: preprocesses it, runs
    // the backbone and writes its embedding into the ring. Sets the time preprocessing ended and
    // adds the backbone's compute time.
    Status addFrame(
        StreamClips& clips, const Frame& frame, int64_t* preprocessedNs, int64_t* computeNs);
    Status inferClip(StreamClips& clips, FrameRecord& record, int64_t* computeNs);
    // A stream's clips with an empty ring shaped like stream 0's.
    Expected<StreamClips> newStream() const;
    // A frame of a stream that has no ring: the record and the error that say so.
    Status unpreparedStream(const Frame& frame, FrameRecord& record) const;

    TaskConfig config_;
    bool streaming_ = false;
    std::shared_ptr<const Engine> clipEngine_; // the clip model, or the temporal head
    std::unique_ptr<Session> clipSession_;
    std::shared_ptr<const Engine> backbone_; // streaming mode only
    std::unique_ptr<Session> backboneSession_;
    TensorShape clipShape_; // the clip model's or head's input, batch 1
    size_t embeddingSize_ = 0; // D, streaming mode
    Preprocessor preprocessor_;
    std::vector<float> frameInput_; // streaming: one preprocessed frame for the backbone
    std::vector<StreamClips> streams_; // indexed by Frame::stream; never empty after create()
    Status streamsFailure_; // why prepareStreams() made fewer rings than asked, if it did
    std::vector<std::string> labels_;
    std::vector<int> truthToLabel_;
    size_t classes_ = 0;
    std::vector<float> probabilities_; // scratch for scoring a clip
    // Cold starts are the engines' and the preprocessor's, not a stream's: task-wide.
    bool firstFrame_ = true; // the next frame is the task's first (cold preprocessing/backbone)
    bool firstClip_ = true; // the next clip inference is the engine's first
};

} // namespace jetagent
