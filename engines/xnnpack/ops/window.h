// The window a convolution or pooling slides over its input's spatial axes (internal to
// engines/xnnpack/): kernel, strides, dilations and pads read from the node's attributes and
// checked, the output extents they give, and the 2-D window the steps take. Conv, MaxPool and
// AveragePool share it, so that the geometry is computed in one place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "../steps.h"

namespace jetagent {
namespace xnnplan {
namespace ops {

struct SpatialWindow {
    std::vector<int64_t> kernel, strides, dilations; // one per spatial axis
    std::vector<int64_t> pads; // [begin..., end...]

    size_t axes() const { return kernel.size(); }
    // What the window covers of the input along spatial axis i, its dilation included.
    int64_t span(size_t i) const { return dilations[i] * (kernel[i] - 1) + 1; }
    // The input's extent `input` along spatial axis i with both its pads.
    int64_t padded(size_t i, int64_t input) const { return input + pads[i] + pads[i + axes()]; }
    // How many whole windows fit along axis i (ONNX's floor rule); 0 when not one does.
    int64_t outputs(size_t i, int64_t input) const;
    // The last two spatial axes of `x` ([N, C, spatial...]; a 1-D window as one of height 1) as
    // the steps' window: kernel, strides, dilations, pads and the input's height and width.
    void fill(const std::vector<int64_t>& x, Window2d* window) const;
};

// Reads the strides and dilations of a window of `kernel` (absent: all ones; each must be 1 to
// 2^16) into `window`; `where` names the node in errors.
Status readStrides(const onnx::NodeProto& node, const std::string& where,
    std::vector<int64_t> kernel, SpatialWindow* window);

// Reads the pads (the pads attribute, or those auto_pad implies for input `x`, [N, C,
// spatial...]) into `window`, whose kernel, strides and dilations are read: each 0 to 2^31 and
// smaller than the window.
Status readPads(const onnx::NodeProto& node, const std::string& where,
    const std::vector<int64_t>& x, SpatialWindow* window);

} // namespace ops
} // namespace xnnplan
} // namespace jetagent
