// `jetagent sweep`: the derived tables against hand-computed values, the CSV and JSON schema, study
// files, and sweeps of the demo models: a failing cell, --resume, another study's directory,
// energy on a fixture board whose rails change on a known schedule, and Ctrl-C.
#include <cmath>
#include <csignal>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jetagent/base/text.h"
#include "jetagent/hal/board_identity.h"
#include "run/run_context.h"
#include "sweep.h"
#include "sysfs_fixture.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace jetagent {
namespace {

using test::readFile;
using test::sourcePath;
using test::TempDir;

bool has(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

CellResult cell(const std::string& model, const std::string& engine, int batch, double p50Ms,
    double throughput, double p99Ms = 0)
{
    CellResult c;
    c.key = {model, engine, batch, 0};
    c.ok = true;
    c.figures.latencyP50Ms = p50Ms;
    c.figures.latencyP99Ms = p99Ms > 0 ? p99Ms : p50Ms * 1.5;
    c.figures.throughputIps = throughput;
    c.figures.parameters = 1000;
    c.figures.macs = 2e6;
    return c;
}

TEST(SweepTables, SpeedupOverTheBaselineByHand)
{
    std::vector<CellResult> cells = {cell("m", "base", 1, 10.0, 100),
        cell("m", "fast", 1, 4.0, 250), cell("m", "slow", 1, 20.0, 50),
        cell("n", "fast", 1, 1.0, 1000)};
    CellResult failed = cell("m", "broken", 1, 1.0, 1);
    failed.ok = false;
    cells.push_back(failed);
    const auto rows = speedupTable(cells, "base");
    ASSERT_EQ(rows.size(), 2u); // model n has no baseline cell; the failed cell gives no row
    EXPECT_EQ(rows[0].engine, "fast");
    EXPECT_DOUBLE_EQ(rows[0].speedup, 2.5);
    EXPECT_EQ(rows[1].engine, "slow");
    EXPECT_DOUBLE_EQ(rows[1].speedup, 0.5);
    EXPECT_DOUBLE_EQ(rows[0].parameters, 1000);
    EXPECT_DOUBLE_EQ(rows[0].macs, 2e6);
}

TEST(SweepTables, RtrAseAndBsrByHand)
{
    // Baseline: 100, 180, 320 images/s at batch 1, 2, 4; ASE 1, 0.9, 0.8.
    // Engine:   200, 300, 400 images/s;           RTR 1, 1.5, 2; ASE 1, 0.75, 0.5.
    // BSR = ASE_engine / ASE_base: 1, 0.75 / 0.9, 0.5 / 0.8.
    const std::vector<CellResult> cells = {cell("m", "base", 1, 10, 100),
        cell("m", "base", 2, 11, 180), cell("m", "base", 4, 12, 320), cell("m", "e", 1, 5, 200),
        cell("m", "e", 2, 6, 300), cell("m", "e", 4, 10, 400)};
    const auto rows = scalingTable(cells, "base");
    ASSERT_EQ(rows.size(), 6u);
    const ScalingRow& e4 = rows[5];
    EXPECT_EQ(e4.engine, "e");
    EXPECT_EQ(e4.batch, 4);
    EXPECT_DOUBLE_EQ(e4.rtr, 2.0);
    EXPECT_DOUBLE_EQ(e4.ase, 0.5);
    EXPECT_DOUBLE_EQ(e4.bsr, 0.5 / 0.8);
    const ScalingRow& e2 = rows[4];
    EXPECT_DOUBLE_EQ(e2.rtr, 1.5);
    EXPECT_DOUBLE_EQ(e2.ase, 0.75);
    EXPECT_DOUBLE_EQ(e2.bsr, 0.75 / 0.9);
    EXPECT_DOUBLE_EQ(rows[2].ase, 0.8); // the baseline's own
    EXPECT_DOUBLE_EQ(rows[2].bsr, 1.0);
}

TEST(SweepTables, ScalingNeedsBatchOneAndBestRespectsTheBudget)
{
    const std::vector<CellResult> cells = {cell("m", "e", 2, 5, 400, 9),
        cell("m", "e", 4, 8, 500, 12), cell("k", "e", 1, 2, 500, 3), cell("k", "f", 1, 1, 900, 40)};
    EXPECT_TRUE(scalingTable(cells, "e").empty()); // m has no batch-1 cell, k one batch size
    const auto best = bestUnderBudget(cells, 10.0);
    ASSERT_EQ(best.size(), 2u);
    EXPECT_EQ(best[0].model, "m");
    EXPECT_EQ(best[0].batch, 2); // batch 4 is faster but its p99 (12 ms) is over 10
    EXPECT_EQ(best[1].model, "k");
    EXPECT_EQ(best[1].engine, "e"); // f gives more images/s with a p99 of 40 ms
    EXPECT_TRUE(bestUnderBudget(cells, 0).empty());
}

TEST(SweepOutput, CsvRoundTripsWithUnitsInTheHeader)
{
    CellResult a = cell("resnet18", "xnnpack,fusion=false", 4, 12.5, 320);
    a.backend = "xnnpack";
    a.figures.energyMj = 3.25;
    CellResult b;
    b.key = {"odd,name", "tensorrt:gpu:fp16", 1, 2};
    b.error = "line one\nsaid \"no\", then stopped";
    b.modelPath = "/m/odd,name.onnx";
    const std::string csv = cellsCsv({a, b});
    const auto header = splitFields(splitLines(csv)[0], ',');
    ASSERT_EQ(header.size(), sweepColumns().size());
    for (const char* name : {"latency_p50_ms", "throughput_ips", "energy_mj", "rss_peak_mb",
             "cpu_ms_per_inference", "build_cold_ms", "top5", "gflops", "p99_over_p50"})
        EXPECT_NE(std::find(header.begin(), header.end(), name), header.end()) << name;

    auto back = parseCellsCsv(csv, "results.csv");
    ASSERT_TRUE(back.ok()) << back.status().message();
    ASSERT_EQ(back->size(), 2u);
    EXPECT_TRUE((*back)[0].key == a.key);
    EXPECT_TRUE((*back)[0].ok);
    EXPECT_DOUBLE_EQ((*back)[0].figures.latencyP50Ms, 12.5);
    EXPECT_DOUBLE_EQ((*back)[0].figures.energyMj, 3.25);
    EXPECT_TRUE(std::isnan((*back)[0].figures.top1));
    EXPECT_TRUE((*back)[1].key == b.key);
    EXPECT_FALSE((*back)[1].ok);
    EXPECT_EQ((*back)[1].error, b.error);
    EXPECT_EQ((*back)[1].modelPath, b.modelPath);

    const nlohmann::json j = cellJson(a);
    for (const SweepColumn& c : sweepColumns())
        EXPECT_TRUE(j.contains(c.name)) << c.name;
    EXPECT_TRUE(j["top1"].is_null());
    EXPECT_EQ(j["latency_p50_ms"], 12.5);

    auto bad = parseCellsCsv("model,engine\nx,y\n", "old.csv");
    ASSERT_FALSE(bad.ok());
    EXPECT_TRUE(has(bad.status().message(), "old.csv: line 1: no column 'batch'"))
        << bad.status().message();
    auto ragged = parseCellsCsv(csv + "resnet18,xnnpack\n", "results.csv");
    ASSERT_FALSE(ragged.ok());
    EXPECT_TRUE(has(ragged.status().message(), "results.csv: record 4"))
        << ragged.status().message();
}

TEST(SweepOutput, MarkdownMarksUnsteadyCells)
{
    CellResult steady = cell("resnet18", "xnnpack", 1, 12.5, 80);
    steady.figures.latencyCov = 0.05;
    CellResult noisy = cell("resnet18", "opencv", 1, 30.0, 33);
    noisy.figures.latencyCov = 1.4;
    const nlohmann::json doc = {{"study", {{"name", "t"}}}, {"context", nlohmann::json::object()},
        {"cells", {cellJson(steady), cellJson(noisy)}},
        {"tables",
            {{"speedup", nlohmann::json::array()}, {"scaling", nlohmann::json::array()},
                {"best", nlohmann::json::array()}}}};
    const std::string md = sweepMarkdown(doc);
    EXPECT_TRUE(has(md, "| ok |")) << md;
    EXPECT_TRUE(has(md, "| ok, unsteady (CoV 1.40) |")) << md;
    EXPECT_TRUE(has(md, "over 30% of their mean")) << md;
    noisy.figures.latencyCov = 0.2;
    const nlohmann::json calm = {{"study", doc["study"]}, {"context", doc["context"]},
        {"cells", {cellJson(steady), cellJson(noisy)}}, {"tables", doc["tables"]}};
    EXPECT_FALSE(has(sweepMarkdown(calm), "unsteady"));
}

TEST(SweepStudy, ReadsAFileAndNamesItsMistakes)
{
    TempDir dir;
    test::writeFile(dir / "s.yaml",
        "study: demo\nmodels: [shapes_cnn]\nengines: [xnnpack, opencv]\nbatches: [1, 2]\n"
        "iterations: 20\nlatency_budget_ms: 5\npower: {sysfs_root: /, idle_s: 1}\n");
    auto study = loadStudy(dir / "s.yaml", sourcePath("models"));
    ASSERT_TRUE(study.ok()) << study.status().message();
    EXPECT_EQ(study->name, "demo");
    ASSERT_EQ(study->models.size(), 1u);
    EXPECT_EQ(fs::path(study->models[0]).filename(), "shapes_cnn.onnx");
    EXPECT_EQ(study->baseline, "xnnpack");
    EXPECT_EQ(study->batches, (std::vector<int> {1, 2}));
    EXPECT_DOUBLE_EQ(study->latencyBudgetMs, 5.0);
    EXPECT_EQ(study->sysfsRoot, "/");

    test::writeFile(dir / "bad.yaml", "models: [shapes_cnn]\nbatchs: [1]\niterations: -3\n");
    auto bad = loadStudy(dir / "bad.yaml", sourcePath("models"));
    ASSERT_FALSE(bad.ok());
    const std::string m = bad.status().message();
    EXPECT_TRUE(has(m, "bad.yaml:2")) << m;
    EXPECT_TRUE(has(m, "batches")) << m; // did you mean
    EXPECT_TRUE(has(m, "iterations")) << m;

    test::writeFile(
        dir / "base.yaml", "models: [shapes_cnn]\nengines: [xnnpack]\nbaseline: opencv\n");
    auto base = loadStudy(dir / "base.yaml", sourcePath("models"));
    ASSERT_FALSE(base.ok());
    EXPECT_TRUE(has(base.status().message(), "baseline opencv is not one of the engines"))
        << base.status().message();

    test::writeFile(dir / "missing.yaml", "models: [no_such_model]\n");
    auto missing = loadStudy(dir / "missing.yaml", sourcePath("models"));
    ASSERT_FALSE(missing.ok());
    EXPECT_TRUE(has(missing.status().message(), "export_torchvision.py no_such_model"))
        << missing.status().message();
}

// A quick sweep of the demo classifier on the xnnpack engine, in process.
SweepOptions quickSweep(const std::string& out, std::vector<std::string> models,
    std::vector<std::string> engines = {"xnnpack"})
{
    SweepOptions o;
    o.out = out;
    o.flags.models = std::move(models);
    o.flags.engines = std::move(engines);
    o.flags.iterations = 20;
    o.flags.warmup = 2;
    o.flags.rounds = 2;
    o.given = {"models", "engines", "iterations", "warmup", "rounds"};
    o.modelDir = sourcePath("models");
    // A stand-in for Chart.js (the page is checked in a browser by SweepHtml tests).
    o.chartJs = fs::path(out).parent_path() / "chart-stand-in.js";
    test::writeFile(o.chartJs, "window.Chart = function () {};\n");
    return o;
}

nlohmann::json sweepJson(const std::string& out)
{
    return nlohmann::json::parse(readFile(out + "/sweep.json"));
}

TEST(SweepRun, AFailingCellIsRecordedAndTheSweepGoesOn)
{
    TempDir dir;
    test::writeFile(dir / "broken.onnx", "this is not an ONNX model");
    auto o =
        quickSweep(dir / "out", {dir / "broken.onnx", "shapes_cnn"}, {"xnnpack", "xnnpack:gpu"});
    std::vector<std::string> seen;
    o.onCell = [&](const CellResult& c) { seen.push_back(c.key.model + " " + c.key.engine); };
    o.chartJs = dir / "no-chart.js";
    const Status s = runSweep(o);
    // Everything but the HTML page is written; its Chart.js was not found.
    EXPECT_FALSE(s.ok());
    EXPECT_TRUE(has(s.message(), "HTML report")) << s.message();
    const nlohmann::json j = sweepJson(dir / "out");
    ASSERT_EQ(j["cells"].size(), 4u);
    EXPECT_EQ(j["cells"][0]["model"], "broken");
    EXPECT_EQ(j["cells"][0]["status"], "failed");
    EXPECT_FALSE(j["cells"][0]["error"].get<std::string>().empty());
    EXPECT_EQ(j["cells"][2]["engine"], "xnnpack");
    EXPECT_EQ(j["cells"][2]["status"], "ok") << j["cells"][2].dump();
    EXPECT_GT(j["cells"][2]["latency_p50_ms"].get<double>(), 0);
    EXPECT_EQ(j["cells"][2]["runs"], 20);
    EXPECT_EQ(j["cells"][3]["status"], "failed");
    EXPECT_TRUE(has(j["cells"][3]["error"].get<std::string>(), "gpu")) << j["cells"][3].dump();
    EXPECT_EQ(seen, (std::vector<std::string> {"shapes_cnn xnnpack", "shapes_cnn xnnpack:gpu"}));
    EXPECT_TRUE(fs::exists(dir / "out/results.csv"));
    EXPECT_TRUE(has(readFile(dir / "out/sweep.md"), "failed: "));
}

// Frames of a labelled source (the synthetic shapes know their class), preprocessed as the demo
// config's task says, scored against the model's labels file.
TEST(SweepRun, TopOneAndTopFiveOnALabelledSource)
{
    TempDir dir;
    auto o = quickSweep(dir / "out", {"shapes_cnn"});
    o.flags.inputs = "synthetic://shapes";
    o.flags.labels = sourcePath("models/shapes_labels.txt");
    o.flags.config = sourcePath("firmware-config/demo.yaml");
    o.given.insert(o.given.end(), {"inputs", "labels", "config"});
    const Status s = runSweep(o);
    ASSERT_TRUE(s.ok()) << s.message();
    const nlohmann::json c = sweepJson(dir / "out")["cells"][0];
    EXPECT_EQ(c["labelled_inputs"], 256);
    EXPECT_GE(c["top1"].get<double>(), 0.95) << c.dump();
    EXPECT_GE(c["top5"].get<double>(), c["top1"].get<double>()) << c.dump();
}

TEST(SweepRun, FlagsReplaceTheStudysModelsAndUnknownBackendsAreRefused)
{
    TempDir dir;
    // The shipped study names models this test has not exported: --models replaces them.
    auto o = quickSweep(dir / "out", {"shapes_cnn"});
    o.studyFile = sourcePath("firmware-config/studies/cnn-pre-post.yaml");
    o.given = {"models", "iterations", "warmup", "rounds"};
    const Status s = runSweep(o);
    ASSERT_TRUE(s.ok()) << s.message();
    const nlohmann::json j = sweepJson(dir / "out");
    EXPECT_EQ(j["study"]["name"], "cnn-pre-post");
    EXPECT_EQ(j["cells"].size(), 2u); // opencv and xnnpack (TensorRT is optional)

    auto bad = quickSweep(dir / "bad", {"shapes_cnn"}, {"xnnpack", "bogus"});
    const Status b = runSweep(bad);
    ASSERT_FALSE(b.ok());
    EXPECT_TRUE(has(b.message(), "no backend 'bogus'")) << b.message();
    EXPECT_FALSE(fs::exists(dir / "bad/results.csv"));
}

TEST(SweepRun, ASweepWhoseEveryCellFailedIsAnError)
{
    TempDir dir;
    auto o = quickSweep(dir / "out", {"shapes_cnn"}, {"xnnpack:gpu"});
    const Status s = runSweep(o);
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(has(s.message(), "every cell failed")) << s.message();
    EXPECT_EQ(sweepJson(dir / "out")["cells"][0]["status"], "failed"); // and still written
}

TEST(SweepRun, ResumeRunsOnlyTheCellsNotInTheCsv)
{
    TempDir dir;
    auto o = quickSweep(dir / "out", {"shapes_cnn"}, {"xnnpack", "opencv"});
    o.flags.batches = {1, 2};
    o.given.push_back("batch");
    ASSERT_TRUE(runSweep(o).ok());
    const std::string csv = readFile(dir / "out/results.csv");
    auto lines = splitLines(csv);
    ASSERT_EQ(lines.size(), 5u) << csv; // header + 4 cells

    // Run again: refused without --resume.
    Status again = runSweep(o);
    ASSERT_FALSE(again.ok());
    EXPECT_TRUE(has(again.message(), "--resume")) << again.message();

    // Two cells lost (as if the sweep had been stopped): --resume runs those two alone.
    test::writeFile(dir / "out/results.csv", lines[0] + "\n" + lines[1] + "\n" + lines[2] + "\n");
    std::vector<std::string> ran;
    o.resume = true;
    o.onCell = [&](const CellResult& c) {
        ran.push_back(c.key.engine + "@" + std::to_string(c.key.batch));
    };
    ASSERT_TRUE(runSweep(o).ok());
    EXPECT_EQ(ran, (std::vector<std::string> {"xnnpack@2", "opencv@2"}));
    const nlohmann::json j = sweepJson(dir / "out");
    ASSERT_EQ(j["cells"].size(), 4u);
    EXPECT_EQ(j["cells"][0]["latency_p50_ms"].get<double>(),
        std::stod(splitFields(lines[1], ',')[16])); // kept from the first run, not re-measured
    EXPECT_EQ(j["tables"]["scaling"].size(), 4u);

    // Another matrix in the same directory is refused, resume or not.
    o.flags.batches = {1, 4};
    Status other = runSweep(o);
    ASSERT_FALSE(other.ok());
    EXPECT_TRUE(has(other.message(), "holds another study")) << other.message();
}

TEST(SweepRun, RefusesADirectoryThatHoldsSomethingElse)
{
    TempDir dir;
    fs::create_directory(dir / "out");
    test::writeFile(dir / "out/notes.txt", "mine");
    Status s = runSweep(quickSweep(dir / "out", {"shapes_cnn"}));
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(has(s.message(), "not empty and holds no sweep")) << s.message();
    EXPECT_EQ(readFile(dir / "out/notes.txt"), "mine");
}

// The fixture's total rail reads 3 W while the idle power is measured, then 8 W: the cells' power
// is 8 W, their energy 8 W x the wall time of their runs, the dynamic part (8 - 3) W x the same.
TEST(SweepRun, EnergyFiguresOnAFixtureBoardWithAKnownSchedule)
{
    auto fixture = test::SysfsFixture::create(fixtures::orinNanoJp6());
    ASSERT_TRUE(fixture.ok()) << fixture.status().message();
    test::SysfsFixture& board = *fixture.value();
    ASSERT_TRUE(board.setRailWatts("VDD_IN", 3.0).ok());
    TempDir dir;
    auto o = quickSweep(dir / "out", {"shapes_cnn"});
    o.flags.sysfsRoot = board.hostRoot();
    o.flags.idleSeconds = 0.5;
    o.flags.iterations = 200;
    o.flags.rounds = 4;
    o.given.insert(o.given.end(), {"sysfs-root", "idle"});
    o.onIdleMeasured = [&](double) { ASSERT_TRUE(board.setRailWatts("VDD_IN", 8.0).ok()); };
    const Status run = runSweep(o);
    ASSERT_TRUE(run.ok()) << run.message();
    const nlohmann::json j = sweepJson(dir / "out");
    ASSERT_TRUE(j["idle_power_w"].is_number()) << j.dump();
    EXPECT_NEAR(j["idle_power_w"].get<double>(), 3.0, 0.05);
    const nlohmann::json& c = j["cells"][0];
    ASSERT_EQ(c["status"], "ok") << c.dump();
    ASSERT_TRUE(c["power_w"].is_number()) << c.dump();
    EXPECT_NEAR(c["power_w"].get<double>(), 8.0, 0.08);
    // Energy per inference = power x the runs' wall time / runs.
    const double wallMsPerRun = 200.0 * 1.0 / c["wall_throughput_ips"].get<double>() * 1000 / 200;
    EXPECT_NEAR(c["energy_mj"].get<double>(), 8.0 * wallMsPerRun, 8.0 * wallMsPerRun * 0.02);
    EXPECT_NEAR(
        c["dynamic_energy_mj"].get<double>(), 5.0 * wallMsPerRun, 5.0 * wallMsPerRun * 0.03);
    EXPECT_NEAR(c["inferences_per_j"].get<double>(), 1000.0 / c["energy_mj"].get<double>(),
        1e-6 * c["inferences_per_j"].get<double>());
    // The context describes the fixture's board and says where it was read, beside this host.
    const nlohmann::json& context = j["context"];
    EXPECT_EQ(context["sysfs_root"], board.hostRoot());
    EXPECT_TRUE(has(context["board"].get<std::string>(), "Orin Nano")) << context["board"];
    EXPECT_FALSE(has(context["cpu"].get<std::string>(), "Orin"))
        << "the host's CPU, not the tree's";
    EXPECT_EQ(context["cores"], collectRunContext(detectBoard(SysfsRoot("/"))).cores);
    EXPECT_TRUE(has(context["board"].get<std::string>(),
        "(read from the tree at " + board.hostRoot() + ", not this machine's /sys)"))
        << context["board"];
}

// A model directory where every name the shipped studies use is the demo classifier.
std::string demoModelDir(const TempDir& dir, const std::vector<std::string>& names)
{
    const std::string models = dir / "models";
    fs::create_directories(models);
    for (const std::string& name : names)
        fs::create_symlink(sourcePath("models/shapes_cnn.onnx"), models + "/" + name + ".onnx");
    return models;
}

TEST(SweepStudies, EveryShippedStudyReads)
{
    TempDir dir;
    size_t studies = 0;
    for (const auto& entry : fs::directory_iterator(sourcePath("firmware-config/studies"))) {
        if (entry.path().extension() != ".yaml")
            continue;
        ++studies;
        // The study's model names, from a first read that fails on the missing files.
        std::vector<std::string> names;
        const std::string text = readFile(entry.path().string());
        const auto models = text.substr(text.find("\nmodels: [") + 10);
        for (const std::string& n : splitFields(models.substr(0, models.find(']')), ','))
            names.push_back(trimSpace(n));
        TempDir one;
        auto study = loadStudy(entry.path().string(), demoModelDir(one, names));
        ASSERT_TRUE(study.ok()) << entry.path() << ": " << study.status().message();
        EXPECT_EQ(study->models.size(), names.size()) << entry.path();
        EXPECT_FALSE(study->engines.empty()) << entry.path();
    }
    EXPECT_GE(studies, 4u);
}

// The shipped energy study on a fixture Orin Nano, its models the demo classifier and its runs
// shortened: every cell has power and energy figures.
TEST(SweepStudies, EnergyStudyRunsOnAFixtureBoard)
{
    auto fixture = test::SysfsFixture::create(fixtures::orinNanoJp6());
    ASSERT_TRUE(fixture.ok()) << fixture.status().message();
    TempDir dir;
    const std::string models = demoModelDir(dir, {"mobilenet_v2", "resnet18", "resnet50"});
    const auto r =
        test::runJetagent({"sweep", sourcePath("firmware-config/studies/energy.yaml"),
                              "--model-dir", models, "--sysfs-root", fixture.value()->hostRoot(),
                              "--idle", "0.3", "-n", "40", "--rounds", "2", "-o", dir / "out"},
            dir.path());
    const nlohmann::json j = sweepJson(dir / "out");
    EXPECT_EQ(j["study"]["name"], "energy");
    ASSERT_EQ(j["cells"].size(), 6u) << r.out << r.err; // three models x batch 1 and 8
    for (const auto& c : j["cells"]) {
        EXPECT_EQ(c["status"], "ok") << c.dump();
        EXPECT_TRUE(c["energy_mj"].is_number()) << c.dump();
        EXPECT_GT(c["inferences_per_j"].get<double>(), 0) << c.dump();
        // The fixture's rails do not move: no energy above idle, and no rounding residue.
        EXPECT_EQ(c["dynamic_energy_mj"].get<double>(), 0.0) << c.dump();
    }
    EXPECT_TRUE(j["idle_power_w"].is_number());
}

TEST(SweepCommand, CtrlCWritesWhatIsDoneAndResumeFinishes)
{
    TempDir dir;
    const std::vector<std::string> args = {"sweep", "--models",
        sourcePath("models/shapes_cnn.onnx"), "--engines", "xnnpack", "--batch", "1,2,3,4,5,6",
        "-n", "100", "--warmup", "1", "--rounds", "2", "-o", dir / "out"};
    const int pid = test::spawnJetagent(args, dir.path());
    // Once the first group's cells are in the CSV, stop it.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline &&
        splitLines(fs::exists(dir / "out/results.csv") ? readFile(dir / "out/results.csv") : "")
                .size() < 2)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(kill(pid, SIGINT), 0);
    test::waitExit(pid, 60000);
    const nlohmann::json j = sweepJson(dir / "out");
    if (HasFatalFailure())
        return;
    EXPECT_TRUE(j["interrupted"].get<bool>());
    const size_t done = j["cells"].size();
    EXPECT_GE(done, 1u);
    EXPECT_LT(done, 6u);
    for (const auto& c : j["cells"])
        EXPECT_EQ(c["status"], "ok");
    EXPECT_TRUE(has(readFile(dir / "spawn.out"), "interrupted (--resume continues)"))
        << readFile(dir / "spawn.out");

    auto resumed = args;
    resumed.push_back("--resume");
    auto r = test::runJetagent(resumed, dir.path());
    const nlohmann::json k = sweepJson(dir / "out");
    EXPECT_FALSE(k["interrupted"].get<bool>()) << r.out << r.err;
    EXPECT_EQ(k["cells"].size(), 6u);
}

// A turn of many runs is cut short, not waited for: the timed loop asks for the signal as it goes.
TEST(SweepCommand, CtrlCIsAnsweredWithinATurn)
{
    TempDir dir;
    // One round of a million runs of shapes_cnn: minutes, far longer than the test allows.
    const int pid = test::spawnJetagent(
        {"sweep", "--models", sourcePath("models/shapes_cnn.onnx"), "--engines", "xnnpack", "-n",
            "1000000", "--warmup", "1", "--rounds", "1", "-o", dir / "out"},
        dir.path());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline &&
        !has(readFile(dir / "spawn.out"), "shapes_cnn, batch"))
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::this_thread::sleep_for(std::chrono::milliseconds(500)); // into the timed runs
    const auto sent = std::chrono::steady_clock::now();
    ASSERT_EQ(kill(pid, SIGINT), 0);
    const int code = test::waitExit(pid, 60000);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
    EXPECT_EQ(code, 0);
    EXPECT_LT(took, 20.0) << "the sweep waited for its turn to end";
    const nlohmann::json j = sweepJson(dir / "out");
    EXPECT_TRUE(j["interrupted"].get<bool>());
    EXPECT_TRUE(j["cells"].empty()); // the interrupted group is not recorded
}

} // namespace
} // namespace jetagent
