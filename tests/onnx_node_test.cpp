// ONNX's own backend node tests (Debian's libonnx-testdata) against the xnnpack backend. Every test
// whose operators are all among those the backend claims (BackendInfo::operators) must either
// pass, or be refused at build time with an error naming the node or its operator; a test that
// builds, runs and gives a wrong shape or wrong values (a mis-run) fails here, as does a crash.
// A table of the outcomes per operator is printed at the end (docs/cpu-engine.md quotes it).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_file.h"

namespace fs = std::filesystem;

namespace jetagent {
namespace {

const char* const kNodeTests = "/usr/share/libonnx-testdata/data/node";

// Tolerances: |actual - expected| <= kAbsolute + kRelative * |expected|.
constexpr double kAbsolute = 1e-5;
constexpr double kRelative = 1e-4;

enum class Outcome { Pass, Refused, NotApplicable, MisRun };

struct Result {
    Outcome outcome = Outcome::Pass;
    std::string reason; // why refused or not applicable; what differed for a mis-run
};

bool readBytes(const fs::path& path, std::string* out)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return false;
    std::ostringstream s;
    s << in.rdbuf();
    *out = s.str();
    return true;
}

bool readTensor(const fs::path& path, onnx::TensorProto* tensor)
{
    std::string bytes;
    return readBytes(path, &bytes) && tensor->ParseFromString(bytes);
}

std::string dimsText(const std::vector<int64_t>& dims)
{
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i)
        s += (i ? "x" : "") + std::to_string(dims[i]);
    return s + "]";
}

std::vector<int64_t> dimsOf(const onnx::TensorProto& t)
{
    return {t.dims().begin(), t.dims().end()};
}

bool isByte(int32_t type)
{
    return type == onnx::TensorProto::UINT8 || type == onnx::TensorProto::INT8;
}

// A float32, uint8 or int8 tensor's values as floats (the Session's tensors are float; an 8-bit
// integer is carried as its exact value), from raw_data (little-endian, as ONNX stores it),
// float_data or int32_data.
bool floatsOf(const onnx::TensorProto& t, std::vector<float>* out)
{
    const bool byte = isByte(t.data_type());
    if ((t.data_type() != onnx::TensorProto::FLOAT && !byte) ||
        t.data_location() == onnx::TensorProto::EXTERNAL)
        return false;
    size_t count = 1;
    for (int64_t d : t.dims())
        count *= static_cast<size_t>(d);
    out->assign(count, 0.0f);
    if (byte) {
        const bool isSigned = t.data_type() == onnx::TensorProto::INT8;
        if (t.has_raw_data()) {
            if (t.raw_data().size() != count)
                return false;
            for (size_t i = 0; i < count; ++i) {
                const auto u = static_cast<uint8_t>(t.raw_data()[i]);
                (*out)[i] = isSigned ? static_cast<float>(static_cast<int8_t>(u)) : u;
            }
            return true;
        }
        if (static_cast<size_t>(t.int32_data_size()) != count)
            return false;
        std::copy(t.int32_data().begin(), t.int32_data().end(), out->begin());
        return true;
    }
    if (t.has_raw_data()) {
        if (t.raw_data().size() != count * sizeof(float))
            return false;
        if (count > 0)
            std::memcpy(out->data(), t.raw_data().data(), count * sizeof(float));
        return true;
    }
    if (static_cast<size_t>(t.float_data_size()) != count)
        return false;
    std::copy(t.float_data().begin(), t.float_data().end(), out->begin());
    return true;
}

// Float32, or 8-bit integers (QuantizeLinear's output, DequantizeLinear's input).
bool isFloatTensor(const onnx::ValueInfoProto& v)
{
    return v.type().has_tensor_type() &&
        (v.type().tensor_type().elem_type() == onnx::TensorProto::FLOAT ||
            isByte(v.type().tensor_type().elem_type()));
}

bool closeEnough(float actual, float expected)
{
    if (std::isnan(expected) || std::isnan(actual))
        return std::isnan(expected) && std::isnan(actual);
    if (std::isinf(expected))
        return actual == expected;
    return std::fabs(static_cast<double>(actual) - expected) <=
        kAbsolute + kRelative * std::fabs(static_cast<double>(expected));
}

// True when `message` names one of the graph's nodes or operators.
bool namesANode(const std::string& message, const onnx::GraphProto& graph)
{
    for (const auto& node : graph.node())
        if (message.find(node.op_type()) != std::string::npos ||
            (!node.name().empty() && message.find(node.name()) != std::string::npos))
            return true;
    return false;
}

// One data set of one node test.
Result runDataSet(const fs::path& dir, const fs::path& set, const onnx::ModelProto& original,
    const std::vector<const onnx::ValueInfoProto*>& inputs)
{
    const onnx::GraphProto& graph = original.graph();
    std::vector<onnx::TensorProto> given(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k)
        if (!readTensor(set / ("input_" + std::to_string(k) + ".pb"), &given[k]))
            return {Outcome::NotApplicable,
                set.filename().string() + " has no readable input_" + std::to_string(k) + ".pb"};
    std::vector<onnx::TensorProto> expected(static_cast<size_t>(graph.output_size()));
    for (size_t k = 0; k < expected.size(); ++k)
        if (!readTensor(set / ("output_" + std::to_string(k) + ".pb"), &expected[k]))
            return {Outcome::NotApplicable,
                set.filename().string() + " has no readable output_" + std::to_string(k) + ".pb"};

    std::vector<float> input;
    const std::vector<int64_t> inputDims = dimsOf(given[0]);
    if (inputDims.empty())
        return {
            Outcome::NotApplicable, "input 0 is a scalar (the session input needs a batch axis)"};
    if (inputDims[0] < 1)
        return {Outcome::NotApplicable,
            "input 0 is empty (batch " + std::to_string(inputDims[0]) + ")"};
    if (inputDims.size() > static_cast<size_t>(TensorShape::kMaxRank) ||
        !floatsOf(given[0], &input))
        return {
            Outcome::NotApplicable, "input 0 is not float32, uint8 or int8 data of rank 8 or less"};
    const int64_t batch = inputDims[0];
    // set-batch sets dimension 0 of every graph output to the batch; an output whose dimension 0
    // is something else (Transpose, Concat along axis 0, Flatten to [1, n], ...) is then declared
    // with a wrong shape, and preparation stops at shape inference ("Inferred shape and existing
    // shape differ in dimension 0"): such tests cannot be fed through buildEngine at all.
    for (size_t k = 0; k < expected.size(); ++k) {
        const std::vector<int64_t> dims = dimsOf(expected[k]);
        if (!dims.empty() && dims[0] != batch)
            return {Outcome::NotApplicable,
                "output '" + graph.output(static_cast<int>(k)).name() + "' " + dimsText(dims) +
                    " has dimension 0 other than the batch " + std::to_string(batch) +
                    " (set-batch would declare it " + std::to_string(batch) + ")"};
    }

    // input_0 is the session's input; every other graph input becomes an initializer holding its
    // data from the test: the backend takes weights, biases, shapes, axes, pads, Clip bounds and
    // the like as constants of the model, not as run-time inputs.
    onnx::ModelProto model = original;
    auto* g = model.mutable_graph();
    std::set<std::string> constant;
    for (size_t k = 1; k < inputs.size(); ++k) {
        onnx::TensorProto* t = g->add_initializer();
        *t = given[k];
        t->set_name(inputs[k]->name());
        constant.insert(inputs[k]->name());
    }
    // IR 3 lists every initializer among the graph inputs as well; from IR 4 they are apart.
    if (model.ir_version() >= 4) {
        auto* list = g->mutable_input();
        list->erase(
            std::remove_if(list->begin(), list->end(),
                [&](const onnx::ValueInfoProto& v) { return constant.count(v.name()) > 0; }),
            list->end());
    }
    const std::string bytes = model.SerializeAsString();
    const std::string path = (dir / "model.onnx").string();
    auto parsed = parseModelBytes(std::vector<char>(bytes.begin(), bytes.end()), path);
    if (!parsed)
        return {Outcome::MisRun,
            "the model with its constant inputs does not load: " + parsed.status().message()};

    EngineOptions options;
    options.backend = "xnnpack";
    options.batch = static_cast<int>(batch);
    auto engine = buildEngine(parsed.value(), options);
    if (!engine) {
        if (namesANode(engine.status().message(), graph))
            return {Outcome::Refused, engine.status().message()};
        return {Outcome::MisRun,
            "refused without naming the node or operator: " + engine.status().message()};
    }
    auto session = engine.value()->createSession();
    if (!session) {
        if (namesANode(session.status().message(), graph))
            return {Outcome::Refused, session.status().message()};
        return {Outcome::MisRun,
            "createSession failed without naming the node or operator: " +
                session.status().message()};
    }
    TensorView view;
    view.data = input.data();
    view.shape.rank = static_cast<int>(inputDims.size());
    std::copy(inputDims.begin(), inputDims.end(), view.shape.dims.begin());
    const Status ran = session.value()->run(&view, 1, nullptr);
    if (!ran.ok())
        return {Outcome::MisRun, "built, then the run failed: " + ran.message()};
    if (session.value()->outputCount() != expected.size())
        return {Outcome::MisRun,
            std::to_string(session.value()->outputCount()) + " outputs, expected " +
                std::to_string(expected.size())};
    for (size_t k = 0; k < expected.size(); ++k) {
        const std::string name = "output '" + graph.output(static_cast<int>(k)).name() + "'";
        std::vector<float> want;
        if (!floatsOf(expected[k], &want))
            return {Outcome::NotApplicable, name + " is not float32, uint8 or int8 data"};
        const ConstTensorView got = session.value()->output(k);
        const std::vector<int64_t> gotDims(
            got.shape.dims.begin(), got.shape.dims.begin() + std::max(0, got.shape.rank));
        if (gotDims != dimsOf(expected[k]))
            return {Outcome::MisRun,
                name + ": shape " + dimsText(gotDims) + ", expected " +
                    dimsText(dimsOf(expected[k]))};
        // 8-bit integers (QuantizeLinear's) must be exactly the expected ones.
        const bool exact = isByte(expected[k].data_type());
        for (size_t i = 0; i < want.size(); ++i)
            if (exact ? got.data[i] != want[i] : !closeEnough(got.data[i], want[i])) {
                char text[160];
                std::snprintf(text, sizeof text, ": index %zu: expected %.9g, actual %.9g", i,
                    static_cast<double>(want[i]), static_cast<double>(got.data[i]));
                return {Outcome::MisRun, name + " (" + set.filename().string() + ")" + text};
            }
    }
    return {Outcome::Pass, ""};
}

// One node test directory: not applicable before any data set is looked at, or the worst
// outcome over its data sets (a mis-run, then a refusal).
Result runNodeTest(const fs::path& dir, const onnx::ModelProto& model)
{
    const onnx::GraphProto& graph = model.graph();
    std::set<std::string> initializers;
    for (const auto& t : graph.initializer())
        initializers.insert(t.name());
    std::vector<const onnx::ValueInfoProto*> inputs;
    for (const auto& v : graph.input())
        if (!initializers.count(v.name()))
            inputs.push_back(&v);
    if (inputs.empty())
        return {Outcome::NotApplicable, "no graph input"};
    if (!isFloatTensor(*inputs[0]))
        return {Outcome::NotApplicable,
            "input '" + inputs[0]->name() + "' is not a float32, uint8 or int8 tensor"};
    for (const auto* v : inputs)
        if (!v->type().has_tensor_type())
            return {Outcome::NotApplicable, "input '" + v->name() + "' is not a tensor"};
    for (const auto& v : graph.output())
        if (!isFloatTensor(v))
            return {Outcome::NotApplicable,
                "output '" + v.name() + "' is not a float32, uint8 or int8 tensor"};
    std::vector<fs::path> sets;
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.is_directory() &&
            entry.path().filename().string().rfind("test_data_set_", 0) == 0)
            sets.push_back(entry.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty())
        return {Outcome::NotApplicable, "no test_data_set_N directory"};
    Result worst {Outcome::Pass, ""};
    for (const auto& set : sets) {
        Result r = runDataSet(dir, set, model, inputs);
        if (r.outcome == Outcome::NotApplicable || r.outcome == Outcome::MisRun)
            return r;
        if (r.outcome == Outcome::Refused && worst.outcome == Outcome::Pass)
            worst = r;
    }
    return worst;
}

struct Tally {
    int applicable = 0, passed = 0, refused = 0, misRun = 0, notApplicable = 0;

    void add(Outcome o)
    {
        if (o == Outcome::NotApplicable) {
            ++notApplicable;
            return;
        }
        ++applicable;
        passed += o == Outcome::Pass;
        refused += o == Outcome::Refused;
        misRun += o == Outcome::MisRun;
    }
};

const BackendInfo* xnnpackInfo(const std::vector<BackendInfo>& backends)
{
    for (const BackendInfo& b : backends)
        if (b.name == "xnnpack")
            return &b;
    return nullptr;
}

TEST(OnnxNodeTests, ClaimedOperatorsPassOrAreRefusedNeverMisRun)
{
    if (!fs::is_directory(kNodeTests))
        GTEST_SKIP() << kNodeTests
                     << " is missing: ONNX's node tests come with the Debian package "
                        "libonnx-testdata (apt install libonnx-testdata)";
    const std::vector<BackendInfo> backends = listBackends();
    const BackendInfo* xnnpack = xnnpackInfo(backends);
    if (!xnnpack || !xnnpack->available)
        GTEST_SKIP() << "this build has no usable xnnpack backend"
                     << (xnnpack ? ": " + xnnpack->details : std::string());
    const std::set<std::string> claimed(xnnpack->operators.begin(), xnnpack->operators.end());
    ASSERT_FALSE(claimed.empty()) << "the xnnpack backend claims no operators";

    std::vector<fs::path> dirs;
    for (const auto& entry : fs::directory_iterator(kNodeTests))
        if (entry.is_directory() && entry.path().filename().string().rfind("test_", 0) == 0)
            dirs.push_back(entry.path());
    std::sort(dirs.begin(), dirs.end());

    // NOLINTNEXTLINE(concurrency-mt-unsafe): read before any engine starts a thread
    const bool verbose = std::getenv("JETAGENT_ONNX_NODE_VERBOSE") != nullptr;
    std::map<std::string, Tally> perOperator;
    Tally total;
    int unclaimed = 0;
    std::vector<std::string> notes;
    for (const auto& dir : dirs) {
        const std::string name = dir.filename().string();
        std::string bytes;
        onnx::ModelProto model;
        if (!readBytes(dir / "model.onnx", &bytes) || !model.ParseFromString(bytes)) {
            ADD_FAILURE() << name << ": model.onnx is missing or does not parse";
            continue;
        }
        std::set<std::string> ops;
        bool all = model.graph().node_size() > 0;
        for (const auto& node : model.graph().node()) {
            ops.insert(node.op_type());
            all = all && (node.domain().empty() || node.domain() == "ai.onnx") &&
                claimed.count(node.op_type()) > 0;
        }
        if (!all) {
            ++unclaimed;
            continue;
        }
        const Result r = runNodeTest(dir, model);
        total.add(r.outcome);
        for (const auto& op : ops)
            perOperator[op].add(r.outcome);
        if (r.outcome == Outcome::MisRun)
            ADD_FAILURE() << "MIS-RUN " << dir.string() << ": " << r.reason;
        const char* word = r.outcome == Outcome::Pass ? "pass"
            : r.outcome == Outcome::Refused           ? "refused"
            : r.outcome == Outcome::NotApplicable     ? "not applicable"
                                                      : "MIS-RUN";
        if (r.outcome != Outcome::Pass || verbose)
            notes.push_back(name + ": " + word + (r.reason.empty() ? "" : ": " + r.reason));
    }

    for (const auto& line : notes)
        std::printf("%s\n", line.c_str());
    std::printf("\nONNX node tests on the xnnpack backend (%s), tests counted under each operator "
                "they contain:\n",
        kNodeTests);
    std::printf("%-20s %10s %7s %8s %8s %15s\n", "operator", "applicable", "passed", "refused",
        "mis-run", "not applicable");
    for (const auto& [op, t] : perOperator)
        std::printf("%-20s %10d %7d %8d %8d %15d\n", op.c_str(), t.applicable, t.passed, t.refused,
            t.misRun, t.notApplicable);
    std::printf("%-20s %10d %7d %8d %8d %15d\n", "total (tests)", total.applicable, total.passed,
        total.refused, total.misRun, total.notApplicable);
    std::printf("%zu node tests; %d with an operator xnnpack does not claim were not run\n",
        dirs.size(), unclaimed);
    std::fflush(stdout);
    EXPECT_EQ(total.misRun, 0);
    EXPECT_GT(total.passed, 0);
}

} // namespace
} // namespace jetagent
