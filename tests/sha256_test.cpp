// SHA-256 against the FIPS 180-4 example vectors.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "jetagent/engines/sha256.h"

namespace jetagent {
namespace {

std::string hexOf(const std::string& s)
{
    return Sha256::hex(s.data(), s.size());
}

TEST(Sha256, KnownVectors)
{
    EXPECT_EQ(hexOf(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(hexOf("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(hexOf("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(hexOf(std::string(1000000, 'a')),
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalUpdatesMatchOneShot)
{
    // Split a message at every position across the 64-byte block boundary and the padding boundary.
    std::string message;
    for (int i = 0; i < 200; ++i)
        message += static_cast<char>('a' + i % 26);
    const std::string expected = hexOf(message);
    for (size_t split = 0; split <= message.size(); ++split) {
        Sha256 h;
        h.update(message.data(), split);
        h.update(message.data() + split, message.size() - split);
        const auto digest = h.finish();
        std::string hex;
        for (uint8_t b : digest) {
            static const char* d = "0123456789abcdef";
            hex += d[b >> 4];
            hex += d[b & 15];
        }
        ASSERT_EQ(hex, expected) << "split at " << split;
    }
}

// The instruction-set implementation (where this CPU has one) against the portable code, on
// messages of every length around the block sizes and on a large random one.
TEST(Sha256, AcceleratedMatchesPortable)
{
    std::printf("[ sha256   ] %s\n", Sha256::implementation());
    std::mt19937 rng(1121);
    std::string big(3 << 20, '\0');
    for (auto& c : big)
        c = static_cast<char>(rng());
    std::vector<std::string> messages {big};
    messages.reserve(301);
    for (size_t n = 0; n < 300; ++n)
        messages.push_back(big.substr(n * 7, n));
    std::vector<std::string> accelerated;
    accelerated.reserve(messages.size());
    for (const auto& m : messages)
        accelerated.push_back(hexOf(m));
    Sha256::forcePortable(true);
    EXPECT_STREQ(Sha256::implementation(), "portable");
    for (size_t i = 0; i < messages.size(); ++i)
        ASSERT_EQ(hexOf(messages[i]), accelerated[i])
            << "message of " << messages[i].size() << " bytes";
    EXPECT_EQ(hexOf("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    Sha256::forcePortable(false);
}

} // namespace
} // namespace jetagent
