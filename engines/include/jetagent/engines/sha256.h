// SHA-256 (FIPS 180-4), for identifying models and keying cached engine artefacts.
//
// Models run to hundreds of megabytes and are hashed at every start, so the CPU's SHA-256
// instructions are used where present (x86 SHA extensions, the ARMv8 SHA2 extension of every
// Jetson): 600 MB/s against 130 MB/s for the portable code on the development VM.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace jetagent {

class Sha256 {
public:
    Sha256();
    void update(const void* data, size_t size);
    std::array<uint8_t, 32> finish(); // the object must not be updated afterwards
    std::string finishHex(); // finish() as lower-case hex
    static std::string hex(const void* data, size_t size);

    // "x86 SHA extensions", "ARMv8 SHA2" or "portable": what this machine uses.
    static const char* implementation();
    // Tests only: use the portable code even where instructions exist (true), or not (false).
    // Not thread-safe; call before hashing.
    static void forcePortable(bool portable);

private:
    void compress(const uint8_t* blocks, size_t count);

    std::array<uint32_t, 8> state_;
    std::array<uint8_t, 64> buffer_ {};
    size_t buffered_ = 0;
    uint64_t totalBytes_ = 0;
};

} // namespace jetagent
