// Checks on a finished run's directory that several end-to-end tests share.
#include "run_checks.h"

#include <cmath>
#include <map>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.h"

namespace jetagent::test {

namespace {

std::vector<std::string> split(const std::string& line)
{
    std::vector<std::string> fields;
    std::stringstream in(line);
    std::string field;
    while (std::getline(in, field, ','))
        fields.push_back(field);
    if (!line.empty() && line.back() == ',')
        fields.emplace_back();
    return fields;
}

// A text cell's value as written by csvEscape: unquoted (no comma or quote inside, as the tests'
// labels are), without the apostrophe that marks text a spreadsheet would take for a formula.
std::string cellText(std::string cell)
{
    if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"')
        cell = cell.substr(1, cell.size() - 2);
    if (cell.size() >= 2 && cell[0] == '\'' &&
        std::string("=+-@\t\r").find(cell[1]) != std::string::npos)
        cell.erase(0, 1);
    return cell;
}

} // namespace

RunFiles checkRun(const std::string& runDir, const std::string& task)
{
    RunFiles files;
    files.summary = nlohmann::json::parse(readFile(runDir + "/summary.json"));
    const auto csv = readLines(runDir + "/" + task + ".frames.csv");
    const auto jsonl = readLines(runDir + "/" + task + ".frames.jsonl");
    EXPECT_FALSE(csv.empty());
    if (csv.empty())
        return files;
    const auto header = split(csv[0]);
    // 17 columns (the stream last), 9 clip columns more for action tasks, 4 energy columns more
    // where the machine has power rails (RAPL, read as root), and queue_ms last in unpaced runs.
    EXPECT_GE(header.size(), 17u) << csv[0];
    if (header.size() < 17)
        return files;
    EXPECT_EQ(header[16], "stream");
    const bool action = header.size() > 17 && header[17] == "has_result";
    const bool unpaced = header.back() == "queue_ms";
    const size_t base = (action ? 26u : 17u) + (unpaced ? 1u : 0u);
    EXPECT_TRUE(header.size() == base || header.size() == base + 4) << csv[0];
    files.csvRecords = csv.size() - 1;
    files.jsonRecords = jsonl.size();
    EXPECT_EQ(files.csvRecords, files.jsonRecords);

    std::map<std::string, long long> previousId; // each stream numbers its frames
    for (size_t i = 1; i < csv.size() && i - 1 < jsonl.size(); ++i) {
        const auto f = split(csv[i]);
        EXPECT_EQ(f.size(), header.size()) << csv[i];
        if (f.size() != header.size())
            continue;
        const long long id = std::stoll(f[0]);
        auto previous = previousId.emplace(f[16], -1).first;
        EXPECT_GT(id, previous->second) << "frame ids must increase: " << csv[i];
        previous->second = id;
        const double wait = std::stod(f[2]), pre = std::stod(f[3]), inf = std::stod(f[4]),
                     compute = std::stod(f[5]), post = std::stod(f[6]), e2e = std::stod(f[7]);
        for (double v : {wait, pre, inf, compute, post})
            EXPECT_GE(v, 0.0) << csv[i];
        // Five values each rounded to 0.1 us: their sum may differ from the rounded total by 0.3
        // us.
        EXPECT_NEAR(wait + pre + inf + post, e2e, 0.0003) << csv[i];
        EXPECT_LE(compute, inf + 0.0001) << csv[i];
        if (unpaced) {
            // End to end starts at the dequeue; the time in the FIFO is apart, and no deadline
            // is judged.
            EXPECT_EQ(wait, 0.0) << csv[i];
            EXPECT_GE(std::stod(f.back()), 0.0) << csv[i];
            EXPECT_EQ(f[13], "") << csv[i];
        }
        EXPECT_EQ(f[12] == "1", !f[11].empty() && f[9] == f[11]) << csv[i];

        const auto j = nlohmann::json::parse(jsonl[i - 1]);
        EXPECT_EQ(j["frame"].get<long long>(), id);
        EXPECT_EQ(j["stream"].get<std::string>(), f[16]);
        EXPECT_NEAR(j["e2e_ms"].get<double>(), e2e, 1e-9);
        if (!f[9].empty())
            EXPECT_EQ(j["top"][0]["label"].get<std::string>(), cellText(f[9]));
        else
            EXPECT_TRUE(j["top"].empty()) << jsonl[i - 1];
        if (!action)
            continue;
        // A result is the clip ending at this frame: its window ends here, its latency is the
        // frame's end to end, its inference lies inside the inference stage.
        const bool result = f[17] == "1";
        EXPECT_EQ(j["result"].get<bool>(), result);
        EXPECT_EQ(result, !f[9].empty()) << csv[i];
        if (!result) {
            EXPECT_TRUE(j["clip"].is_null()) << jsonl[i - 1];
            continue;
        }
        EXPECT_EQ(std::stoll(f[19]), id) << csv[i];
        EXPECT_LT(std::stoll(f[18]), id) << csv[i];
        EXPECT_EQ(f[21], f[1]) << "the clip's last capture is the frame's: " << csv[i];
        EXPECT_LE(std::stod(f[24]), inf + 0.0001) << csv[i];
        EXPECT_NEAR(std::stod(f[25]), e2e, 0.0001) << csv[i];
        EXPECT_EQ(j["clip"]["last_id"].get<long long>(), id);
        EXPECT_EQ(j["clip"]["frames"].get<int>(), std::stoi(f[22]));
    }
    return files;
}

} // namespace jetagent::test
