// Writes a comparison of two devices' sample sweeps as a page for the headless-browser test (CTest
// DevicesHtmlPage.Chromium).
//
//   jetagent_devices_html_page OUT.html [CHART_JS]
//
// Exit 0 when written, 77 (CTest's skip) when Chart.js is not installed, 1 on any other failure.
#include <cstdio>
#include <fstream>
#include <string>

#include "devices_report.h"
#include "sweep_sample.h"

int main(int argc, char** argv)
{
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: %s OUT.html [CHART_JS]\n", argv[0]);
        return 1;
    }
    const std::string out = argv[1];
    const jetagent::Expected<std::string> chartJs =
        jetagent::chartJsSource(argc > 2 ? argv[2] : "");
    if (!chartJs) {
        std::fprintf(stderr, "%s\n", chartJs.status().message().c_str());
        return chartJs.status().kind() == jetagent::ErrorKind::NotFound ? 77 : 1;
    }
    // The same sample measured on two boards: the second with half the first's latency and no
    // batch 4 (a missing cell), and no rails (no energy).
    nlohmann::json first = jetagent::test::sampleSweep();
    first["context"]["module"] = "NVIDIA Jetson Orin Nano Developer Kit";
    first["context"]["power_mode"] = "15W";
    jetagent::test::SweepSampleOptions options;
    options.batches = {1, 2};
    options.energy = false;
    nlohmann::json second = jetagent::test::sampleSweep(options);
    second["context"]["module"] = "NVIDIA Jetson AGX Orin";
    second["context"]["power_mode"] = "MAXN";
    for (nlohmann::json& cell : second["cells"])
        if (cell["throughput_ips"].is_number()) {
            cell["throughput_ips"] = cell["throughput_ips"].get<double>() * 2;
            cell["latency_p50_ms"] = cell["latency_p50_ms"].get<double>() / 2;
        }
    auto comparison = jetagent::compareDevices({{"orin-nano", first}, {"agx-orin", second}});
    if (!comparison) {
        std::fprintf(stderr, "%s\n", comparison.status().message().c_str());
        return 1;
    }
    const std::string page = jetagent::devicesHtml(*comparison, *chartJs);
    std::ofstream file(out, std::ios::binary | std::ios::trunc);
    file << page;
    file.close();
    if (!file) {
        std::fprintf(stderr, "cannot write %s\n", out.c_str());
        return 1;
    }
    std::printf(
        "%s: %zu bytes (Chart.js %zu of them)\n", out.c_str(), page.size(), chartJs->size());
    return 0;
}
