// The fuzz harnesses' main where libFuzzer is not linked (GCC builds, cross builds): feeds every
// file of the corpus directories (and files) named on the command line to LLVMFuzzerTestOneInput,
// so each build replays the corpora as a test. Options in libFuzzer's form (-runs=0) are ignored,
// so the same test command works with either main.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_support.h"

namespace fs = std::filesystem;

namespace {

// The files to replay: each file argument, and the regular files under each directory (its
// subdirectories too, as libFuzzer reads them) in name order.
bool collect(const std::string& argument, std::vector<fs::path>& files)
{
    std::error_code ec;
    if (fs::is_directory(argument, ec)) {
        std::vector<fs::path> found;
        for (const auto& entry : fs::recursive_directory_iterator(argument, ec))
            if (entry.is_regular_file(ec))
                found.push_back(entry.path());
        std::sort(found.begin(), found.end());
        files.insert(files.end(), found.begin(), found.end());
        return !ec;
    }
    if (fs::is_regular_file(argument, ec)) {
        files.emplace_back(argument);
        return true;
    }
    return false;
}

} // namespace

int main(int argc, char** argv)
{
    LLVMFuzzerInitialize(&argc, &argv);
    std::vector<fs::path> files;
    bool named = false;
    for (int i = 1; i < argc; ++i) {
        const std::string argument = argv[i];
        if (argument == "--help" || argument == "-h" || argument == "-help=1") {
            std::printf("usage: %s FILE_OR_DIRECTORY...\n"
                        "Replays each file (and every file under each directory) through this fuzz "
                        "target's harness;\nexits 0 when none fails. Built without libFuzzer: it "
                        "does not fuzz (see tools/dev.sh fuzz).\n",
                argv[0]);
            return 0;
        }
        if (!argument.empty() && argument[0] == '-')
            continue;
        named = true;
        if (!collect(argument, files)) {
            std::fprintf(stderr, "%s: cannot read corpus '%s'\n", argv[0], argument.c_str());
            return 2;
        }
    }
    if (!named) {
        std::fprintf(
            stderr, "%s: name the inputs to replay: FILE_OR_DIRECTORY... (--help)\n", argv[0]);
        return 2;
    }
    for (const fs::path& file : files) {
        std::ifstream in(file, std::ios::binary);
        const std::vector<char> bytes(
            (std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!in.good() && !in.eof()) {
            std::fprintf(stderr, "%s: cannot read '%s'\n", argv[0], file.c_str());
            return 2;
        }
        // Named before it runs: a crash's report then says which file caused it.
        std::fprintf(stderr, "replaying %s (%zu bytes)\n", file.c_str(), bytes.size());
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
    std::fprintf(stderr, "%zu inputs replayed without a failure\n", files.size());
    return 0;
}
