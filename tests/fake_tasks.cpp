// A task and a frame source that stand in for real ones around the pipeline.
#include "fake_tasks.h"

#include "jetagent/base/clock.h"

namespace jetagent::test {

Status FakeTask::process(
    const Frame* const* frames, size_t count, int64_t dequeuedNs, FrameRecord* records)
{
    batches.push_back(count);
    for (size_t i = 0; i < count; ++i) {
        if (probe)
            probe();
        sequences.push_back(frames[i]->sequence);
        streams.push_back(frames[i]->stream);
        records[i] = FrameRecord();
        records[i].frameId = frames[i]->sequence;
        records[i].capturedNs = frames[i]->captureNs;
        records[i].dequeuedNs = records[i].preprocessedNs = dequeuedNs;
        records[i].inferredNs = records[i].doneNs = monotonicNs();
        records[i].topK = 1;
        records[i].labels[0] = static_cast<int32_t>(labels_.size()) - 1;
        records[i].scores[0] = 0.1f;
    }
    return Status();
}

CountingSource::CountingSource(uint64_t frames, int width, int height, bool stuttering)
    : frames_(frames), stuttering_(stuttering)
{
    info_.uri = "test://count";
    info_.kind = "test";
    info_.width = width;
    info_.height = height;
    info_.live = stuttering;
}

Expected<ReadResult> CountingSource::read(Frame& frame)
{
    ++calls_;
    if (stuttering_ && calls_ % 2 == 1)
        return ReadResult::NoFrame;
    if (next_ == frames_)
        return ReadResult::EndOfStream;
    frame.image.create(info_.height, info_.width, 3);
    const auto level = static_cast<uint8_t>(next_ % 256);
    frame.image.fill(level, level, level);
    frame.sequence = next_++;
    frame.captureNs = monotonicNs();
    return ReadResult::Frame;
}

} // namespace jetagent::test
