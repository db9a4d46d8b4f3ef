// What the fuzz harnesses share: bounded choices from fuzz bytes, a scratch directory, quiet logs.
#include "fuzz_support.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <spdlog/spdlog.h>

namespace jetagent::fuzz {

namespace fs = std::filesystem;

namespace {

// The engines and the live view's server are plugins: every harness loads this build's, wherever
// the program runs from (a fuzz program's directory is not beside the build's plugin directory),
// unless JETAGENT_PLUGIN_DIR says otherwise. Set before main, before any harness starts.
const bool kPluginDirectorySet = [] {
    return setenv("JETAGENT_PLUGIN_DIR", JETAGENT_FUZZ_PLUGIN_DIR, 0) == 0; // NOLINT
}();

} // namespace

bool pluginDirectorySet()
{
    return kPluginDirectorySet;
}

void fail(const std::string& what)
{
    std::fprintf(stderr, "%s\n", what.c_str());
    std::abort();
}

uint8_t ByteReader::byte()
{
    return position_ < size_ ? data_[position_++] : 0;
}

int64_t ByteReader::range(int64_t low, int64_t high)
{
    const auto span = static_cast<uint64_t>(high - low);
    uint64_t value = 0;
    for (uint64_t covered = 0; covered < span; covered = (covered << 8) | 0xFF)
        value = (value << 8) | byte();
    return low + static_cast<int64_t>(span == UINT64_MAX ? value : value % (span + 1));
}

float ByteReader::smallFloat(float range)
{
    const auto steps = static_cast<int64_t>(range * 128.0f);
    return static_cast<float>(this->range(-steps, steps)) / 128.0f;
}

std::string ByteReader::text(size_t maxLength)
{
    const size_t length = std::min(maxLength, remaining());
    std::string out(reinterpret_cast<const char*>(data_ + position_), length);
    position_ += length;
    return out;
}

std::string ByteReader::rest()
{
    return text(remaining());
}

namespace {

// Removes the scratch directory when the process exits normally (libFuzzer's -runs and
// -max_total_time end with exit()); a crash leaves it behind in $TMPDIR.
struct ScratchDirectory {
    std::string path;
    ScratchDirectory()
    {
        // NOLINTNEXTLINE(concurrency-mt-unsafe): set-up, before any thread
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern =
            (fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / "jetagent-fuzz-XXXXXX")
                .string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            std::perror(("jetagent fuzz: cannot create " + pattern).c_str());
            std::abort();
        }
        path = pattern;
    }
    ~ScratchDirectory()
    {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    ScratchDirectory(const ScratchDirectory&) = delete;
    ScratchDirectory& operator=(const ScratchDirectory&) = delete;
};

} // namespace

const std::string& scratchDirectory()
{
    static const ScratchDirectory directory;
    return directory.path;
}

void writeFileOrDie(const std::string& path, const std::string& content)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
        std::fprintf(stderr, "jetagent fuzz: cannot write %s\n", path.c_str());
        std::abort();
    }
}

void quietLogging()
{
    spdlog::set_level(spdlog::level::off);
}

} // namespace jetagent::fuzz
