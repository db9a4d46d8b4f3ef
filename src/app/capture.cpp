// `jetagent capture`: save a source's frames as image files, for datasets and for looking at them.
#include "capture.h"

#include <cstdio>
#include <filesystem>

#include "jetagent/base/format.h"
#include "jetagent/base/log.h"
#include "jetagent/hal/gstreamer_source.h"
#include "jetagent/hal/image_codec.h"

namespace fs = std::filesystem;

namespace jetagent {

Status captureFrames(const SourceOptions& source, uint64_t frames, const std::string& outDir,
    const std::string& format)
{
    if (format != "png" && format != "jpg")
        return Status::invalid("image format must be png or jpg (got '" + format + "')");
    std::error_code ec;
    if (fs::exists(outDir, ec) && !fs::is_empty(outDir, ec))
        return Status::invalid(
            "output directory '" + outDir + "' exists and is not empty; choose a new one");
    auto opened = openFrameSource(source);
    if (!opened)
        return opened.status();
    FrameSource& reader = *opened.value();
    const auto& classes = reader.info().classNames;
    if (frames == 0 && reader.info().frameCount < 0)
        return Status::invalid("source '" + withoutPasswords(source.uri) +
            "' does not end by itself; say how many frames to save");

    fs::create_directories(outDir, ec);
    if (ec)
        return Status::invalid("cannot create output directory '" + outDir + "': " + ec.message());
    for (const auto& name : classes) {
        fs::create_directories(fs::path(outDir) / name, ec);
        if (ec)
            return Status::io(
                "cannot create '" + (fs::path(outDir) / name).string() + "': " + ec.message());
    }

    Frame frame;
    uint64_t written = 0;
    while (frames == 0 || written < frames) {
        auto result = reader.read(frame);
        if (!result)
            return result.status();
        if (result.value() == ReadResult::EndOfStream)
            break;
        if (result.value() == ReadResult::NoFrame)
            continue; // a camera between frames, stalled or reconnecting: it logs that itself
        std::string name = formatText(
            "%08llu.%s", static_cast<unsigned long long>(frame.sequence), format.c_str());
        const fs::path dir = frame.truthClass >= 0
            ? fs::path(outDir) / classes[static_cast<size_t>(frame.truthClass)]
            : fs::path(outDir);
        const std::string path = (dir / name).string();
        if (Status s = writeImageFile(path, frame.image); !s)
            return s;
        ++written;
    }
    logger("capture")->info(
        "wrote {} frames from {} into {}", written, withoutPasswords(source.uri), outDir);
    return Status();
}

} // namespace jetagent
