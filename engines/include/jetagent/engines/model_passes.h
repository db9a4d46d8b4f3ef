// Preparation passes: small rewrites of an ONNX model into the form a backend accepts.
//
// Each pass takes the model in memory, edits it in place, and reports what it changed. A pass
// leaves a valid graph behind: every node input is produced by a graph input, an initializer or
// an earlier node. Errors (InvalidInput) name the node and what was wrong; on error the model may
// be half rewritten and must be discarded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jetagent/base/status.h"

namespace onnx {
class ModelProto;
}

namespace jetagent {

// What one pass did, for `jetagent inspect --prepared` and the engine log.
struct PassReport {
    std::string pass; // its name in a pass list: "fold-constants"
    int removed = 0; // nodes taken out of the graph
    int folded = 0; // nodes evaluated into constants (or merged into another node)
    int rewritten = 0; // nodes changed in place or replaced by an equivalent form
    int64_t ns = 0; // time the pass took
    std::vector<std::string> notes; // one line per change worth showing ("Clip 'Clip_3': ...")

    int changes() const { return removed + folded + rewritten; }
};

// Sets dimension 0 of every graph input and output to `batch`, or, with batch 0, to the symbolic
// dimension "batch". Shapes inferred for intermediate values are cleared (they may be stale).
Status setBatch(onnx::ModelProto& model, int64_t batch, PassReport* report);

// Runs ONNX shape inference and stores the shapes in value_info (and the graph outputs).
Status inferShapes(onnx::ModelProto& model, PassReport* report);

// Removes Identity nodes and inference-mode Dropout. An Identity of an initializer (the exporter's
// way of sharing one tensor between layers) becomes an initializer of its own: shared initializers
// are expanded so that later passes can rewrite each layer's weights independently.
Status eliminateIdentity(onnx::ModelProto& model, PassReport* report);

// Evaluates nodes whose inputs are all constant (initializers, Constant nodes, Shape of a tensor
// with a static shape), replacing them with initializers: the Shape→Gather→Unsqueeze→Concat chains
// of PyTorch exports become constant Reshape/Split/Slice arguments. Needs shapes inferred first
// for Shape nodes; runs shape inference again itself until nothing more folds.
Status foldConstants(onnx::ModelProto& model, PassReport* report);

// Folds inference-mode BatchNormalization into the Conv before it (1-D, 2-D and 3-D), when that
// Conv's output feeds only the BatchNormalization and its weights are constant.
Status foldBatchNorm(onnx::ModelProto& model, PassReport* report);

// Rewrites operators into the forms OpenCV DNN 4.x reads: constant inputs that newer opsets take
// (Clip min/max, Split sizes, Squeeze/Unsqueeze/Reduce axes, Pad pads) become attributes, 5-D
// global pooling becomes ReduceMean/ReduceMax, Conv gets kernel_shape from its weights. The result
// is OpenCV's dialect of ONNX and is not meant to pass the ONNX checker.
Status canonicalizeForOpenCV(onnx::ModelProto& model, PassReport* report);

// Rewrites each Einsum that spells a batched matrix product of two operands (MaxViT's attention:
// "B G H I D, B G H J D -> B G H I J") into MatMul, B's last two axes transposed first where the
// equation asks: ONNX's shape inference gives Einsum's output a rank but no dimensions, and the
// xnnpack backend needs them. Other equations are left as they are.
Status einsumToMatMul(onnx::ModelProto& model, PassReport* report);

// Removes nodes whose outputs nothing uses, initializers nothing reads, and stale value_info.
Status pruneUnused(onnx::ModelProto& model, PassReport* report);

} // namespace jetagent
