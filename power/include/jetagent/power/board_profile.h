// Board profiles: per Jetson family, the rails to expect, which one is the module's input power,
// the thermal zones worth showing and the readings known to be bogus. Written as YAML in
// firmware-config/boards/ and compiled into the binary; a user may point at their own file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "jetagent/base/status.h"
#include "jetagent/hal/board_identity.h"

namespace jetagent {

// A thermal reading that is not a temperature (a sensor that is gated off or not a sensor at all).
struct BadThermalReading {
    std::string zone; // zone type it applies to; "" = every zone
    int64_t milliCelsius = 0; // the raw value that means "offline"
    std::string why; // shown to the user: "power-gated", "constant, not a sensor"
};

struct BoardProfile {
    std::string id; // "orin-nano-nx"; the file's stem
    std::string name; // "Jetson Orin Nano / Orin NX"
    std::string source; // where it was read from ("built-in boards/orin-nano-nx.yaml" or a path)

    // Matching (any hit counts; the best-scoring profile wins, see selectBoardProfile).
    std::vector<std::string> matchCompatible; // substrings of a /proc/device-tree/compatible entry
    std::vector<std::string> matchModel; // substrings of /proc/device-tree/model
    std::vector<int> matchChipIds; // tegra_chip_id values
    bool matchAnyHost = false; // the generic profile: matches anything, lowest score

    std::vector<std::string> expectedRails; // names as discovery reports them
    std::string totalRail; // the module's input power rail; "" = the total is the sum of
                           // top-level rails and only an estimate
    std::string totalNote; // why the total is what it is, shown beside it
    std::map<std::string, std::string> railAliases; // discovered name -> name to report
    std::vector<std::string> thermalZones; // zone types worth showing, in display order
    std::vector<BadThermalReading> badReadings;
    std::vector<std::string> notes; // known quirks, printed by `jetagent power --board-info`
};

// The profiles built from firmware-config/boards/*.yaml at compile time, in file-name order.
const std::vector<BoardProfile>& builtinBoardProfiles();
// Their ids (each file's name without .yaml, which a profile's id must equal), without parsing
// them: what the command line's help lists, so that building it costs no YAML parsing.
std::vector<std::string> builtinBoardProfileIds();

// Parses one profile. `name` stands for the file in messages; errors name it, the line and the key.
Expected<BoardProfile> parseBoardProfile(const std::string& yamlText, const std::string& name);
Expected<BoardProfile> loadBoardProfile(const std::string& path);

// How well a profile matches an identity: 0 = not at all; compatible > model > chip id > any host.
int boardProfileScore(const BoardProfile& profile, const BoardIdentity& identity);

struct BoardSelection {
    BoardProfile profile;
    bool matched = false; // false: an unknown board, running on the generic profile and
                          // discovered sensors only
    std::string reason; // one line: "matched compatible nvidia,p3767" / "unknown board ..."
};

// `board` is "auto" (best built-in match; the generic profile when none), a built-in profile id,
// or a path to a YAML file. An unknown id lists the built-in ones.
Expected<BoardSelection> selectBoardProfile(
    const std::string& board, const BoardIdentity& identity);

} // namespace jetagent
