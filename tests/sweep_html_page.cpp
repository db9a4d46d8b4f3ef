// Writes the sample sweep's HTML page for the headless-browser test (CTest SweepHtmlPage.Chromium).
//
//   jetagent_sweep_html_page OUT.html [CHART_JS]
//
// Exit 0 when written, 77 (CTest's skip) when Chart.js is not installed, 1 on any other failure.
#include <cstdio>
#include <fstream>
#include <string>

#include "sweep_html.h"
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
    const std::string page = jetagent::sweepHtml(jetagent::test::sampleSweep(), *chartJs);
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
