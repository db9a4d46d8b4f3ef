// An ONNX model file read into memory, checked, and described (inputs, outputs, opset, hash).
#include "jetagent/engines/model_file.h"

#include <filesystem>
#include <fstream>
#include <limits>
#include <unordered_set>

#include <onnx/onnx_pb.h>

#include "jetagent/engines/sha256.h"

namespace jetagent {

namespace {

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

} // namespace

Expected<std::shared_ptr<const ModelFile>> loadModelFile(const std::string& path)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return Status::notFound("model file '" + path + "' does not exist");
    if (std::filesystem::is_directory(path, ec))
        return Status::invalid("model path '" + path + "' is a directory, not an ONNX file");
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in)
        return Status::notFound("model file '" + path + "' cannot be opened (permissions?)");
    const std::streamoff size = in.tellg();
    if (size < 0)
        return Status::io("cannot read model file '" + path + "'");
    std::vector<char> bytes(static_cast<size_t>(size));
    in.seekg(0);
    if (size > 0 && !in.read(bytes.data(), size))
        return Status::io("cannot read model file '" + path + "'");
    return parseModelBytes(std::move(bytes), path);
}

Expected<std::shared_ptr<const ModelFile>> parseModelBytes(
    std::vector<char> bytes, const std::string& path)
{
    if (bytes.empty())
        return Status::invalid("model file '" + path + "' is empty");
    if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
        return Status::invalid("model file '" + path +
            "' is larger than 2 GiB; models with external data are not read yet");

    onnx::ModelProto proto;
    if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return Status::invalid("model file '" + path +
            "' is not a valid ONNX model (the protobuf does not parse: "
            "truncated, or not an ONNX file)");
    if (!proto.has_graph() || proto.graph().node_size() == 0)
        return Status::invalid(
            "model file '" + path + "' parses, but holds no graph nodes (is it an ONNX model?)");
    if (proto.ir_version() <= 0)
        return Status::invalid(
            "model file '" + path + "' has no IR version (is it an ONNX model?)");

    auto model = std::make_shared<ModelFile>();
    model->path = path;
    model->irVersion = proto.ir_version();
    model->producer = proto.producer_name();
    if (!proto.producer_version().empty())
        model->producer += " " + proto.producer_version();
    for (const auto& opset : proto.opset_import())
        if (opset.domain().empty() || opset.domain() == "ai.onnx")
            model->opset = opset.version();

    const auto& graph = proto.graph();
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

    model->sha256 = Sha256::hex(bytes.data(), bytes.size());
    model->bytes = std::move(bytes);
    return std::shared_ptr<const ModelFile>(std::move(model));
}

} // namespace jetagent
