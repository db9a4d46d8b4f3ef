// Board identity from the device tree, /etc/nv_tegra_release, the tegra_fuse module and
// /proc/cpuinfo.
#include "jetagent/hal/board_identity.h"

#include <cctype>
#include <cstdlib>

#include "jetagent/base/text.h"

namespace jetagent {

namespace {

bool startsWith(const std::string& text, const std::string& prefix)
{
    return text.compare(0, prefix.size(), prefix) == 0;
}

// Splits a device-tree string list (each entry NUL-terminated) into its non-empty entries.
std::vector<std::string> splitNulList(const std::string& bytes)
{
    std::vector<std::string> entries;
    for (const std::string& field : splitFields(bytes, '\0'))
        if (std::string entry = trimSpace(field); !entry.empty())
            entries.push_back(std::move(entry));
    return entries;
}

// "nvidia,tegra234" -> 234; 0 for anything that is not nvidia,tegra followed by digits only. AGX
// Orin lists "nvidia,tegra23x" after "nvidia,tegra234", which names a family, not a chip.
int tegraNumber(const std::string& compatible)
{
    static const std::string prefix = "nvidia,tegra";
    if (!startsWith(compatible, prefix) || compatible.size() == prefix.size())
        return 0;
    int number = 0;
    for (size_t i = prefix.size(); i < compatible.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(compatible[i])) || number > 100000)
            return 0;
        number = number * 10 + (compatible[i] - '0');
    }
    return number;
}

std::string socFromChipId(int chipId)
{
    switch (chipId) {
    case 0x21: return "T210"; // 33: Nano, TX1
    case 0x18: return "T186"; // 24: TX2
    case 0x19: return "T194"; // 25: Xavier
    case 0x23: return "T234"; // 35: Orin
    default: return ""; // Thor's value is not confirmed; its compatible names the chip
    }
}

// L4T major release -> JetPack generation. R34 was the JetPack 5.0 developer preview.
int jetpackFromL4t(int major)
{
    switch (major) {
    case 32: return 4;
    case 34:
    case 35: return 5;
    case 36: return 6;
    case 38: return 7;
    default: return 0;
    }
}

// The leading decimal number of `text` from `pos`; -1 when there is none.
int leadingNumber(const std::string& text, size_t pos)
{
    if (pos >= text.size() || !std::isdigit(static_cast<unsigned char>(text[pos])))
        return -1;
    int value = 0;
    while (
        pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) && value < 100000)
        value = value * 10 + (text[pos++] - '0');
    return value;
}

// "# R36 (release), REVISION: 4.3, GCID: ..." -> ("R36.4.3", 36). The revision may have one or
// more parts ("4.3", "7.1", "2.0"); without a REVISION field the release is "R36".
void parseTegraRelease(const std::string& text, BoardIdentity& identity)
{
    const std::string firstLine = text.substr(0, text.find('\n'));
    const size_t r = firstLine.find("# R");
    if (r == std::string::npos)
        return;
    const int major = leadingNumber(firstLine, r + 3);
    if (major <= 0)
        return;
    identity.l4tMajor = major;
    identity.jetpack = jetpackFromL4t(major);
    identity.l4tRelease = "R" + std::to_string(major);

    static const std::string revisionKey = "REVISION:";
    const size_t rev = firstLine.find(revisionKey);
    if (rev == std::string::npos)
        return;
    size_t pos = rev + revisionKey.size();
    while (pos < firstLine.size() && firstLine[pos] == ' ')
        ++pos;
    std::string revision;
    while (pos < firstLine.size() &&
        (std::isdigit(static_cast<unsigned char>(firstLine[pos])) || firstLine[pos] == '.'))
        revision += firstLine[pos++];
    while (!revision.empty() && revision.back() == '.')
        revision.pop_back();
    if (!revision.empty())
        identity.l4tRelease += "." + revision;
}

// The value of the first line of `text` that is `key`, blanks, `separator`, value; with
// blanks and double quotes trimmed: /proc/cpuinfo's "model name : ..." (x86 hosts have it; most
// Arm kernels do not) and /etc/os-release's PRETTY_NAME="...". "" when there is none.
std::string keyedLineValue(const std::string& text, const std::string& key, char separator)
{
    for (const std::string& line : splitLines(text)) {
        if (startsWith(line, key)) {
            const size_t at = line.find_first_not_of(" \t", key.size());
            if (at != std::string::npos && line[at] == separator) {
                std::string value = trimSpace(line.substr(at + 1));
                if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
                    value = value.substr(1, value.size() - 2);
                return value;
            }
        }
    }
    return "";
}

// The number of CPUs in a kernel CPU list ("0-3,5" is 5); 0 when it does not parse.
int countCpuList(const std::string& list)
{
    int count = 0;
    for (const std::string& part : splitFields(trimSpace(list), ',')) {
        const size_t dash = part.find('-');
        char* end = nullptr;
        const long first = std::strtol(part.c_str(), &end, 10);
        if (end == part.c_str() || first < 0)
            return 0;
        long last = first;
        if (dash != std::string::npos) {
            const char* tail = part.c_str() + dash + 1;
            last = std::strtol(tail, &end, 10);
            if (end == tail || last < first)
                return 0;
        }
        if (*end != '\0' || last - first >= 65536)
            return 0;
        count += static_cast<int>(last - first + 1);
    }
    return count;
}

} // namespace

bool BoardIdentity::isJetson() const
{
    if (tegraChipId != 0 || l4tMajor != 0 || tegraNumber(chip) != 0)
        return true;
    for (const auto& entry : compatible)
        if (startsWith(entry, "nvidia,"))
            return true;
    return false;
}

std::string BoardIdentity::describe() const
{
    if (!isJetson()) {
        const std::string& what = !model.empty() ? model : cpuModel;
        return what.empty() ? "Linux host" : "Linux host (" + what + ")";
    }
    std::string details;
    auto add = [&details](
                   const std::string& part) { details += (details.empty() ? "" : ", ") + part; };
    if (!soc.empty())
        add(soc);
    else if (!chip.empty())
        add(chip);
    if (!l4tRelease.empty())
        add("L4T " + l4tRelease);
    if (jetpack != 0)
        add("JetPack " + std::to_string(jetpack));
    const std::string name = model.empty() ? "NVIDIA Jetson (model unknown)" : model;
    return details.empty() ? name : name + " (" + details + ")";
}

BoardIdentity detectBoard(const SysfsRoot& root)
{
    BoardIdentity identity;

    if (auto model = root.readBytes("/proc/device-tree/model")) {
        const std::string& bytes = model.value();
        identity.model = trimSpace(bytes.substr(0, bytes.find('\0')));
    }

    if (auto compatible = root.readBytes("/proc/device-tree/compatible"))
        identity.compatible = splitNulList(compatible.value());
    // The chip is the last entry, except that a family name may follow it ("nvidia,tegra23x"
    // after "nvidia,tegra234" on AGX Orin): prefer the last entry that names a numbered chip.
    for (auto it = identity.compatible.rbegin(); it != identity.compatible.rend(); ++it) {
        if (tegraNumber(*it) != 0) {
            identity.chip = *it;
            break;
        }
    }
    if (identity.chip.empty() && !identity.compatible.empty())
        identity.chip = identity.compatible.back();

    if (auto release = root.readText("/etc/nv_tegra_release"))
        parseTegraRelease(release.value(), identity);

    if (auto chipId = root.readInt("/sys/module/tegra_fuse/parameters/tegra_chip_id"))
        identity.tegraChipId = static_cast<int>(*chipId);

    if (const int number = tegraNumber(identity.chip))
        identity.soc = "T" + std::to_string(number);
    else
        identity.soc = socFromChipId(identity.tegraChipId);

    if (auto cpuinfo = root.readText("/proc/cpuinfo"))
        identity.cpuModel = keyedLineValue(cpuinfo.value(), "model name", ':');
    if (auto release = root.readText("/etc/os-release"))
        identity.os = keyedLineValue(release.value(), "PRETTY_NAME", '=');
    if (auto online = root.readText("/sys/devices/system/cpu/online"))
        identity.onlineCpus = countCpuList(online.value());

    return identity;
}

} // namespace jetagent
