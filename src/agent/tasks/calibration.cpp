// int8 calibration samples from engine.calibration, read and preprocessed as inference does.
#include "tasks/calibration.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>

#include "jetagent/base/format.h"
#include "jetagent/base/log.h"
#include "jetagent/engines/sha256.h"
#include "jetagent/hal/file_sources.h"
#include "tasks/preprocess.h"

namespace fs = std::filesystem;

namespace jetagent {

std::vector<int64_t> spreadIndices(int64_t available, int64_t wanted)
{
    std::vector<int64_t> indices;
    const int64_t count = std::min(std::max<int64_t>(available, 0), std::max<int64_t>(wanted, 0));
    indices.reserve(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i)
        indices.push_back(available > wanted ? i * available / wanted : i);
    return indices;
}

namespace {

// "size 1234 mtime 1700000000123456789": what identifies a file's content cheaply.
std::string contentStamp(const std::string& path)
{
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    const auto mtime = fs::last_write_time(path, ec).time_since_epoch().count();
    return "size " + std::to_string(ec ? 0 : size) + " mtime " + std::to_string(ec ? 0 : mtime);
}

// A float exactly, whatever the locale: hex notation round-trips every bit.
std::string exact(float v)
{
    std::string text = formatText("%a", static_cast<double>(v));
    return text;
}

// Every preprocessing field that changes the floats a sample becomes.
std::string canonicalPreprocess(const PreprocessConfig& p)
{
    std::string text = "resize " + std::to_string(static_cast<int>(p.resize)) + " resize_size " +
        std::to_string(p.resizeSize) + " crop " + std::to_string(p.cropWidth) + "x" +
        std::to_string(p.cropHeight) + " interpolation " + interpolationKernel(p.interpolation) +
        " color " + std::to_string(static_cast<int>(p.color)) + " divisor " + exact(p.divisor) +
        " mean";
    for (float m : p.mean)
        text += " " + exact(m);
    text += " std";
    for (float s : p.std)
        text += " " + exact(s);
    return text;
}

class SourceCalibrationData final : public CalibrationData {
public:
    // Samples of one frame each, or (clip.length > 0) clips of consecutive frames.
    SourceCalibrationData(
        const CalibrationConfig& config, const PreprocessConfig& resolved, const ClipSamples& clip)
        : config_(config),
          preprocessor_(resolved),
          clip_(clip),
          shape_ {3, resolved.cropHeight, resolved.cropWidth}
    {
        if (clip_.length > 0) {
            shape_ = clip_.ncthw
                ? TensorShape {3, clip_.length, resolved.cropHeight, resolved.cropWidth}
                : TensorShape {clip_.length, 3, resolved.cropHeight, resolved.cropWidth};
            plane_.resize(preprocessor_.outputElements());
        }
    }

    std::string key() const override { return key_; }
    std::string description() const override { return description_; }
    int batchSize() const override { return config_.batch; }
    const TensorShape& sampleShape() const override { return shape_; }

    Expected<bool> nextBatch(float* out) override
    {
        if (given_ == batches_)
            return false;
        const size_t frames = framesPerSample();
        const size_t sampleElements = static_cast<size_t>(shape_.elementCount());
        for (size_t j = 0; j < static_cast<size_t>(config_.batch); ++j) {
            for (size_t k = 0; k < frames; ++k) {
                const size_t index = (given_ * static_cast<size_t>(config_.batch) + j) * frames + k;
                if (Expected<bool> read = readFrame(selected_[index]); !read || !read.value())
                    return read;
                float* sample = out + j * sampleElements;
                if (clip_.length == 0) {
                    if (Status s = preprocessor_.run(frame_.image, sample); !s)
                        return s;
                    continue;
                }
                // Frame k of the clip: its planes at [c][k] (ncthw) or its block at [k] (ntchw).
                if (Status s = preprocessor_.run(frame_.image, plane_.data()); !s)
                    return s;
                const size_t planeSize = plane_.size() / 3;
                for (size_t c = 0; c < 3; ++c)
                    std::copy_n(plane_.data() + c * planeSize, planeSize,
                        sample +
                            (clip_.ncthw ? (c * frames + k) * planeSize : (k * 3 + c) * planeSize));
            }
        }
        ++given_;
        return true;
    }

    void rewind() override
    {
        source_.reset();
        given_ = 0;
        position_ = 0;
    }

    // Lists the source and fixes the selection, the key and the description.
    Status setUp(const CalibrationKeyNamer& where)
    {
        path_ = config_.source;
        sourceWhere_ = where("source");
        std::error_code ec;
        if (path_.empty())
            return Status::invalid(sourceWhere_ + ": no calibration source given");
        if (!fs::exists(path_, ec))
            return Status::notFound(sourceWhere_ + ": calibration source '" + path_ +
                "' does not exist (a directory of images or a video file)");
        if (config_.frames < config_.batch)
            return Status::invalid(where("frames") + ": " + std::to_string(config_.frames) +
                " frames make no calibration batch of " + std::to_string(config_.batch));
        isDirectory_ = fs::is_directory(path_, ec);
        int64_t available = -1;
        std::string kind = "image-directory";
        if (isDirectory_) {
            auto listing = listImageDirectory(path_);
            if (!listing)
                return listing.status().withContext(sourceWhere_);
            files_ = std::move(listing.value().files);
            available = static_cast<int64_t>(files_.size());
        } else {
            if (Status s = open(); !s)
                return s;
            available = source_->info().frameCount;
            kind = source_->info().kind;
        }
        const bool isDirectory = isDirectory_;
        const bool countKnown = available >= 0;
        const std::string unit = isDirectory ? "images" : "frames";
        size_t samples = 0;
        if (clip_.length == 0) {
            selected_ = countKnown ? spreadIndices(available, config_.frames)
                                   : spreadIndices(config_.frames, config_.frames);
            samples = selected_.size();
        } else {
            // Clips: windows of `span` consecutive frames (every frame_step-th taken), as many as
            // `frames` frames make, spread over the source without overlapping.
            const int64_t span = int64_t(clip_.length - 1) * clip_.frameStep + 1;
            const int64_t windows = (countKnown ? available : config_.frames) / span;
            selected_.clear();
            for (int64_t w : spreadIndices(windows, config_.frames / clip_.length))
                for (int64_t k = 0; k < clip_.length; ++k)
                    selected_.push_back(w * span + k * clip_.frameStep);
            samples = selected_.size() / static_cast<size_t>(clip_.length);
        }
        if (countKnown && static_cast<int64_t>(samples) < config_.batch)
            return Status::invalid(sourceWhere_ + ": '" + path_ + "' holds " +
                std::to_string(available) + " " + unit +
                (clip_.length > 0 ? ", " + std::to_string(samples) + " clips of " +
                            std::to_string(clip_.length) + " frames" + stepText()
                                  : std::string()) +
                ", fewer than one calibration batch (" + std::to_string(config_.batch) + "); " +
                (clip_.length > 0 ? "a batch of clips needs " +
                            std::to_string(int64_t(config_.batch) *
                                ((clip_.length - 1) * clip_.frameStep + 1)) +
                            " " + unit + "; "
                                  : std::string()) +
                "add samples" +
                (config_.batch > 1 ? std::string(" or lower engine.calibration.batch") : "") +
                " (a few hundred samples calibrate well)");
        batches_ = samples / static_cast<size_t>(config_.batch);

        auto log = logger("engine");
        const size_t unused = samples - batches_ * static_cast<size_t>(config_.batch);
        if (unused > 0)
            log->info("calibration: the last {} of {} samples do not fill a batch of {} and are "
                      "not used",
                unused, samples, config_.batch);
        if (!countKnown)
            log->warn("calibration: the frame count of '{}' is unknown; taking its first {} "
                      "frames instead of frames spread over all of it",
                path_, config_.frames);

        const size_t used = batches_ * static_cast<size_t>(config_.batch);
        description_ = clip_.length > 0
            ? std::to_string(used) + " clips of " + std::to_string(clip_.length) + " " + unit +
                stepText() + " " + (isDirectory ? "from" : "of") + " " + path_
            : std::to_string(used) + " " + unit + " " + (isDirectory ? "from" : "of") + " " + path_;
        if (countKnown && available > static_cast<int64_t>(selected_.size()))
            description_ += " (spread over " + std::to_string(available) + ")";
        else if (!countKnown)
            description_ += " (its first frames; frame count unknown)";
        description_ += ", batches of " + std::to_string(config_.batch);

        // The source as one spelling: "calib", "calib/", "./calib" and its absolute path are
        // the same samples, so the same key.
        std::error_code canonicalError;
        const fs::path sourcePath = fs::weakly_canonical(fs::absolute(path_), canonicalError);
        const std::string keyPath = canonicalError ? path_ : sourcePath.string();
        std::string canonical = "jetagent calibration 1\nsource " + keyPath + "\nkind " + kind +
            "\nframes " + std::to_string(config_.frames) + "\nbatch " +
            std::to_string(config_.batch) + "\npreprocess " +
            canonicalPreprocess(preprocessor_.config()) + "\n";
        if (clip_.length > 0)
            canonical += "clip " + std::to_string(clip_.length) + " step " +
                std::to_string(clip_.frameStep) + (clip_.ncthw ? " ncthw\n" : " ntchw\n");
        if (isDirectory) {
            for (int64_t index : selected_) {
                const auto& file = files_[static_cast<size_t>(index)];
                canonical += "file " + file.relative + " " + contentStamp(file.path) + "\n";
            }
        } else {
            canonical += "video " + contentStamp(path_) + "\nindices";
            for (int64_t index : selected_)
                canonical += " " + std::to_string(index);
            canonical += "\n";
        }
        Sha256 hash;
        hash.update(canonical.data(), canonical.size());
        key_ = hash.finishHex();
        return Status();
    }

private:
    size_t framesPerSample() const { return clip_.length > 0 ? size_t(clip_.length) : 1; }
    std::string stepText() const
    {
        return clip_.frameStep > 1 ? " (every " + std::to_string(clip_.frameStep) + ")" : "";
    }

    // Frame `target` of the source into frame_: a directory's image read alone, decoded as the
    // directory source decodes; a video read up to it. False (after endedEarly) when the video
    // ends first.
    Expected<bool> readFrame(int64_t target)
    {
        if (isDirectory_) {
            const auto& file = files_[static_cast<size_t>(target)];
            // The default pixel limit: calibration images are held to what a source of
            // default options reads.
            auto image = decodeImageFile(file.path, buffer_, kDefaultMaxImagePixels);
            if (!image)
                return Status::error(image.status().kind(),
                    sourceWhere_ + ": calibration " + image.status().message());
            frame_.image = std::move(image).value();
            return true;
        }
        auto read = readVideoFrame(target);
        if (!read)
            return read.status();
        if (!read.value())
            return endedEarly();
        return true;
    }

    Status open()
    {
        SourceOptions options;
        options.uri = "file://" + path_;
        options.loop = false;
        auto opened = openFrameSource(options);
        if (!opened)
            return opened.status().withContext(sourceWhere_);
        source_ = std::move(opened).value();
        position_ = 0;
        return Status();
    }

    // Reads the video up to frame `target` into frame_; false when it ends first.
    Expected<bool> readVideoFrame(int64_t target)
    {
        if (!source_) {
            if (Status s = open(); !s)
                return s;
        }
        for (;;) {
            auto read = source_->read(frame_);
            if (!read)
                return read.status().withContext("calibration source '" + path_ + "'");
            if (read.value() == ReadResult::EndOfStream)
                return false;
            if (read.value() == ReadResult::Frame && position_++ == target)
                return true;
        }
    }

    // The source ended before the selection did: a video whose frame count was an estimate or
    // unknown. The batches so far stand; none at all is an error.
    Expected<bool> endedEarly()
    {
        if (given_ == 0)
            return Status::invalid(sourceWhere_ + ": '" + path_ + "' gave " +
                std::to_string(position_) + (position_ == 1 ? " frame" : " frames") +
                ", fewer than one calibration batch (" + std::to_string(config_.batch) +
                "); a calibration source is a directory of images or a video file");
        logger("engine")->warn("calibration: '{}' ended after {} frames; calibrating on {} "
                               "batches instead of {}",
            path_, position_, given_, batches_);
        batches_ = given_;
        return false;
    }

    CalibrationConfig config_;
    Preprocessor preprocessor_;
    ClipSamples clip_;
    TensorShape shape_;
    std::vector<float> plane_; // clips: one preprocessed frame
    std::string path_;
    std::string sourceWhere_;
    std::string key_;
    std::string description_;
    bool isDirectory_ = false;
    std::vector<ImageDirectoryListing::File> files_; // directories: every image, in source order
    std::vector<unsigned char> buffer_; // reused for every image file read
    std::vector<int64_t> selected_; // source indices of the samples, ascending
    size_t batches_ = 0;

    std::unique_ptr<FrameSource> source_; // videos
    Frame frame_;
    int64_t position_ = 0; // index of the frame the source delivers next
    size_t given_ = 0; // batches given since the last rewind
};

} // namespace

Expected<std::shared_ptr<CalibrationData>> makeCalibrationData(const CalibrationConfig& config,
    const PreprocessConfig& resolved, const CalibrationKeyNamer& where)
{
    if (config.batch < 1)
        return Status::invalid(where("batch") + ": must be at least 1");
    if (resolved.cropWidth <= 0 || resolved.cropHeight <= 0)
        return Status::runtime("calibration needs the resolved crop size");
    auto data = std::make_shared<SourceCalibrationData>(config, resolved, ClipSamples {});
    if (Status s = data->setUp(where); !s)
        return s;
    return std::shared_ptr<CalibrationData>(std::move(data));
}

Expected<std::shared_ptr<CalibrationData>> makeClipCalibrationData(const CalibrationConfig& config,
    const PreprocessConfig& resolved, const ClipSamples& clip, const CalibrationKeyNamer& where)
{
    if (config.batch < 1)
        return Status::invalid(where("batch") + ": must be at least 1");
    if (clip.length < 1 || clip.frameStep < 1)
        return Status::runtime("clip calibration needs the clip length and frame step");
    if (resolved.cropWidth <= 0 || resolved.cropHeight <= 0)
        return Status::runtime("calibration needs the resolved crop size");
    if (config.frames < int64_t(clip.length) * config.batch)
        return Status::invalid(where("frames") + ": " + std::to_string(config.frames) +
            " frames make no calibration batch of " + std::to_string(config.batch) + " clips of " +
            std::to_string(clip.length) + " frames; set it to at least " +
            std::to_string(int64_t(clip.length) * config.batch));
    auto data = std::make_shared<SourceCalibrationData>(config, resolved, clip);
    if (Status s = data->setUp(where); !s)
        return s;
    return std::shared_ptr<CalibrationData>(std::move(data));
}

} // namespace jetagent
