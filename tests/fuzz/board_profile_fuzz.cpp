// Fuzz target: board profiles (power.board: PATH), read as a file the user names, then matched
// against the fixture boards' identities and used to classify thermal readings, as the power
// monitor does.
#include <cstdio>
#include <cstdlib>

#include "fuzz_support.h"
#include "jetagent/fixtures/fixture_boards.h"
#include "jetagent/power/board_profile.h"
#include "jetagent/power/board_state.h"

namespace {

// Profiles are a few kilobytes.
constexpr size_t kMaxProfileBytes = 32 * 1024;
constexpr size_t kMaxInternedReason = 48;

// The identities of the fixture boards, as detectBoard reads them from their trees.
const std::vector<jetagent::BoardIdentity>& identities()
{
    static const std::vector<jetagent::BoardIdentity> all = [] {
        std::vector<jetagent::BoardIdentity> out;
        for (const auto& board : jetagent::fixtures::fixtureBoards()) {
            jetagent::BoardIdentity identity;
            identity.model = board.model;
            identity.compatible = board.compatible;
            identity.chip = board.compatible.empty() ? "" : board.compatible.back();
            identity.tegraChipId = board.tegraChipId;
            identity.cpuModel = board.cpuModelName;
            out.push_back(identity);
        }
        return out;
    }();
    return all;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace jetagent;
    if (size > kMaxProfileBytes)
        return -1;
    const std::string path = fuzz::scratchDirectory() + "/profile.yaml";
    fuzz::writeFileOrDie(path, std::string(reinterpret_cast<const char*>(data), size));
    // Selected as on one of the boards (which one varies with the input), scored against all.
    const BoardIdentity& board = identities()[size % identities().size()];
    auto selected = selectBoardProfile(path, board);
    if (!selected) {
        if (selected.status().message().find(path) == std::string::npos) {
            std::fprintf(stderr, "a rejected profile must be named in the error: %s\n",
                selected.status().message().c_str());
            std::abort();
        }
        return 0;
    }
    const BoardProfile& profile = selected->profile;
    for (const BoardIdentity& identity : identities())
        (void)boardProfileScore(profile, identity);
    // A bad reading's reason is kept for the life of the process (as the monitor's profiles are),
    // so profiles with long ones are not classified: the fuzzer's millions of profiles must not
    // fill its memory with reasons.
    for (const BadThermalReading& bad : profile.badReadings)
        if (bad.why.size() > kMaxInternedReason)
            return 0;
    for (const std::string& zone : profile.thermalZones)
        for (const int64_t milli : {int64_t {-256000}, int64_t {45500}, int64_t {100000}})
            (void)classifyThermalReading(0, milli, zone, profile);
    for (const BadThermalReading& bad : profile.badReadings) {
        const ZoneReading reading = classifyThermalReading(0, bad.milliCelsius, bad.zone, profile);
        if (reading.online || reading.offlineReason == nullptr) {
            std::fprintf(stderr, "a listed bad reading (%lld) of zone '%s' reads as online\n",
                static_cast<long long>(bad.milliCelsius), bad.zone.c_str());
            std::abort();
        }
    }
    return 0;
}
