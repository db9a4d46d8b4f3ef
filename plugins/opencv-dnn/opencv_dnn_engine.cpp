// OpenCVDnnEngine: inference through OpenCV's DNN module, on the CPU everywhere and on CUDA where
// OpenCV was built with it (some Jetson images).
#include "opencv_dnn_engine.h"

#include <algorithm>
#include <mutex>
#include <string>

#include <opencv2/core/utils/logger.hpp>
#include <opencv2/core/version.hpp>
#include <opencv2/dnn.hpp>

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/base/plugin.h"
#include "jetagent/engines/engine_plugin.h"

namespace jetagent {

namespace {

// OpenCV's messages span several lines and repeat the source location; keep the informative part.
std::string condense(const cv::Exception& e)
{
    std::string msg = e.err.empty() ? e.what() : e.err;
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    while (msg.size() > 600)
        msg.resize(600);
    return msg;
}

bool hasCudaTarget(cv::dnn::Target target)
{
    try {
        const auto targets = cv::dnn::getAvailableTargets(cv::dnn::DNN_BACKEND_CUDA);
        return std::find(targets.begin(), targets.end(), target) != targets.end();
    } catch (const cv::Exception&) {
        return false;
    }
}

struct NetSetup {
    cv::dnn::Backend backend = cv::dnn::DNN_BACKEND_OPENCV;
    cv::dnn::Target target = cv::dnn::DNN_TARGET_CPU;
    const char* targetName = "cpu";
};

// Parses the model into a ready-to-run net. OpenCV prints its own errors while importing; they are
// silenced here because the caller reports the failure with the model's name.
Expected<cv::dnn::Net> makeNet(
    const ModelFile& model, const std::string& prepared, const NetSetup& setup, bool fusion)
{
    const auto previous = cv::utils::logging::getLogLevel();
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    cv::dnn::Net net;
    std::string error;
    try {
        net = cv::dnn::readNetFromONNX(prepared.data(), prepared.size());
        if (net.empty())
            error = "OpenCV returned an empty network";
    } catch (const cv::Exception& e) {
        error = condense(e);
    }
    cv::utils::logging::setLogLevel(previous);
    if (!error.empty())
        return Status::invalid(
            "OpenCV DNN " CV_VERSION " cannot load model '" + model.path + "': " + error);
    net.setPreferableBackend(setup.backend);
    net.setPreferableTarget(setup.target);
    net.enableFusion(fusion);
    return net;
}

class OpenCVDnnSession final : public Session {
public:
    // cv::dnn::Net is a reference-counted handle: copying it shares the parsed network.
    OpenCVDnnSession(std::shared_ptr<const ModelFile> model, const cv::dnn::Net& net)
        : model_(std::move(model)), net_(net)
    {
        outputNames_ = net_.getUnconnectedOutLayersNames();
        for (const auto& input : model_->inputs)
            inputNames_.push_back(input.name);
    }

    Status run(const TensorView* inputs, size_t inputCount, RunTiming* timing) override
    {
        if (inputCount != inputNames_.size())
            return Status::invalid("model '" + model_->path + "' takes " +
                std::to_string(inputNames_.size()) + " inputs, " + std::to_string(inputCount) +
                " given");
        const int64_t start = monotonicNs();
        try {
            for (size_t i = 0; i < inputCount; ++i) {
                const TensorView& view = inputs[i];
                int sizes[TensorShape::kMaxRank];
                for (int d = 0; d < view.shape.rank; ++d)
                    sizes[d] = static_cast<int>(view.shape[d]);
                // A header over the caller's memory: no copy on our side.
                cv::Mat blob(view.shape.rank, sizes, CV_32F, view.data);
                net_.setInput(blob, inputNames_[i]);
            }
            net_.forward(outputs_, outputNames_);
        } catch (const cv::Exception& e) {
            return Status::runtime(
                "inference on model '" + model_->path + "' failed: " + condense(e));
        }
        std::vector<ConstTensorView>& views = outputViews();
        views.resize(outputs_.size());
        for (size_t i = 0; i < outputs_.size(); ++i) {
            const cv::Mat& out = outputs_[i];
            if (out.type() != CV_32F || !out.isContinuous())
                return Status::runtime("model '" + model_->path +
                    "' produced an output that is not contiguous float32");
            views[i].data = out.ptr<float>();
            views[i].shape.rank = std::min(out.dims, TensorShape::kMaxRank);
            for (int d = 0; d < views[i].shape.rank; ++d)
                views[i].shape.dims[static_cast<size_t>(d)] = out.size[d];
        }
        if (timing) {
            timing->hostToDeviceNs = -1;
            timing->deviceToHostNs = -1;
            timing->computeNs = monotonicNs() - start;
        }
        return Status();
    }

private:
    std::shared_ptr<const ModelFile> model_;
    cv::dnn::Net net_;
    std::vector<std::string> inputNames_;
    std::vector<std::string> outputNames_;
    std::vector<cv::Mat> outputs_;
};

class OpenCVDnnEngine final : public Engine {
public:
    // `validated` is the network parsed while building; the first session takes it over.
    OpenCVDnnEngine(std::shared_ptr<const ModelFile> model,
        std::shared_ptr<const std::string> prepared, NetSetup setup, EngineDescription description,
        const cv::dnn::Net& validated)
        : model_(std::move(model)),
          prepared_(std::move(prepared)),
          setup_(setup),
          description_(std::move(description)),
          spare_(validated)
    {
    }

    const std::vector<TensorInfo>& inputs() const override { return model_->inputs; }
    const std::vector<TensorInfo>& outputs() const override { return model_->outputs; }
    const EngineDescription& description() const override { return description_; }

    Expected<std::unique_ptr<Session>> createSession() const override
    {
        {
            // The network parsed to validate the model at build time serves the first session, so
            // the common case (one session per engine) parses the model once.
            std::lock_guard<std::mutex> lock(spareMutex_);
            if (!spare_.empty()) {
                cv::dnn::Net net = spare_;
                spare_ = cv::dnn::Net();
                return std::unique_ptr<Session>(new OpenCVDnnSession(model_, net));
            }
        }
        auto net = makeNet(*model_, *prepared_, setup_, description_.options.fusion);
        if (!net)
            return net.status();
        return std::unique_ptr<Session>(new OpenCVDnnSession(model_, net.value()));
    }

private:
    std::shared_ptr<const ModelFile> model_;
    std::shared_ptr<const std::string> prepared_; // what every session's network is parsed from
    NetSetup setup_;
    EngineDescription description_;
    mutable std::mutex spareMutex_;
    mutable cv::dnn::Net spare_;
};

} // namespace

bool openCVDnnHasCuda()
{
    return hasCudaTarget(cv::dnn::DNN_TARGET_CUDA);
}

std::string openCVDnnDetails()
{
    std::string s = "OpenCV " CV_VERSION ", targets: cpu";
    if (hasCudaTarget(cv::dnn::DNN_TARGET_CUDA))
        s += ", cuda";
    if (hasCudaTarget(cv::dnn::DNN_TARGET_CUDA_FP16))
        s += ", cuda-fp16";
    if (!openCVDnnHasCuda())
        s +=
            " (this OpenCV has no CUDA support in its DNN module, so device: gpu is not available)";
    return s;
}

Expected<std::shared_ptr<const Engine>> buildOpenCVDnnEngine(std::shared_ptr<const ModelFile> model,
    const PreparedModel& prepared, const EngineOptions& options)
{
    const int64_t start = monotonicNs();
    NetSetup setup;
    switch (options.device) {
    case Device::Cpu:
        if (options.precision != Precision::Fp32)
            return Status::unsupported(
                std::string("the opencv backend runs only fp32 on the CPU (precision: ") +
                precisionName(options.precision) + " needs device: gpu or another backend)");
        break;
    case Device::Gpu:
        if (options.precision == Precision::Int8)
            return Status::unsupported(
                "the opencv backend has no int8 mode; use fp32 or fp16 on the GPU");
        setup.backend = cv::dnn::DNN_BACKEND_CUDA;
        setup.target = options.precision == Precision::Fp16 ? cv::dnn::DNN_TARGET_CUDA_FP16
                                                            : cv::dnn::DNN_TARGET_CUDA;
        setup.targetName = options.precision == Precision::Fp16 ? "cuda-fp16" : "cuda";
        if (!hasCudaTarget(setup.target))
            return Status::unsupported(
                "device: gpu is not available with the opencv backend: OpenCV " CV_VERSION
                " on this machine was built without CUDA support in its DNN module "
                "(use device: cpu, or the tensorrt backend on a Jetson)");
        break;
    case Device::Dla0:
    case Device::Dla1:
        return Status::unsupported(std::string("the opencv backend cannot use ") +
            deviceName(options.device) + "; DLA cores are reached through the tensorrt backend");
    }
    if (options.batch < 1)
        return Status::invalid("batch must be at least 1");
    if (options.threads < 0)
        return Status::invalid("threads must be 0 (backend default) or more");
    // Settings only the tensorrt backend honours: refused rather than silently ignored.
    const char* tensorrtOnly = options.tensorRTOnlySetting();
    if (tensorrtOnly)
        return Status::unsupported(std::string("the opencv backend has no setting ") +
            tensorrtOnly + "; it is a tensorrt backend setting");
    if (!options.onednn)
        return Status::unsupported(
            "the opencv backend has no setting onednn; it is an xnnpack backend setting");

    // OpenCV's thread pool is process-wide: the last engine built decides it for all.
    if (options.threads > 0)
        cv::setNumThreads(options.threads);

    // Parse once now so that a model OpenCV cannot run fails at start-up, not in the first session.
    auto net = makeNet(*model, *prepared.bytes, setup, options.fusion);
    if (!net)
        return net.status();

    EngineDescription description;
    description.backend = "opencv";
    description.backendVersion = "OpenCV " CV_VERSION;
    description.target = setup.targetName;
    description.options = options;
    description.modelPath = model->path;
    description.modelSha256 = model->sha256;
    description.modelBytes = model->fileBytes + model->externalBytes;
    description.preparation = prepared.passList;
    description.preparedKey = prepared.key;
    description.preparedFromCache = prepared.fromCache;
    description.prepareNs = prepared.ns;
    description.buildNs = monotonicNs() - start + prepared.ns;
    logger("engine")->debug("opencv: loaded '{}' for {} in {:.1f} ms", model->path,
        setup.targetName, nsToMs(description.buildNs));
    return std::shared_ptr<const Engine>(new OpenCVDnnEngine(
        std::move(model), prepared.bytes, setup, std::move(description), net.value()));
}

} // namespace jetagent

JETAGENT_PLUGIN_ENTRY
{
    static const jetagent::EngineBackendApi api = {"opencv", [] { return true; },
        jetagent::openCVDnnDetails, nullptr, jetagent::buildOpenCVDnnEngine};
    static const jetagent::PluginDescriptor descriptor = {
        jetagent::kPluginAbi, JETAGENT_PLUGIN_VERSION, "opencv-dnn", &api};
    return &descriptor;
}
