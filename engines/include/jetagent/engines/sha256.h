// SHA-256 (FIPS 180-4), for identifying models and keying cached engine artefacts.
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
    static std::string hex(const void* data, size_t size);

private:
    void compress(const uint8_t* block);

    std::array<uint32_t, 8> state_;
    std::array<uint8_t, 64> buffer_ {};
    size_t buffered_ = 0;
    uint64_t totalBytes_ = 0;
};

} // namespace jetagent
