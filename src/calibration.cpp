// int8 calibration samples from engine.calibration, read and preprocessed as inference does.
#include "calibration.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>

#include "jetagent/base/log.h"
#include "jetagent/engines/sha256.h"
#include "jetagent/hal/file_sources.h"
#include "preprocess.h"

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
std::string fileStamp(const std::string& path)
{
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    const auto mtime = fs::last_write_time(path, ec).time_since_epoch().count();
    return "size " + std::to_string(ec ? 0 : size) + " mtime " + std::to_string(ec ? 0 : mtime);
}

// A float exactly, whatever the locale: hex notation round-trips every bit.
std::string exact(float v)
{
    char text[64];
    std::snprintf(text, sizeof(text), "%a", static_cast<double>(v));
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
    SourceCalibrationData(const CalibrationConfig& config, const PreprocessConfig& resolved)
        : config_(config),
          preprocessor_(resolved),
          shape_ {3, resolved.cropHeight, resolved.cropWidth}
    {
    }

    std::string key() const override { return key_; }
    std::string description() const override { return description_; }
    int batchSize() const override { return config_.batch; }
    const TensorShape& sampleShape() const override { return shape_; }

    Expected<bool> nextBatch(float* out) override
    {
        if (given_ == batches_)
            return false;
        const size_t elements = preprocessor_.outputElements();
        for (size_t j = 0; j < static_cast<size_t>(config_.batch); ++j) {
            const int64_t target = selected_[given_ * static_cast<size_t>(config_.batch) + j];
            if (isDirectory_) {
                // Only the selected images are read, decoded as the directory source decodes.
                const auto& file = files_[static_cast<size_t>(target)];
                frame_.image = decodeImageFile(file.path, buffer_);
                if (frame_.image.empty())
                    return Status::invalid(sourceWhere_ + ": calibration image '" + file.path +
                        "' is not a readable image");
            } else if (auto read = readVideoFrame(target); !read || !read.value()) {
                return read ? endedEarly() : Expected<bool>(read.status());
            }
            preprocessor_.run(frame_.image, out + j * elements);
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
        selected_ = countKnown ? spreadIndices(available, config_.frames)
                               : spreadIndices(config_.frames, config_.frames);
        const std::string unit = isDirectory ? "images" : "frames";
        if (countKnown && static_cast<int64_t>(selected_.size()) < config_.batch)
            return Status::invalid(sourceWhere_ + ": '" + path_ + "' holds " +
                std::to_string(available) + " " + unit + ", fewer than one calibration batch (" +
                std::to_string(config_.batch) + "); add samples or lower " +
                "engine.calibration.batch (a few hundred samples calibrate well)");
        batches_ = selected_.size() / static_cast<size_t>(config_.batch);

        auto log = logger("engine");
        const size_t unused = selected_.size() - batches_ * static_cast<size_t>(config_.batch);
        if (unused > 0)
            log->info("calibration: the last {} of {} samples do not fill a batch of {} and are "
                      "not used",
                unused, selected_.size(), config_.batch);
        if (!countKnown)
            log->warn("calibration: the frame count of '{}' is unknown; taking its first {} "
                      "frames instead of frames spread over all of it",
                path_, config_.frames);

        const size_t used = batches_ * static_cast<size_t>(config_.batch);
        description_ =
            std::to_string(used) + " " + unit + " " + (isDirectory ? "from" : "of") + " " + path_;
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
        if (isDirectory) {
            for (int64_t index : selected_) {
                const auto& file = files_[static_cast<size_t>(index)];
                canonical += "file " + file.relative + " " + fileStamp(file.path) + "\n";
            }
        } else {
            canonical += "video " + fileStamp(path_) + "\nindices";
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
    TensorShape shape_;
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
    auto data = std::make_shared<SourceCalibrationData>(config, resolved);
    if (Status s = data->setUp(where); !s)
        return s;
    return std::shared_ptr<CalibrationData>(std::move(data));
}

} // namespace jetagent
