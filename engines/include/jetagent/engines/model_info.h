// What `jetagent inspect` reports about a model: operators, parameters and multiply-accumulates.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "jetagent/base/status.h"
#include "jetagent/engines/model_file.h"

namespace jetagent {

struct OperatorStats {
    std::string op; // "Conv"; with its domain when not ai.onnx ("com.microsoft:FusedConv")
    int64_t nodes = 0;
    int64_t macs = 0; // for the shapes in ModelStats::shapes; 0 for operators not counted
};

// Operators whose multiply-accumulates are counted: one MAC per multiply-add of the operator's
// definition (Conv incl. grouped, depthwise and 3-D; ConvTranspose; Gemm; MatMul). Element-wise
// operators, pooling, normalisation and activations are not counted; that is how published
// figures (torchvision's model tables, the papers' "FLOPs") are counted too.
extern const char* const kMacOperators[];

struct ModelStats {
    std::vector<OperatorStats> operators; // by node count, most frequent first
    int64_t nodes = 0;
    // Trainable parameters: float tensors that operators read as weights. A tensor that the
    // exporter shares between layers through Identity counts once per layer, as it did in the
    // framework; BatchNormalization's running mean and variance are buffers, not parameters.
    int64_t parameters = 0;
    int64_t parameterTensors = 0;
    int64_t buffers = 0; // BatchNormalization running statistics
    int64_t constants = 0; // other initializer elements (shapes, axes, integer tables)
    uint64_t weightBytes = 0; // of all initializers
    // Multiply-accumulates for one inference with these input shapes.
    std::map<std::string, std::vector<int64_t>> shapes;
    int64_t macs = 0;
    std::vector<std::string> uncounted; // nodes of counted kinds whose shapes stayed unknown
};

// Input shapes for counting MACs: the given ones by input name; for the rest, the model's own
// dims with a symbolic first (batch) dimension set to 1. Another symbolic dimension must be given.
Expected<ModelStats> modelStats(
    const ModelFile& model, const std::map<std::string, std::vector<int64_t>>& inputShapes);

} // namespace jetagent
