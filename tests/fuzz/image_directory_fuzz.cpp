// Fuzz target: image decoding through an image-directory source (source.uri: a directory of
// images), the file written under one of the extensions the source lists, at the top level or in
// a class folder, and read to the end of the stream.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <string>

#include "fuzz_support.h"
#include "jetagent/hal/frame_source.h"

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxImageBytes = 256 * 1024;

using jetagent::fuzz::fail;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace jetagent;
    if (size > kMaxImageBytes)
        return -1;
    static const char* const kExtensions[] = {
        ".jpg", ".png", ".bmp", ".ppm", ".pgm", ".pnm", ".tif", ".webp"};
    fuzz::ByteReader in(data, size);
    const char* extension = kExtensions[in.range(0, std::size(kExtensions) - 1)];
    const bool inClassFolder = in.flag();

    // A fresh directory holding this one image.
    const std::string directory = fuzz::scratchDirectory() + "/images";
    std::error_code ec;
    fs::remove_all(directory, ec);
    const std::string folder = inClassFolder ? directory + "/cat" : directory;
    fs::create_directories(folder, ec);
    fuzz::writeFileOrDie(folder + "/image" + extension, in.rest());

    SourceOptions options;
    options.uri = directory;
    auto source = openFrameSource(options);
    if (!source)
        fail("an image directory with an image did not open: " + source.status().message());
    Frame frame;
    auto read = source.value()->read(frame);
    if (!read)
        return 0; // the image did not decode: the source says so and the run ends
    if (read.value() != ReadResult::Frame)
        fail("the first read of a one-image directory gave no frame and no error");
    if (frame.image.empty() || frame.image.channels() != 3)
        fail("a decoded image is not 8-bit BGR");
    if (frame.truthClass != (inClassFolder ? 0 : -1))
        fail("the image's class is " + std::to_string(frame.truthClass));
    auto end = source.value()->read(frame);
    if (!end || end.value() != ReadResult::EndOfStream)
        fail("a one-image directory did not end after its image");
    return 0;
}
