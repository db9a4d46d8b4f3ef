// What the fuzz harnesses share: the libFuzzer entry points, a reader that turns fuzz bytes into
// bounded choices, a per-process scratch directory, and quiet logging.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

// libFuzzer's entry points; replay_main.cpp calls them the same way where libFuzzer is not linked.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace jetagent::fuzz {

// Reads choices from the front of the input; once it is used up every read gives 0 (an empty
// string), so any input, however short, describes a complete case.
class ByteReader {
public:
    ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) { }

    bool empty() const { return position_ >= size_; }
    size_t remaining() const { return size_ - position_; }
    uint8_t byte();
    // A value in [low, high] (inclusive; high >= low), from as few bytes as the range needs.
    int64_t range(int64_t low, int64_t high);
    bool flag() { return (byte() & 1) != 0; }
    // A float in [-range, range] in 1/128 steps: small, finite weights for generated models.
    float smallFloat(float range);
    // Up to `maxLength` bytes, as text.
    std::string text(size_t maxLength);
    // Everything not read yet.
    std::string rest();

private:
    const uint8_t* data_;
    size_t size_;
    size_t position_ = 0;
};

// This process's scratch directory (created on first use under $TMPDIR or /tmp, removed at exit):
// the harnesses write the files they hand to loaders here.
const std::string& scratchDirectory();

// Writes `content` to `path` (replacing it); aborts when it cannot, since a harness that cannot
// write its input tests nothing.
void writeFileOrDie(const std::string& path, const std::string& content);

// Turns logging off (every logger, and those created later, which copy the default's level): the
// code under test warns about bad input on every execution, which would drown the fuzzer's output
// and slow it down.
void quietLogging();

// True once JETAGENT_PLUGIN_DIR names this build's plugins (set before main, if it was unset).
bool pluginDirectorySet();

// Reports a broken property of the code under test and aborts, so libFuzzer (or the replay) keeps
// the input that broke it.
[[noreturn]] void fail(const std::string& what);

} // namespace jetagent::fuzz
