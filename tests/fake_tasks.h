// A task and a frame source that stand in for real ones around the pipeline: no model, no camera.
// Compiled once, as the library jetagent_fake_tasks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "run/task.h"

namespace jetagent::test {

// A task that infers nothing: each frame gets a record with its sequence number, its capture
// time, a top-1 result (the last of `labels`, score 0.1) and its inference ending when process()
// runs.
class FakeTask final : public Task {
public:
    explicit FakeTask(
        std::string name = "fake", std::vector<std::string> labels = {"background", "person"})
        : name_(std::move(name)), labels_(std::move(labels))
    {
    }
    const std::string& name() const override { return name_; }
    int batchSize() const override { return batch; }
    const std::vector<std::string>& labels() const override { return labels_; }
    std::vector<EngineDescription> engines() const override { return {}; }
    nlohmann::json describe() const override { return nlohmann::json::object(); }
    Status process(const Frame* const* frames, size_t count, int64_t dequeuedNs,
        FrameRecord* records) override;

    std::function<void()> probe; // called once per frame while the task "infers"
    std::vector<uint64_t> sequences; // the frames processed, in order (read after the run)
    std::vector<uint16_t> streams; // ... and the stream of each
    std::vector<size_t> batches; // the size of each batch process() was given
    int batch = 1; // the batch the task asks for (before the run)

private:
    std::string name_;
    std::vector<std::string> labels_;
};

// `frames` frames of `width` x `height` (each a flat grey of its sequence number), then the end
// of the stream. A `stuttering` source is live and answers NoFrame before each frame, as a camera
// does between frames.
class CountingSource final : public FrameSource {
public:
    explicit CountingSource(
        uint64_t frames, int width = 8, int height = 8, bool stuttering = false);
    const SourceInfo& info() const override { return info_; }
    Expected<ReadResult> read(Frame& frame) override;
    uint64_t noFrames() const { return calls_ / 2; } // NoFrame answers of a stuttering source

private:
    SourceInfo info_;
    uint64_t frames_;
    bool stuttering_;
    uint64_t next_ = 0;
    uint64_t calls_ = 0;
};

} // namespace jetagent::test
