// `jetagent report SWEEP_DIR SWEEP_DIR ...`: real sweeps of the demo classifier taken on fixture
// boards (so each sweep's context differs for real) compared; the page's data and the Markdown
// checked against each sweep's own sweep.json; partial overlaps, identical contexts, the refusal of
// sweeps that share no cell, mixed kinds of directory and outputs into an input.
#include <filesystem>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "devices_report.h"
#include "jetagent/fixtures/fixture_boards.h"
#include "sysfs_fixture.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace jetagent {
namespace {

using json = nlohmann::json;
using test::readFile;
using test::sourcePath;
using test::TempDir;

bool has(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// The sweeps every test compares, taken once (a second or two each):
//   orin-a    fixture Orin Nano, shapes_cnn at batch 1 and 2
//   agx       fixture AGX Orin,  shapes_cnn at batch 1 and 2
//   orin-c    fixture Orin Nano again (the same context as orin-a), batch 2 and 4
//   host      this host, no rails: shapes_cnn and `other` (the same file) at batch 1
//   other     this host, `other` alone at batch 1: nothing in common with orin-a
class DevicesReport : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        dir_ = new TempDir;
        const std::string models = *dir_ / "models";
        fs::create_directories(models);
        fs::create_symlink(sourcePath("models/shapes_cnn.onnx"), models + "/shapes_cnn.onnx");
        fs::create_symlink(sourcePath("models/shapes_cnn.onnx"), models + "/other.onnx");
        auto orin = test::SysfsFixture::create(fixtures::orinNanoJp6());
        auto agx = test::SysfsFixture::create(fixtures::agxOrinJp5());
        ASSERT_TRUE(orin.ok() && agx.ok());
        sweep("orin-a", "shapes_cnn", "1,2", orin.value()->hostRoot());
        sweep("agx", "shapes_cnn", "1,2", agx.value()->hostRoot());
        sweep("orin-c", "shapes_cnn", "2,4", orin.value()->hostRoot());
        sweep("host", "shapes_cnn,other", "1", "");
        sweep("other", "other", "1", "");
    }
    static void TearDownTestSuite()
    {
        delete dir_;
        dir_ = nullptr;
    }

    static void sweep(const std::string& name, const std::string& models, const std::string& batch,
        const std::string& sysfsRoot)
    {
        std::vector<std::string> args = {"sweep", "--models", models, "--model-dir",
            *dir_ / "models", "--engines", "xnnpack", "--batch", batch, "-n", "20", "--warmup", "1",
            "--rounds", "1", "-o", path(name)};
        if (!sysfsRoot.empty())
            args.insert(args.end(), {"--sysfs-root", sysfsRoot, "--idle", "0.2"});
        const auto r = test::runJetagent(args, dir_->path());
        ASSERT_EQ(r.exitCode, 0) << name << ": " << r.out << r.err;
    }
    static std::string path(const std::string& name) { return *dir_ / name; }
    static json sweepOf(const std::string& name)
    {
        return json::parse(readFile(path(name) + "/sweep.json"));
    }

    // The report of `names` written to a fresh directory: the page's data, the Markdown, the run.
    struct Report {
        test::CommandResult run;
        json data;
        std::string markdown;
        std::string html;
    };
    Report report(const std::vector<std::string>& names)
    {
        Report r;
        std::vector<std::string> args = {"report"};
        for (const std::string& n : names)
            args.push_back(path(n));
        args.insert(args.end(), {"-o", out_ / "devices.html"});
        r.run = test::runJetagent(args, out_.path());
        if (r.run.exitCode != 0)
            return r;
        r.html = readFile(out_ / "devices.html");
        r.markdown = readFile(out_ / "devices.md");
        const std::string open = "<script type=\"application/json\" id=\"report-data\">";
        const size_t at = r.html.find(open) + open.size();
        r.data = json::parse(r.html.substr(at, r.html.find("</script>", at) - at));
        return r;
    }

    static TempDir* dir_;
    TempDir out_;
};

TempDir* DevicesReport::dir_ = nullptr;

// The sweep's cell of `model` at `batch`.
const json& cellOf(const json& sweep, const std::string& model, int batch)
{
    for (const json& c : sweep["cells"])
        if (c["model"] == model && c["batch"] == batch)
            return c;
    static const json none;
    ADD_FAILURE() << "no cell " << model << " at batch " << batch;
    return none;
}

// A Markdown row as devicesMarkdown() writes it, from the sweep's own figures.
std::string mdRow(const std::string& label, const json& c, const std::string& speedup)
{
    return "| " + label + " | " + formatValue(c["latency_p50_ms"]) + " | " +
        formatValue(c["latency_p99_ms"]) + " | " + formatValue(c["throughput_ips"]) + " | " +
        speedup + " | " + formatValue(c["energy_mj"]) + " | ok |";
}

TEST_F(DevicesReport, TwoBoardsCellByCellFromEachSweepsOwnFigures)
{
    const Report r = report({"orin-a", "agx"});
    ASSERT_EQ(r.run.exitCode, 0) << r.run.out << r.run.err;
    const json a = sweepOf("orin-a"), b = sweepOf("agx");
    ASSERT_EQ(r.data["format"], "jetagent-devices");
    const json& devices = r.data["devices"];
    ASSERT_EQ(devices.size(), 2u);
    // Labelled by each sweep's recorded context: the module and its power mode.
    const std::string la = devices[0]["label"], lb = devices[1]["label"];
    EXPECT_TRUE(has(la, "Orin Nano")) << la;
    EXPECT_TRUE(has(lb, "AGX Orin")) << lb;
    for (const auto& [label, sweep] : {std::pair<std::string, json> {la, a}, {lb, b}}) {
        ASSERT_TRUE(sweep["context"]["module"].is_string()) << sweep["context"];
        EXPECT_TRUE(has(label, sweep["context"]["module"].get<std::string>())) << label;
        if (sweep["context"]["power_mode"].is_string()) {
            EXPECT_TRUE(has(label, sweep["context"]["power_mode"].get<std::string>())) << label;
        }
    }
    EXPECT_NE(la, lb);

    ASSERT_EQ(r.data["cells"].size(), 2u);
    for (const json& cell : r.data["cells"]) {
        const int batch = cell["batch"];
        EXPECT_EQ(cell["model"], "shapes_cnn");
        EXPECT_EQ(cell["engine"], "xnnpack");
        EXPECT_EQ(cell["precision"], "fp32");
        EXPECT_EQ(cell["measured_on"], 2);
        const json& ca = cellOf(a, "shapes_cnn", batch);
        const json& cb = cellOf(b, "shapes_cnn", batch);
        const json& ea = cell["devices"][0];
        const json& eb = cell["devices"][1];
        for (const char* key : {"latency_p50_ms", "latency_p99_ms", "latency_mean_ms",
                 "throughput_ips", "energy_mj"}) {
            EXPECT_EQ(ea[key], ca[key]) << key;
            EXPECT_EQ(eb[key], cb[key]) << key;
        }
        // Both fixture boards have rails: energy per inference on each.
        EXPECT_TRUE(ea["energy_mj"].is_number()) << ea;
        EXPECT_TRUE(eb["energy_mj"].is_number()) << eb;
        EXPECT_DOUBLE_EQ(ea["speedup"].get<double>(), 1.0);
        const double speedup =
            cb["throughput_ips"].get<double>() / ca["throughput_ips"].get<double>();
        EXPECT_DOUBLE_EQ(eb["speedup"].get<double>(), speedup);

        const std::string heading = "## shapes_cnn · xnnpack · fp32 · batch " +
            std::to_string(batch) + " (measured on 2 of 2)";
        EXPECT_TRUE(has(r.markdown, heading)) << r.markdown;
        EXPECT_TRUE(has(r.markdown, mdRow(la, ca, "1x"))) << mdRow(la, ca, "1x") << r.markdown;
        const std::string rowB = mdRow(lb, cb, formatNumber(speedup) + "x");
        EXPECT_TRUE(has(r.markdown, rowB)) << rowB << "\n" << r.markdown;
    }
    // The page draws the speed-up, latency and energy charts.
    EXPECT_TRUE(has(r.html, "id=\"chart-speedup\"")) << r.html.size();
    EXPECT_TRUE(has(r.html, "id=\"chart-energy\""));
    EXPECT_FALSE(has(r.html, "chart-energy-omitted"));
    EXPECT_TRUE(has(r.run.out, "2 cells, 2 measured on every device")) << r.run.out;
}

TEST_F(DevicesReport, CellsMissingOnADeviceAreShownAndTheSameBoardTwiceIsTold)
{
    const Report r = report({"orin-a", "orin-c"});
    ASSERT_EQ(r.run.exitCode, 0) << r.run.out << r.run.err;
    const std::string la = r.data["devices"][0]["label"], lc = r.data["devices"][1]["label"];
    EXPECT_NE(la, lc);
    EXPECT_TRUE(has(la, "(orin-a)")) << la;
    EXPECT_TRUE(has(lc, "(orin-c)")) << lc;
    std::map<int, const json*> byBatch;
    for (const json& cell : r.data["cells"])
        byBatch[cell["batch"].get<int>()] = &cell;
    ASSERT_EQ(byBatch.size(), 3u); // batch 1 (a only), 2 (both), 4 (c only)
    EXPECT_EQ((*byBatch[1])["devices"][1]["status"], "missing");
    EXPECT_EQ((*byBatch[1])["measured_on"], 1);
    EXPECT_EQ((*byBatch[2])["measured_on"], 2);
    EXPECT_EQ((*byBatch[4])["devices"][0]["status"], "missing");
    EXPECT_EQ((*byBatch[4])["devices"][1]["status"], "ok");
    // No baseline figure: no speed-up.
    EXPECT_TRUE((*byBatch[4])["devices"][1]["speedup"].is_null());
    EXPECT_TRUE(has(r.markdown, "batch 4 (measured on 1 of 2)")) << r.markdown;
    EXPECT_TRUE(has(r.markdown, "| " + la + " | — | — | — | — | — | missing (not in this sweep) |"))
        << r.markdown;
}

TEST_F(DevicesReport, ADeviceWithoutRailsHasNoEnergy)
{
    const Report r = report({"orin-a", "host"});
    ASSERT_EQ(r.run.exitCode, 0) << r.run.out << r.run.err;
    const json host = sweepOf("host");
    bool shared = false;
    for (const json& cell : r.data["cells"]) {
        const json& e = cell["devices"][1];
        if (cell["model"] != "shapes_cnn" || cell["batch"] != 1)
            continue;
        shared = true;
        EXPECT_TRUE(e["energy_mj"].is_null()) << e;
        EXPECT_TRUE(has(r.markdown,
            mdRow(r.data["devices"][1]["label"], cellOf(host, "shapes_cnn", 1),
                formatNumber(e["speedup"].get<double>()) + "x")))
            << r.markdown;
    }
    EXPECT_TRUE(shared);
}

TEST_F(DevicesReport, SweepsThatShareNoCellAreRefused)
{
    const Report r = report({"orin-a", "other"});
    EXPECT_EQ(r.run.exitCode, 2);
    EXPECT_TRUE(has(r.run.err, "share no cells")) << r.run.err;
    EXPECT_TRUE(has(r.run.err, path("orin-a") + " (")) << r.run.err;
    EXPECT_TRUE(has(r.run.err, path("other") + " (")) << r.run.err;
    EXPECT_TRUE(has(r.run.err, "other · xnnpack · fp32 · batch 1")) << r.run.err;
    EXPECT_TRUE(has(r.run.err, "shapes_cnn · xnnpack · fp32 · batch 2")) << r.run.err;
    EXPECT_FALSE(fs::exists(out_ / "devices.html"));
    EXPECT_FALSE(fs::exists(out_ / "devices.md"));
}

TEST_F(DevicesReport, MixedKindsOneSweepAndOutputsIntoAnInputAreRefused)
{
    fs::create_directory(out_ / "run");
    test::writeFile(out_ / "run/summary.json", "{}");
    auto mixed = test::runJetagent({"report", path("orin-a"), out_ / "run"}, out_.path());
    EXPECT_EQ(mixed.exitCode, 2);
    EXPECT_TRUE(has(mixed.err, "not both")) << mixed.err;
    EXPECT_TRUE(has(mixed.err, out_ / "run")) << mixed.err;

    auto twice = test::runJetagent({"report", path("orin-a"), path("orin-a")}, out_.path());
    EXPECT_EQ(twice.exitCode, 2);
    EXPECT_TRUE(has(twice.err, "are the same sweep")) << twice.err;

    auto one = test::runJetagent({"report", path("orin-a")}, out_.path());
    EXPECT_EQ(one.exitCode, 2);
    EXPECT_TRUE(has(one.err, "is a sweep directory")) << one.err;

    auto into = test::runJetagent(
        {"report", path("orin-a"), path("agx"), "-o", path("agx") + "/devices.html"}, out_.path());
    EXPECT_EQ(into.exitCode, 2);
    EXPECT_TRUE(has(into.err, "inputs")) << into.err;
    EXPECT_FALSE(fs::exists(path("agx") + "/devices.html"));
}

TEST_F(DevicesReport, DefaultNamesInTheCurrentDirectoryAndAPathGivenIsNotOverwritten)
{
    auto first = test::runJetagent({"report", path("orin-a"), path("agx")}, out_.path());
    ASSERT_EQ(first.exitCode, 0) << first.err;
    EXPECT_TRUE(fs::is_regular_file(out_ / kDevicesReportName));
    EXPECT_TRUE(fs::is_regular_file(out_ / "devices-report.md"));
    auto again = test::runJetagent({"report", path("orin-a"), path("agx")}, out_.path());
    EXPECT_EQ(again.exitCode, 0) << again.err; // the default names are replaced

    test::writeFile(out_ / "mine.md", "mine");
    auto kept = test::runJetagent(
        {"report", path("orin-a"), path("agx"), "-o", out_ / "mine.html"}, out_.path());
    EXPECT_EQ(kept.exitCode, 2);
    EXPECT_TRUE(has(kept.err, "mine.md exists")) << kept.err;
    EXPECT_EQ(readFile(out_ / "mine.md"), "mine");
    EXPECT_FALSE(fs::exists(out_ / "mine.html"));
}

// The speed-up by hand: 100 and 250 images/s are 2.5x; a failed cell joins its row.
TEST(DevicesCompare, SpeedupIsTheThroughputRatioByHand)
{
    auto sweep = [](const std::string& board, double throughput, bool fails) {
        json cell = {{"model", "m"}, {"engine", "e"}, {"precision", "fp16"}, {"batch", 4},
            {"threads", 0}, {"status", "ok"}, {"throughput_ips", throughput},
            {"latency_p50_ms", 4000.0 / throughput}};
        json failed = {{"model", "m"}, {"engine", "e"}, {"precision", ""}, {"batch", 8},
            {"threads", 0}, {"status", "failed"}, {"error", "out of memory"}};
        json cells = json::array({cell});
        if (fails)
            cells.push_back(failed);
        return json {
            {"format", "jetagent-sweep"}, {"context", {{"board", board}}}, {"cells", cells}};
    };
    auto c = compareDevices({{"a", sweep("Jetson Nano (T210)", 100, false)},
        {"b", sweep("Jetson AGX Orin (T234)", 250, true)}});
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ((*c)["devices"][0]["label"], "Jetson Nano");
    EXPECT_EQ((*c)["devices"][1]["label"], "Jetson AGX Orin");
    ASSERT_EQ((*c)["cells"].size(), 2u);
    EXPECT_DOUBLE_EQ((*c)["cells"][0]["devices"][1]["speedup"].get<double>(), 2.5);
    EXPECT_EQ((*c)["cells"][1]["devices"][0]["status"], "missing");
    EXPECT_EQ((*c)["cells"][1]["devices"][1]["status"], "failed");
    EXPECT_TRUE(has(devicesMarkdown(*c), "failed: out of memory"));
    EXPECT_FALSE(compareDevices({{"a", sweep("x", 1, false)}}).ok());
}

} // namespace
} // namespace jetagent
