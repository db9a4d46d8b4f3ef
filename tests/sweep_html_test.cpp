// The sweep's HTML report: its charts, tables, escaping and Chart.js inlining, read from the page.
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sweep_html.h"
#include "sweep_sample.h"
#include "test_support.h"

namespace jetagent {
namespace {

using json = nlohmann::json;
using test::kHostileMarkup;
using test::sampleSweep;
using test::SweepSampleOptions;

// Stands in for Chart.js where the test reads only the page's structure; the browser test
// (tools/check_html_page.py, CTest SweepHtmlPage.Chromium) draws with the real one.
const char* const kChartJsStandIn = "/* Chart.js stand-in */ window.Chart = function () {};";

size_t count(const std::string& text, const std::string& part)
{
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
        ++n;
    return n;
}

std::vector<std::string> matches(const std::string& text, const std::string& pattern)
{
    std::vector<std::string> found;
    const std::regex re(pattern);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
         ++it)
        found.push_back((*it)[1]);
    return found;
}

// The JSON inlined in <script type="application/json" id="ID">.
json inlinedJson(const std::string& page, const std::string& id)
{
    const std::string open = "<script type=\"application/json\" id=\"" + id + "\">";
    const size_t start = page.find(open);
    if (start == std::string::npos)
        return json();
    const size_t from = start + open.size();
    return json::parse(page.substr(from, page.find("</script>", from) - from));
}

const json* chartSpec(const json& specs, const std::string& id)
{
    for (const json& spec : specs)
        if (spec["id"] == id)
            return &spec;
    return nullptr;
}

const std::vector<std::string> kAllCharts = {
    "chart-latency", "chart-throughput", "chart-ase", "chart-bsr", "chart-p99-p50", "chart-energy"};

TEST(SweepHtml, DrawsEveryChartOfAFullSweep)
{
    const std::string page = sweepHtml(sampleSweep(), kChartJsStandIn);
    EXPECT_EQ(matches(page, "<canvas id=\"([^\"]+)\""), kAllCharts);
    EXPECT_NE(page.find("<body data-charts-expected=\"6\">"), std::string::npos);
    const json specs = inlinedJson(page, "report-charts");
    ASSERT_EQ(specs.size(), kAllCharts.size());
    for (size_t i = 0; i < specs.size(); ++i) {
        EXPECT_EQ(specs[i]["id"], kAllCharts[i]);
        EXPECT_FALSE(specs[i]["config"]["data"]["datasets"].empty()) << kAllCharts[i];
    }
    EXPECT_EQ(page.find("-omitted\""), std::string::npos);
    for (const char* table : {"study", "context", "table-speedup", "table-scaling", "table-best",
             "table-accuracy", "table-failed", "table-cells"})
        EXPECT_NE(page.find(std::string("<table id=\"") + table + "\""), std::string::npos)
            << table;
}

TEST(SweepHtml, HostileTextIsShownNeverInterpreted)
{
    const json sweep = sampleSweep();
    const std::string page = sweepHtml(sweep, kChartJsStandIn);
    EXPECT_EQ(page.find(kHostileMarkup), std::string::npos);
    EXPECT_EQ(page.find("<b>"), std::string::npos);
    // Only the page's own five scripts open and close: the capture, Chart.js, two JSON blocks, the
    // drawing script.
    EXPECT_EQ(count(page, "<script"), 5u);
    EXPECT_EQ(count(page, "</script>"), 5u);
    EXPECT_EQ(count(page, "<!--"), 0u);
    // The error is in the failed-cells table as text, and the inlined data reads back unchanged.
    EXPECT_NE(page.find("<td>building the engine failed: &lt;/script&gt;&lt;b&gt;out of memory"
                        "&lt;/b&gt;&lt;!-- (TensorRT)</td>"),
        std::string::npos);
    EXPECT_EQ(inlinedJson(page, "report-data"), sweep);
    EXPECT_NE(
        page.find("<title>jetagent sweep: classic CNNs &lt;pre/post&gt; &amp; scaling</title>"),
        std::string::npos);
}

TEST(SweepHtml, PageFetchesNothing)
{
    const std::string page = sweepHtml(sampleSweep(), kChartJsStandIn);
    EXPECT_EQ(page.find(" src="), std::string::npos);
    EXPECT_EQ(page.find("<link"), std::string::npos);
    EXPECT_EQ(page.find("http"), page.find("http-equiv=\"Content-Security-Policy\""));
    EXPECT_NE(page.find("content=\"default-src 'none';"), std::string::npos);
}

TEST(SweepHtml, LatencyBarsPerModelAndEngineOnALogAxisWithP99)
{
    const json sweep = sampleSweep();
    const json specs = inlinedJson(sweepHtml(sweep, kChartJsStandIn), "report-charts");
    const json* latency = chartSpec(specs, "chart-latency");
    ASSERT_NE(latency, nullptr);
    const json& config = (*latency)["config"];
    EXPECT_EQ(config["type"], "bar");
    EXPECT_EQ(config["options"]["scales"]["y"]["type"], "logarithmic");
    EXPECT_EQ(config["data"]["labels"], json({"resnet18", "mobilenet_v2", "squeezenet1_1"}));
    const json& datasets = config["data"]["datasets"];
    ASSERT_EQ(datasets.size(), 2u);
    EXPECT_EQ(datasets[0]["label"], "xnnpack");
    EXPECT_EQ(datasets[1]["label"], test::kSampleBaseline);
    // resnet18 on xnnpack at batch 1: the cell's p50, with its p99 in the tooltip.
    const json& cell = sweep["cells"][0];
    ASSERT_EQ(cell["engine"], "xnnpack");
    ASSERT_EQ(cell["batch"], 1);
    EXPECT_EQ(datasets[0]["data"][0], cell["latency_p50_ms"]);
    EXPECT_EQ(datasets[0]["notes"][0], "p99 7.2 ms");
}

TEST(SweepHtml, CurvesOverBatchSizesOneLinePerModelAndEngine)
{
    const json sweep = sampleSweep();
    const json specs = inlinedJson(sweepHtml(sweep, kChartJsStandIn), "report-charts");
    const json& throughput = (*chartSpec(specs, "chart-throughput"))["config"];
    EXPECT_EQ(throughput["data"]["labels"], json({"1", "2", "4"}));
    EXPECT_EQ(throughput["data"]["datasets"].size(), 6u);
    // squeezenet1_1 failed on the baseline at batch 4: a gap, not a zero.
    const json& squeezeBase = throughput["data"]["datasets"][5];
    EXPECT_EQ(squeezeBase["label"], std::string("squeezenet1_1 · ") + test::kSampleBaseline);
    EXPECT_TRUE(squeezeBase["data"][2].is_null());
    // The baseline's own BSR is null, so BSR has a line per model on xnnpack only, and none for
    // squeezenet1_1 at batch 4, whose baseline failed there.
    const json& bsr = (*chartSpec(specs, "chart-bsr"))["config"]["data"]["datasets"];
    ASSERT_EQ(bsr.size(), 3u);
    EXPECT_EQ(bsr[2]["label"], "squeezenet1_1 · xnnpack");
    EXPECT_TRUE(bsr[2]["data"][2].is_null());
    EXPECT_EQ((*chartSpec(specs, "chart-ase"))["config"]["data"]["datasets"].size(), 6u);
}

TEST(SweepHtml, AnEngineKeepsItsColourOnEveryChartAndTheBaselineDrawsNoBsrLine)
{
    json sweep = sampleSweep();
    // A baseline whose own BSR is written as 1 (it is, by definition) still draws no line: it
    // would lie on top of every other engine that scales as well as the baseline.
    for (json& row : sweep["tables"]["scaling"])
        if (row["engine"] == test::kSampleBaseline)
            row["bsr"] = 1.0;
    const json specs = inlinedJson(sweepHtml(sweep, kChartJsStandIn), "report-charts");
    const json& latency = (*chartSpec(specs, "chart-latency"))["config"]["data"]["datasets"];
    const json& stability = (*chartSpec(specs, "chart-p99-p50"))["config"];
    const json& energy = (*chartSpec(specs, "chart-energy"))["config"];
    ASSERT_EQ(latency[0]["label"], "xnnpack");
    const json xnnpackColour = latency[0]["backgroundColor"];
    const json baselineColour = latency[1]["backgroundColor"];
    EXPECT_NE(xnnpackColour, baselineColour);
    const json& labels = stability["data"]["labels"];
    const json& bars = stability["data"]["datasets"][0]["backgroundColor"];
    for (size_t i = 0; i < labels.size(); ++i)
        EXPECT_EQ(bars[i],
            labels[i].get<std::string>().find(" · xnnpack · ") != std::string::npos
                ? xnnpackColour
                : baselineColour)
            << labels[i];
    for (const json& set : energy["data"]["datasets"]) {
        const bool isXnnpack = set["label"] == "resnet18 · xnnpack";
        EXPECT_EQ(set["backgroundColor"], isXnnpack ? xnnpackColour : baselineColour);
        EXPECT_EQ(set["pointStyle"], "circle"); // resnet18, the first model, has the energy
    }
    EXPECT_EQ(energy["options"]["plugins"]["legend"]["labels"]["usePointStyle"], true);
    // Curves: a colour per model, a dash per engine; rates from zero.
    const json& throughput = (*chartSpec(specs, "chart-throughput"))["config"];
    EXPECT_EQ(throughput["options"]["scales"]["y"]["beginAtZero"], true);
    EXPECT_FALSE(throughput["options"]["scales"]["y"].contains("type"));
    const json& lines = throughput["data"]["datasets"];
    ASSERT_EQ(lines.size(), 6u);
    EXPECT_EQ(lines[0]["borderColor"], lines[1]["borderColor"]); // resnet18 on both engines
    EXPECT_NE(lines[0]["borderDash"], lines[1]["borderDash"]);
    EXPECT_NE(lines[0]["borderColor"], lines[2]["borderColor"]); // the next model
    EXPECT_EQ(lines[0]["borderDash"], lines[2]["borderDash"]);
    const json& bsr = (*chartSpec(specs, "chart-bsr"))["config"]["data"]["datasets"];
    ASSERT_EQ(bsr.size(), 3u);
    for (const json& set : bsr)
        EXPECT_EQ(set["label"].get<std::string>().find(test::kSampleBaseline), std::string::npos)
            << set["label"];
}

TEST(SweepHtml, ThroughputsFarApartGetALogAxis)
{
    json sweep = sampleSweep();
    for (json& cell : sweep["cells"])
        if (cell["model"] == "resnet18" && cell["throughput_ips"].is_number())
            cell["throughput_ips"] = cell["throughput_ips"].get<double>() / 100; // a video model
    const json specs = inlinedJson(sweepHtml(sweep, kChartJsStandIn), "report-charts");
    const json& y = (*chartSpec(specs, "chart-throughput"))["config"]["options"]["scales"]["y"];
    EXPECT_EQ(y["type"], "logarithmic");
    EXPECT_EQ(y["title"]["text"], "throughput (images/s, log scale)");
}

TEST(SweepHtml, StabilityBarPerCellAndEnergyPointsPerMeasuredCell)
{
    const json specs = inlinedJson(sweepHtml(sampleSweep(), kChartJsStandIn), "report-charts");
    const json& stability = (*chartSpec(specs, "chart-p99-p50"))["config"];
    EXPECT_EQ(stability["options"]["indexAxis"], "y");
    EXPECT_EQ(stability["data"]["labels"].size(), 17u); // 18 cells, one failed
    EXPECT_EQ(stability["data"]["labels"][0], "resnet18 · xnnpack · b1");
    const json& energy = (*chartSpec(specs, "chart-energy"))["config"];
    EXPECT_EQ(energy["type"], "scatter");
    ASSERT_EQ(energy["data"]["datasets"].size(), 2u); // resnet18's cells carry energy, per engine
    EXPECT_EQ(energy["data"]["datasets"][0]["data"].size(), 3u);
    EXPECT_EQ(energy["data"]["datasets"][0]["data"][0]["y"], 6.0 * 6.0 * 1.05);
}

TEST(SweepHtml, ChartsWithoutDataAreLeftOutWithTheReason)
{
    SweepSampleOptions options;
    options.batches = {1};
    options.energy = false;
    options.accuracy = false;
    options.latencyBudgetMs.reset();
    const std::string page = sweepHtml(sampleSweep(options), kChartJsStandIn);
    EXPECT_EQ(matches(page, "<canvas id=\"([^\"]+)\""),
        std::vector<std::string>({"chart-latency", "chart-p99-p50"}));
    EXPECT_NE(page.find("<body data-charts-expected=\"2\">"), std::string::npos);
    EXPECT_NE(
        page.find("id=\"chart-throughput-omitted\">Not drawn: one batch size only: no scaling "
                  "curves</p>"),
        std::string::npos);
    for (const char* id : {"chart-ase-omitted", "chart-bsr-omitted", "chart-energy-omitted"})
        EXPECT_NE(page.find(id), std::string::npos) << id;
    EXPECT_NE(page.find("no power rails were read"), std::string::npos);
    EXPECT_NE(page.find("No accuracy figures"), std::string::npos);
    EXPECT_NE(page.find("the study sets no latency_budget_ms"), std::string::npos);
    EXPECT_EQ(page.find("table-accuracy"), std::string::npos);
    EXPECT_EQ(page.find("table-scaling"), std::string::npos);
}

TEST(SweepHtml, BsrLeftOutWhenNoRowHasOne)
{
    json sweep = sampleSweep();
    for (json& row : sweep["tables"]["scaling"])
        row["bsr"] = nullptr;
    const std::string page = sweepHtml(sweep, kChartJsStandIn);
    EXPECT_NE(page.find("<canvas id=\"chart-ase\""), std::string::npos);
    EXPECT_EQ(page.find("<canvas id=\"chart-bsr\""), std::string::npos);
    EXPECT_NE(page.find("id=\"chart-bsr-omitted\">Not drawn: no BSR values"), std::string::npos);
}

TEST(SweepHtml, BudgetThatNothingMetIsSaid)
{
    json sweep = sampleSweep();
    sweep["study"]["latency_budget_ms"] = 0.5;
    sweep["tables"]["best"] = json::array();
    const std::string page = sweepHtml(sweep, kChartJsStandIn);
    EXPECT_NE(page.find("No configuration met the latency budget of 0.5 ms."), std::string::npos);
}

TEST(SweepHtml, TablesShowUnitsGroupedCountsAndPercentages)
{
    const std::string page = sweepHtml(sampleSweep(), kChartJsStandIn);
    // mobilenet_v2's top-1 of 0.71 as a percentage; resnet18's parameters grouped.
    EXPECT_NE(page.find("<td class=\"num\">71</td><td class=\"num\">90</td>"), std::string::npos);
    EXPECT_NE(page.find("<td class=\"num\">11,689,512</td>"), std::string::npos);
    // A documented column carries its unit and description.
    EXPECT_NE(page.find("<th title=\"median latency per inference\">latency_p50_ms<br><span "
                        "class=\"unit\">ms</span></th>"),
        std::string::npos);
    // Nested context keys are flattened; absent figures are a dash.
    EXPECT_NE(page.find("<td>versions.opencv</td><td>4.6.0</td>"), std::string::npos);
    EXPECT_NE(page.find("<td>board.power_mode</td><td>—</td>"), std::string::npos);
}

TEST(SweepHtml, EmptyAndMistypedDocumentsStillGiveAPage)
{
    const std::string empty = sweepHtml(json::object(), kChartJsStandIn);
    EXPECT_NE(empty.find("<body data-charts-expected=\"0\">"), std::string::npos);
    EXPECT_NE(empty.find("Not drawn: the sweep holds no cells"), std::string::npos);
    EXPECT_NE(empty.find("jetagent sweep: unnamed study"), std::string::npos);

    const json mistyped = {{"study", 5}, {"context", "x"},
        {"cells", {1, "two", {{"batch", "four"}}}},
        {"tables", {{"speedup", 3}, {"scaling", {nullptr}}}}, {"columns", {{{"name", 7}}}}};
    std::string page;
    EXPECT_NO_THROW(page = sweepHtml(mistyped, kChartJsStandIn));
    EXPECT_NE(page.find("</html>"), std::string::npos);
    EXPECT_NE(sweepHtml(json::array(), kChartJsStandIn).find("</html>"), std::string::npos);
}

TEST(SweepHtml, InlinesChartJsOnce)
{
    const std::string page = sweepHtml(sampleSweep(), kChartJsStandIn);
    EXPECT_EQ(count(page, kChartJsStandIn), 1u);
    // Chart.js runs before the content and the drawing script after it.
    EXPECT_LT(page.find(kChartJsStandIn), page.find("<h1>"));
    EXPECT_LT(page.find("id=\"table-cells\""),
        page.find("JSON.parse(document.getElementById('report-charts')"));
}

TEST(ChartJsSource, ReadsDebiansChartJs)
{
    if (!std::filesystem::exists(kDebianChartJsPath))
        GTEST_SKIP() << kDebianChartJsPath << " is missing: apt install libjs-chart.js";
    const Expected<std::string> source = chartJsSource("");
    ASSERT_TRUE(source.ok()) << source.status().message();
    EXPECT_EQ(source->rfind("/*!\n * Chart.js v3.", 0), 0u);
    const std::string page = sweepHtml(sampleSweep(), *source);
    EXPECT_EQ(count(page, *source), 1u);
}

TEST(ChartJsSource, MissingFileNamesTheFileAndThePackage)
{
    const test::TempDir dir;
    const std::string path = dir.path() + "/chart.min.js";
    const Expected<std::string> source = chartJsSource(path);
    ASSERT_FALSE(source.ok());
    EXPECT_EQ(source.status().kind(), ErrorKind::NotFound);
    EXPECT_NE(source.status().message().find("'" + path + "'"), std::string::npos);
    EXPECT_NE(source.status().message().find("apt install libjs-chart.js"), std::string::npos);
}

TEST(ChartJsSource, RefusesTextThatWouldEndTheInlineScript)
{
    const test::TempDir dir;
    for (const char* text : {"var a = '</SCRIPT>';", "/* <!-- */"}) {
        const std::string path = dir.path() + "/chart.js";
        test::writeFile(path, text);
        const Expected<std::string> source = chartJsSource(path);
        ASSERT_FALSE(source.ok()) << text;
        EXPECT_EQ(source.status().kind(), ErrorKind::InvalidInput);
        EXPECT_NE(source.status().message().find("'" + path + "'"), std::string::npos);
    }
    EXPECT_FALSE(chartJsSource(dir.path()).ok()); // a directory
}

TEST(HtmlReport, EscapesTextAndScriptJson)
{
    EXPECT_EQ(htmlEscape("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
    const json value = {{"name", "</script><!-- é"}, {"bytes", std::string("\xff")}};
    const std::string text = scriptJsonText(value);
    EXPECT_EQ(text.find('<'), std::string::npos);
    const json back = json::parse(text);
    EXPECT_EQ(back["name"], "</script><!-- é");
    EXPECT_EQ(back["bytes"], "\xEF\xBF\xBD"); // invalid UTF-8 replaced, never a parse failure
}

} // namespace
} // namespace jetagent
