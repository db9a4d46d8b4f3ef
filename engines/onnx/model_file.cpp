// An ONNX model file read into memory, checked, and described (inputs, outputs, opset, hash).
#include "jetagent/engines/model_file.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <onnx/checker.h>
#include <onnx/common/version.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "jetagent/engines/model_validate.h"
#include "jetagent/engines/sha256.h"
#include "onnx_util.h"

namespace jetagent {

namespace {

namespace fs = std::filesystem;

DataType fromOnnx(int32_t elemType)
{
    switch (elemType) {
    case onnx::TensorProto_DataType_FLOAT: return DataType::Float32;
    case onnx::TensorProto_DataType_FLOAT16: return DataType::Float16;
    case onnx::TensorProto_DataType_INT8: return DataType::Int8;
    case onnx::TensorProto_DataType_UINT8: return DataType::UInt8;
    case onnx::TensorProto_DataType_INT32: return DataType::Int32;
    case onnx::TensorProto_DataType_INT64: return DataType::Int64;
    case onnx::TensorProto_DataType_BOOL: return DataType::Bool;
    default: return DataType::Other;
    }
}

TensorInfo describe(const onnx::ValueInfoProto& value)
{
    TensorInfo info;
    info.name = value.name();
    if (value.type().has_tensor_type()) {
        const auto& tensor = value.type().tensor_type();
        info.type = fromOnnx(tensor.elem_type());
        for (const auto& dim : tensor.shape().dim()) {
            if (dim.has_dim_value() && dim.dim_value() > 0) {
                info.dims.push_back(dim.dim_value());
                info.dimNames.emplace_back();
            } else {
                info.dims.push_back(-1);
                info.dimNames.push_back(dim.has_dim_param() ? dim.dim_param() : std::string());
            }
        }
    }
    return info;
}

const char* fileKind(mode_t mode)
{
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe)";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISDIR(mode))
        return "a directory";
    return "not a regular file";
}

// An open regular file: its descriptor and size. Opened without blocking, so that a FIFO (whose
// open would wait for a writer forever) or a device is refused at once instead of read.
struct RegularFile {
    int fd = -1;
    int64_t size = 0;

    RegularFile() = default;
    RegularFile(const RegularFile&) = delete;
    RegularFile& operator=(const RegularFile&) = delete;
    ~RegularFile()
    {
        if (fd >= 0)
            ::close(fd);
    }
};

// `what` names the file in messages ("model file 'm.onnx'").
Status openRegularFile(const std::string& path, const std::string& what, RegularFile* file)
{
    file->fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (file->fd < 0) {
        const int error = errno;
        if (error == ENOENT)
            return Status::notFound(what + " does not exist");
        return Status::notFound(what + " cannot be opened: " + errnoText(error) +
            (error == EACCES ? " (permissions?)" : ""));
    }
    struct stat st { };
    if (::fstat(file->fd, &st) != 0)
        return Status::io(what + " cannot be read: " + errnoText(errno));
    if (S_ISDIR(st.st_mode))
        return Status::invalid(what + " is a directory, not a file");
    if (!S_ISREG(st.st_mode))
        return Status::invalid(what + " is " + fileKind(st.st_mode) +
            ", not a regular file; jetagent reads models and their data from regular files only");
    file->size = st.st_size;
    return Status();
}

// Reads `length` bytes at `offset` of an open file into `out` (already sized).
Status readAt(
    const RegularFile& file, int64_t offset, char* out, int64_t length, const std::string& what)
{
    int64_t done = 0;
    while (done < length) {
        const ssize_t n = ::pread(file.fd, out + done, static_cast<size_t>(length - done),
            static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return Status::io(what + " cannot be read: " + errnoText(errno));
        if (n == 0)
            return Status::io(what + " ended after " + std::to_string(offset + done) +
                " bytes while being read (changed meanwhile?)");
        done += n;
    }
    return Status();
}

// True when `inner` is `outer` or lies below it (both canonical).
bool isWithin(const fs::path& inner, const fs::path& outer)
{
    auto i = inner.begin();
    for (auto o = outer.begin(); o != outer.end(); ++o, ++i)
        if (i == inner.end() || *i != *o)
            return false;
    return true;
}

// Reads the external data of one tensor into raw_data. `location` must stay inside the model's
// directory, as the ONNX specification requires, after symbolic links are resolved; anything else
// could read arbitrary files. Sizes are checked before anything is allocated.
Status readExternalData(onnx::TensorProto* tensor, const fs::path& baseDir, const std::string& path,
    Sha256* hash, uint64_t* total)
{
    std::string location;
    int64_t offset = 0;
    int64_t length = -1;
    for (const auto& entry : tensor->external_data()) {
        try {
            if (entry.key() == "location")
                location = entry.value();
            else if (entry.key() == "offset")
                offset = std::stoll(entry.value());
            else if (entry.key() == "length")
                length = std::stoll(entry.value());
        } catch (const std::exception&) {
            return Status::invalid("model file '" + path + "': tensor '" + tensor->name() +
                "' has a malformed external-data " + entry.key() + " '" + entry.value() + "'");
        }
    }
    const std::string what = "model file '" + path + "': tensor '" + tensor->name() + "'";
    const fs::path rel(location);
    if (location.empty())
        return Status::invalid(what + " is marked external but names no location");
    bool escapes = rel.is_absolute();
    for (const auto& part : rel)
        escapes |= part == "..";
    if (escapes)
        return Status::invalid(what + ": external data location '" + location +
            "' must be a relative path inside the model's directory");
    const fs::path file = baseDir / rel;
    std::error_code ec;
    const fs::path realDir = fs::canonical(baseDir, ec);
    const fs::path realFile = ec ? fs::path() : fs::canonical(file, ec);
    if (ec)
        return Status::notFound(what + ": external data file '" + file.string() + "' is missing");
    if (!isWithin(realFile, realDir))
        return Status::invalid(what + ": external data file '" + file.string() + "' resolves to '" +
            realFile.string() + "', outside the model's directory '" + realDir.string() +
            "' (a symbolic link?); keep the data beside the model");
    RegularFile data;
    if (Status s = openRegularFile(
            realFile.string(), what + ": external data file '" + file.string() + "'", &data);
        !s)
        return s;
    const int64_t size = data.size;
    if (offset < 0 || offset > size)
        return Status::invalid(what + ": offset " + std::to_string(offset) +
            " is past the end of '" + file.string() + "' (" + std::to_string(size) + " bytes)");
    if (length < 0)
        length = size - offset;
    if (length > size - offset)
        return Status::invalid(what + ": " + std::to_string(length) + " bytes at offset " +
            std::to_string(offset) + " run past the end of '" + file.string() + "' (" +
            std::to_string(size) + " bytes; truncated?)");
    const size_t itemSize = onnxElementSize(tensor->data_type());
    auto count = checkedElementCount(*tensor, what);
    if (!count)
        return count.status();
    const int64_t expected = count.value() * static_cast<int64_t>(itemSize);
    if (itemSize == 0)
        return Status::invalid(what + ": external data of type " +
            std::to_string(tensor->data_type()) + " (strings or unknown) is not supported");
    if (expected != length)
        return Status::invalid(what + " should hold " + std::to_string(expected) + " bytes, its " +
            "external data has " + std::to_string(length));
    if (static_cast<int64_t>(*total) > kMaxExternalBytes - length)
        return Status::invalid(what + ": the model's external data adds up to more than " +
            std::to_string(kMaxExternalBytes) + " bytes, more than jetagent reads");
    std::string bytes(static_cast<size_t>(length), '\0');
    if (Status s = readAt(
            data, offset, bytes.data(), length, "external data file '" + file.string() + "'");
        !s)
        return s.withContext(what);
    hash->update(bytes.data(), bytes.size());
    *total += static_cast<uint64_t>(length);
    tensor->set_raw_data(std::move(bytes));
    tensor->clear_external_data();
    tensor->set_data_location(onnx::TensorProto_DataLocation_DEFAULT);
    return Status();
}

Status readAllExternalData(onnx::GraphProto* graph, const fs::path& baseDir,
    const std::string& path, Sha256* hash, uint64_t* total)
{
    for (auto& init : *graph->mutable_initializer())
        if (init.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
            Status s = readExternalData(&init, baseDir, path, hash, total);
            if (!s)
                return s;
        }
    for (auto& node : *graph->mutable_node())
        for (auto& attr : *node.mutable_attribute()) {
            if (attr.has_t() &&
                attr.t().data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
                Status s = readExternalData(attr.mutable_t(), baseDir, path, hash, total);
                if (!s)
                    return s;
            }
            if (attr.has_g()) {
                Status s = readAllExternalData(attr.mutable_g(), baseDir, path, hash, total);
                if (!s)
                    return s;
            }
        }
    return Status();
}

// Values a node reads, including those its subgraphs read from the enclosing graph.
void nodeReads(const onnx::NodeProto& node, std::vector<std::string>* out)
{
    out->clear();
    for (const auto& in : node.input())
        if (!in.empty())
            out->push_back(in);
    for (const auto& attr : node.attribute()) {
        auto add = [&](const std::string& n) {
            if (!n.empty())
                out->push_back(n);
        };
        if (attr.has_g())
            onnxutil::forEachInputName(attr.g(), add);
        for (const auto& g : attr.graphs())
            onnxutil::forEachInputName(g, add);
    }
}

// Every value read must come from somewhere; nodes must form no cycle. Sorts the nodes
// topologically when the file lists them out of order (ONNX requires order; some tools forget).
Status checkStructure(onnx::GraphProto* graph, const std::string& path)
{
    const std::string where = "model file '" + path + "'";
    std::unordered_set<std::string> available;
    for (const auto& in : graph->input())
        available.insert(in.name());
    for (const auto& init : graph->initializer())
        available.insert(init.name());
    std::unordered_map<std::string, int> producer;
    producer.reserve(static_cast<size_t>(graph->node_size()));
    for (int i = 0; i < graph->node_size(); ++i)
        for (const auto& out : graph->node(i).output()) {
            if (out.empty())
                continue;
            if (!producer.emplace(out, i).second || available.count(out))
                return Status::invalid(where + ": value '" + out + "' is produced twice (" +
                    onnxutil::nodeLabel(graph->node(i), i) + " writes it again)");
        }

    const int n = graph->node_size();
    std::vector<int> pending(static_cast<size_t>(n), 0);
    std::vector<std::vector<int>> dependents(static_cast<size_t>(n));
    std::vector<std::string> reads;
    // The last node recorded as a dependent of each node: a node reading several outputs of
    // another (or one output twice) depends on it once.
    std::vector<int> lastDependent(static_cast<size_t>(n), -1);
    for (int i = 0; i < n; ++i) {
        nodeReads(graph->node(i), &reads);
        for (const auto& name : reads) {
            if (available.count(name))
                continue;
            const auto it = producer.find(name);
            if (it == producer.end()) {
                // A subgraph's own values are defined inside it; only direct inputs are certain.
                const auto& direct = graph->node(i).input();
                if (std::find(direct.begin(), direct.end(), name) == direct.end())
                    continue;
                return Status::invalid(where + ": " + onnxutil::nodeLabel(graph->node(i), i) +
                    " reads '" + name +
                    "', which no graph input, initializer or node provides (a missing "
                    "initializer?)");
            }
            const auto from = static_cast<size_t>(it->second);
            if (it->second != i && lastDependent[from] != i) {
                lastDependent[from] = i;
                dependents[from].push_back(i);
                ++pending[static_cast<size_t>(i)];
            }
        }
    }
    std::vector<int> order;
    order.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
        if (pending[static_cast<size_t>(i)] == 0)
            order.push_back(i);
    for (size_t k = 0; k < order.size(); ++k)
        for (int d : dependents[static_cast<size_t>(order[k])])
            if (--pending[static_cast<size_t>(d)] == 0)
                order.push_back(d);
    if (static_cast<int>(order.size()) != n) {
        std::string nodes;
        int listed = 0;
        for (int i = 0; i < n && listed < 3; ++i)
            if (pending[static_cast<size_t>(i)] > 0) {
                nodes += (listed++ ? ", " : "") + onnxutil::nodeLabel(graph->node(i), i);
            }
        return Status::invalid(
            where + ": the graph has a cycle (nodes waiting on each other include " + nodes + ")");
    }
    bool sorted = true;
    for (int i = 0; i < n; ++i)
        sorted &= order[static_cast<size_t>(i)] == i;
    if (!sorted) {
        google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
        for (int i : order)
            *nodes.Add() = std::move(*graph->mutable_node(i));
        graph->mutable_node()->Swap(&nodes);
    }
    for (const auto& out : graph->output())
        if (!available.count(out.name()) && !producer.count(out.name()))
            return Status::invalid(
                where + ": graph output '" + out.name() + "' is produced by no node");
    return Status();
}

// Operators this build's ONNX library does not know cannot be checked, inferred or run.
Status checkOperators(const onnx::ModelProto& model, const std::string& path)
{
    std::unordered_map<std::string, int> opsets;
    for (const auto& opset : model.opset_import())
        opsets[opset.domain() == "ai.onnx" ? "" : opset.domain()] =
            static_cast<int>(opset.version());
    const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    for (const auto& [domain, version] : opsets) {
        const auto it = known.find(domain);
        if (it != known.end() && version > it->second.second)
            return Status::invalid("model file '" + path + "' uses opset " +
                std::to_string(version) + " of domain '" + (domain.empty() ? "ai.onnx" : domain) +
                "', newer than this build's ONNX library (" + onnx::LAST_RELEASE_VERSION +
                ") knows (up to " + std::to_string(it->second.second) +
                "); re-export with an older opset (torch.onnx.export(..., opset_version=" +
                std::to_string(it->second.second) + "))");
    }
    if (opsets.count("") == 0)
        return Status::invalid("model file '" + path + "' imports no ai.onnx opset");
    const auto& graph = model.graph();
    for (int i = 0; i < graph.node_size(); ++i) {
        const auto& node = graph.node(i);
        const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
        const auto opset = opsets.find(domain);
        if (known.count(domain) == 0 || opset == opsets.end())
            return Status::invalid("model file '" + path + "': " + onnxutil::nodeLabel(node, i) +
                " is a custom operator of domain '" + domain +
                "', not a standard ONNX operator; no jetagent backend runs it");
        if (!onnx::OpSchemaRegistry::Schema(node.op_type(), opset->second, domain))
            return Status::invalid("model file '" + path + "': " + onnxutil::nodeLabel(node, i) +
                " uses an unknown operator '" + node.op_type() + "' (not in ONNX opset " +
                std::to_string(opset->second) + (domain.empty() ? "" : " of domain " + domain) +
                ")");
    }
    return Status();
}

} // namespace

Status checkModel(onnx::ModelProto& model, const std::string& path, bool runChecker)
{
    if (model.ir_version() > onnx::IR_VERSION)
        return Status::invalid("model file '" + path + "' has IR version " +
            std::to_string(model.ir_version()) + ", newer than this build's ONNX library (" +
            onnx::LAST_RELEASE_VERSION + ") reads (up to " + std::to_string(onnx::IR_VERSION) +
            ")");
    // Before anything else reads the model: ONNX's checker and shape inference divide by strides
    // and index by axes unchecked.
    if (Status s = validateModel(model, path); !s)
        return s;
    if (Status s = checkOperators(model, path); !s)
        return s;
    if (Status s = checkStructure(model.mutable_graph(), path); !s)
        return s;
    if (runChecker) {
        try {
            onnx::checker::check_model(model);
        } catch (const std::exception& e) {
            std::string msg = e.what();
            std::replace(msg.begin(), msg.end(), '\n', ' ');
            return Status::invalid("model file '" + path + "' fails the ONNX checker: " + msg);
        }
    }
    try {
        // Strict: a node whose shapes contradict its inputs is an error in the file. With data
        // propagation, as the preparation's infer-shapes pass runs it: shapes computed through
        // Shape -> Gather -> Concat -> Reshape arithmetic are known here too, so that a model whose
        // later nodes contradict such a shape is refused now, not after preparation (a fuzz
        // finding: a Div of a 1 x 30 reshape by 42 values passed, and its prepared model did not).
        onnx::shape_inference::InferShapes(
            model, onnxutil::checkedSchemaRegistry(), onnx::ShapeInferenceOptions(false, 1, true));
    } catch (const std::exception& e) {
        std::string msg = e.what();
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        return Status::invalid("model file '" + path + "': ONNX shape inference failed: " + msg);
    }
    // Again with the ranks shape inference found: axes and permutations of values whose shapes the
    // file did not declare.
    return validateModel(model, path);
}

bool isQdqModel(const ModelFile& model)
{
    if (!model.proto)
        return false;
    for (const auto& node : model.proto->graph().node())
        if ((node.domain().empty() || node.domain() == "ai.onnx") &&
            (node.op_type() == "QuantizeLinear" || node.op_type() == "DequantizeLinear"))
            return true;
    return false;
}

Expected<std::shared_ptr<const ModelFile>> loadModelFile(const std::string& path)
{
    RegularFile file;
    if (Status s = openRegularFile(path, "model file '" + path + "'", &file); !s)
        return s;
    if (file.size > std::numeric_limits<int>::max())
        return Status::invalid("model file '" + path +
            "' is larger than 2 GiB, the most one protobuf message holds; export it with "
            "external data (torch.onnx.export does so by itself above 2 GiB)");
    std::vector<char> bytes(static_cast<size_t>(file.size));
    if (Status s = readAt(file, 0, bytes.data(), file.size, "model file '" + path + "'"); !s)
        return s;
    return parseModelBytes(bytes, path);
}

Expected<std::shared_ptr<const ModelFile>> parseModelBytes(
    const std::vector<char>& bytes, const std::string& path)
{
    if (bytes.empty())
        return Status::invalid("model file '" + path + "' is empty");
    if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
        return Status::invalid("model file '" + path +
            "' is larger than 2 GiB, the most one protobuf message holds; export it with "
            "external data (torch.onnx.export does so by itself above 2 GiB)");

    auto proto = std::make_shared<onnx::ModelProto>();
    if (!proto->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return Status::invalid("model file '" + path +
            "' is not a valid ONNX model (the protobuf does not parse: "
            "truncated, or not an ONNX file)");
    if (!proto->has_graph() || proto->graph().node_size() == 0)
        return Status::invalid(
            "model file '" + path + "' parses, but holds no graph nodes (is it an ONNX model?)");
    if (proto->ir_version() <= 0)
        return Status::invalid(
            "model file '" + path + "' has no IR version (is it an ONNX model?)");

    auto model = std::make_shared<ModelFile>();
    model->path = path;
    model->fileBytes = bytes.size();
    Sha256 hash;
    hash.update(bytes.data(), bytes.size());
    const fs::path baseDir = fs::path(path).parent_path();
    if (Status s = readAllExternalData(proto->mutable_graph(),
            baseDir.empty() ? fs::path(".") : baseDir, path, &hash, &model->externalBytes);
        !s)
        return s;
    if (Status s = checkModel(*proto, path, true); !s)
        return s;

    model->irVersion = proto->ir_version();
    model->producer = proto->producer_name();
    if (!proto->producer_version().empty())
        model->producer += " " + proto->producer_version();
    model->opset = onnxutil::defaultOpset(*proto);

    const auto& graph = proto->graph();
    std::unordered_set<std::string> initializers;
    for (const auto& init : graph.initializer())
        initializers.insert(init.name());
    for (const auto& input : graph.input())
        if (initializers.count(input.name()) == 0)
            model->inputs.push_back(describe(input));
    for (const auto& output : graph.output())
        model->outputs.push_back(describe(output));
    if (model->inputs.empty())
        return Status::invalid("model file '" + path + "' declares no graph inputs");
    if (model->outputs.empty())
        return Status::invalid("model file '" + path + "' declares no graph outputs");

    model->sha256 = hash.finishHex();
    model->proto = std::move(proto);
    return std::shared_ptr<const ModelFile>(std::move(model));
}

} // namespace jetagent
