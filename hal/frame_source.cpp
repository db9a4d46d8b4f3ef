// Opens the frame source a URI names.
#include "jetagent/hal/frame_source.h"

#include <filesystem>

#include "jetagent/hal/file_sources.h"
#include "jetagent/hal/synthetic_shapes.h"

namespace fs = std::filesystem;

namespace jetagent {

const char* frameSourceUriHelp()
{
    return "  synthetic://shapes   generated frames of coloured shapes with known classes (size, "
           "rate, seed from config)\n"
           "  file://PATH          a video file (any container OpenCV's videoio decodes) or a "
           "directory of images\n"
           "  PATH                 the same as file://PATH\n"
           "A directory's images play in natural name order; images in subdirectories take the "
           "subdirectory\n"
           "name as their true class.\n";
}

Expected<std::unique_ptr<FrameSource>> openFrameSource(const SourceOptions& options)
{
    const std::string& uri = options.uri;
    if (uri.empty())
        return Status::invalid(
            "no source given (a URI such as synthetic://shapes or file://video.mp4)");

    const size_t sep = uri.find("://");
    const std::string scheme = sep == std::string::npos ? "" : uri.substr(0, sep);
    const std::string rest = sep == std::string::npos ? uri : uri.substr(sep + 3);

    if (scheme == "synthetic") {
        if (rest != "shapes")
            return Status::invalid(
                "unknown synthetic source '" + uri + "' (known: synthetic://shapes)");
        if (options.width < 16 || options.height < 16 || options.width > 8192 ||
            options.height > 8192)
            return Status::invalid("synthetic frame size " + std::to_string(options.width) + "x" +
                std::to_string(options.height) + " is out of range (16..8192 per side)");
        return std::unique_ptr<FrameSource>(new SyntheticShapesSource(options));
    }
    if (scheme.empty() || scheme == "file") {
        if (rest.empty())
            return Status::invalid("source '" + uri + "' names no path");
        std::error_code ec;
        if (fs::is_directory(rest, ec))
            return ImageDirectorySource::open(options, rest);
        return VideoFileSource::open(options, rest);
    }
    return Status::invalid("unknown source scheme '" + scheme + "' in '" + uri +
        "'; this build reads:\n" + frameSourceUriHelp());
}

} // namespace jetagent
