// `jetagent probe cameras`' output: hal's camera descriptions as a report for people and as JSON.
#include "camera_report.h"

#include <nlohmann/json.hpp>

#include "jetagent/hal/pixel_convert.h"
#include "jetagent/hal/v4l2_device.h"

namespace jetagent {

namespace {

std::string join(const std::vector<std::string>& parts, const char* separator)
{
    std::string text;
    for (const std::string& part : parts)
        text += (text.empty() ? "" : separator) + part;
    return text;
}

std::string ratesLine(const CameraFrameSize& size)
{
    if (!size.intervalRange.empty())
        return size.intervalRange;
    if (size.intervals.empty())
        return "rates not listed";
    std::vector<std::string> rates;
    for (const CameraInterval& interval : size.intervals)
        rates.push_back(v4l2RateText(interval.fps()));
    return join(rates, ", ") + " fps";
}

} // namespace

std::string formatCameraReport(const std::vector<CameraDescription>& cameras)
{
    if (cameras.empty())
        return "no video devices found (is the camera plugged in and its driver loaded?)\n";
    std::string out;
    for (const CameraDescription& camera : cameras) {
        out += camera.path + ":";
        if (!camera.driver.empty())
            out += " " + camera.card + " (" + camera.driver + " " + camera.version + "), bus " +
                camera.busInfo;
        out += "\n";
        if (!camera.error.empty())
            out += "  error: " + camera.error + "\n";
        if (!camera.capabilities.empty())
            out += "  capabilities: " + join(camera.capabilities, ", ") + "\n";
        if (!camera.driver.empty() && !camera.capture)
            out += "  not a video capture node\n";
        if (!camera.formats.empty())
            out += "  formats:\n";
        for (const CameraFormat& format : camera.formats) {
            std::vector<std::string> notes;
            if (format.compressed)
                notes.emplace_back("compressed");
            if (!format.convertible)
                notes.emplace_back("jetagent cannot convert it");
            out += "    " + fourccName(format.fourcc) + "  " + format.description +
                (notes.empty() ? "" : " (" + join(notes, ", ") + ")") + "\n";
            if (!format.sizeRange.empty())
                out += "      sizes " + format.sizeRange + "; at the corners:\n";
            for (const CameraFrameSize& size : format.sizes)
                out += "      " + std::to_string(size.width) + "x" + std::to_string(size.height) +
                    ": " + ratesLine(size) + "\n";
        }
        if (!camera.controls.empty())
            out += "  controls:\n";
        size_t width = 0;
        for (const CameraControlInfo& control : camera.controls)
            width = std::max(width, control.name.size() + control.type.size() + 3);
        for (const CameraControlInfo& control : camera.controls) {
            std::string head = control.name + " (" + control.type + ")";
            head.resize(std::max(width, head.size()), ' ');
            std::string line = "    " + head + " :";
            if (control.type == "int" || control.type == "int64" || control.type == "menu" ||
                control.type == "intmenu" || control.type == "bitmask")
                line += " min=" + std::to_string(control.minimum) +
                    " max=" + std::to_string(control.maximum);
            if (control.type == "int" || control.type == "int64")
                line += " step=" + std::to_string(control.step);
            if (control.type != "button")
                line += " default=" + std::to_string(control.defaultValue) +
                    " value=" + std::to_string(control.value);
            for (const auto& entry : control.menu)
                if (entry.first == control.value)
                    line += " (" + entry.second + ")";
            if (!control.flags.empty())
                line += " flags=" + join(control.flags, ",");
            out += line + "\n";
            for (const auto& entry : control.menu)
                out += "        " + std::to_string(entry.first) + ": " + entry.second + "\n";
        }
    }
    return out;
}

nlohmann::json cameraReportJson(const std::vector<CameraDescription>& cameras)
{
    nlohmann::json out = nlohmann::json::array();
    for (const CameraDescription& camera : cameras) {
        nlohmann::json formats = nlohmann::json::array();
        for (const CameraFormat& format : camera.formats) {
            nlohmann::json sizes = nlohmann::json::array();
            for (const CameraFrameSize& size : format.sizes) {
                nlohmann::json intervals = nlohmann::json::array();
                nlohmann::json rates = nlohmann::json::array();
                for (const CameraInterval& interval : size.intervals) {
                    intervals.push_back(
                        {{"numerator", interval.numerator}, {"denominator", interval.denominator}});
                    rates.push_back(interval.fps());
                }
                sizes.push_back(
                    {{"width", size.width}, {"height", size.height}, {"intervals", intervals},
                        {"fps", rates}, {"interval_range", size.intervalRange}});
            }
            formats.push_back(
                {{"fourcc", fourccName(format.fourcc)}, {"description", format.description},
                    {"compressed", format.compressed}, {"convertible", format.convertible},
                    {"size_range", format.sizeRange}, {"sizes", sizes}});
        }
        nlohmann::json controls = nlohmann::json::array();
        for (const CameraControlInfo& control : camera.controls) {
            nlohmann::json menu = nlohmann::json::array();
            for (const auto& entry : control.menu)
                menu.push_back({{"index", entry.first}, {"name", entry.second}});
            controls.push_back({{"name", control.name}, {"label", control.label},
                {"type", control.type}, {"minimum", control.minimum}, {"maximum", control.maximum},
                {"step", control.step}, {"default", control.defaultValue}, {"value", control.value},
                {"flags", control.flags}, {"menu", menu}});
        }
        out.push_back({{"path", camera.path}, {"error", camera.error}, {"driver", camera.driver},
            {"card", camera.card}, {"bus_info", camera.busInfo}, {"version", camera.version},
            {"capture", camera.capture}, {"capabilities", camera.capabilities},
            {"formats", formats}, {"controls", controls}});
    }
    return out;
}

} // namespace jetagent
