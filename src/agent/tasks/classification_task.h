// Image classification: preprocess, infer through the engine interface, softmax, smoothing, top-k.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "run/task.h"
#include "tasks/preprocess.h"
#include "tasks/task_config.h"

namespace jetagent {

struct AgentConfig;

class ClassificationTask final : public Task {
public:
    // Loads the model and labels, builds the engine and checks them against the config and the
    // source. Errors name the config file, line and key they concern (model, labels, crop, batch,
    // ...).
    static Expected<std::unique_ptr<ClassificationTask>> create(
        const AgentConfig& agent, size_t index, const SourceInfo& source);

    const std::string& name() const override { return config_.name; }
    int batchSize() const override { return config_.engine.batch; }
    const std::vector<std::string>& labels() const override { return labels_; }
    std::vector<EngineDescription> engines() const override { return {engine_->description()}; }
    nlohmann::json describe() const override;
    // Score smoothing keeps a history per stream.
    void prepareStreams(size_t count) override;
    Status process(const Frame* const* frames, size_t count, int64_t dequeuedNs,
        FrameRecord* records) override;

    const TaskConfig& config() const { return config_; }
    // The preprocessing with crop and resize sizes filled in from the model where the config left
    // them out.
    const PreprocessConfig& preprocessing() const { return preprocessor_.config(); }
    const std::shared_ptr<const Engine>& engine() const { return engine_; }

private:
    ClassificationTask(TaskConfig config, const PreprocessConfig& resolved)
        : config_(std::move(config)), preprocessor_(resolved)
    {
    }
    Status checkOutput(const ConstTensorView& output, size_t rows);

    TaskConfig config_;
    std::shared_ptr<const Engine> engine_;
    std::unique_ptr<Session> session_;
    Preprocessor preprocessor_;
    std::vector<std::string> labels_;
    std::vector<int> truthToLabel_; // source class index -> label index, -1 when the labels lack it
    // The fewest rows an inference may run: the engine's batch, or a TensorRT dynamic profile's
    // minimum (a partial batch is padded up to it).
    size_t minRows_ = 1;
    std::vector<float> input_; // batch x 3 x H x W
    std::vector<uint8_t> preprocessOk_; // per frame of the batch being processed
    std::vector<float> probabilities_;
    std::vector<float> smoothed_; // per stream: classes_ values each (prepareStreams)
    size_t classes_ = 0; // from the model file, or the labels when the model leaves it open
    bool firstRun_ = true; // the next inference is the engine's first (cold start)
    std::vector<char> firstScores_ = {1}; // per stream: smoothing has no history yet
};

} // namespace jetagent
