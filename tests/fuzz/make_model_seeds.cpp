// Writes the seed corpora of the engine and onnx_model fuzz targets (tests/fuzz/corpus/): inputs
// taken from a fixed pseudo-random sequence and kept when the model they generate passes the
// checks and uses an operator no kept one has, so that between them the seeds reach every
// operator the generator knows. The engine seed is the input, the onnx_model seed its model.
//
// usage: jetagent_fuzz_make_model_seeds ENGINE_CORPUS_DIR ONNX_MODEL_CORPUS_DIR
#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "jetagent/engines/model_file.h"
#include "model_generator.h"

namespace {

constexpr int kCandidates = 20000;
constexpr size_t kInputBytes = 48;
constexpr int kMaxLayers = 8; // as engine_fuzz.cpp
constexpr uint32_t kSeed = 20240611;

bool write(const std::string& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out);
}

} // namespace

int main(int argc, char** argv)
{
    using namespace jetagent;
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s ENGINE_CORPUS_DIR ONNX_MODEL_CORPUS_DIR\n", argv[0]);
        return 2;
    }
    std::mt19937 random(kSeed);
    std::uniform_int_distribution<int> byte(0, 255);
    std::set<std::string> covered;
    int kept = 0;
    for (int candidate = 0; candidate < kCandidates; ++candidate) {
        std::string input(kInputBytes, '\0');
        for (char& c : input)
            c = static_cast<char>(byte(random));
        fuzz::ByteReader in(reinterpret_cast<const uint8_t*>(input.data()), input.size());
        const fuzz::GeneratedModel generated = fuzz::generateModel(in, kMaxLayers);
        const std::vector<char> bytes(generated.bytes.begin(), generated.bytes.end());
        if (!parseModelBytes(bytes, "seed.onnx"))
            continue;
        onnx::ModelProto model;
        model.ParseFromString(generated.bytes);
        bool adds = false;
        for (const auto& node : model.graph().node())
            adds = covered.insert(node.op_type()).second || adds;
        if (!adds)
            continue;
        const std::string name = "seed" + std::to_string(kept++);
        if (!write(std::string(argv[1]) + "/" + name, input) ||
            !write(std::string(argv[2]) + "/" + name + ".onnx", generated.bytes)) {
            std::fprintf(
                stderr, "cannot write %s into %s and %s\n", name.c_str(), argv[1], argv[2]);
            return 1;
        }
    }
    std::printf("%d seeds covering %zu operators:", kept, covered.size());
    for (const auto& op : covered)
        std::printf(" %s", op.c_str());
    std::printf("\n");
    return 0;
}
