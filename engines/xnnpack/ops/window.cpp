// Window geometry for the convolution and pooling family: attributes read and checked once.
#include "window.h"

#include <algorithm>

#include "../../onnx/onnx_util.h"
#include "context.h"

namespace jetagent {
namespace xnnplan {
namespace ops {

namespace {

// strides / dilations of `n` spatial axes: absent is all ones; each must be 1 to 2^16.
Status spatialInts(const onnx::NodeProto& node, const std::string& where, const char* name,
    size_t n, std::vector<int64_t>* out)
{
    *out = onnxutil::intsAttribute(node, name);
    if (out->empty())
        out->assign(n, 1);
    if (out->size() != n)
        return Status::invalid(where + ": " + name + " has " + std::to_string(out->size()) +
            " values for " + std::to_string(n) + " spatial axes");
    for (int64_t v : *out)
        if (v < 1 || v > 65536)
            return Status::invalid(
                where + ": " + name + " " + std::to_string(v) + " is out of range (1 to 65536)");
    return Status();
}

} // namespace

int64_t SpatialWindow::outputs(size_t i, int64_t input) const
{
    const int64_t extent = padded(i, input);
    return extent < span(i) ? 0 : (extent - span(i)) / strides[i] + 1;
}

void SpatialWindow::fill(const std::vector<int64_t>& x, Window2d* window) const
{
    const size_t n = axes(), rank = x.size();
    const size_t h = n == 1 ? 0 : n - 2; // index into the spatial vectors, or none for 1-D
    const size_t w = n - 1;
    window->kernelH = n == 1 ? 1 : static_cast<uint32_t>(kernel[h]);
    window->kernelW = static_cast<uint32_t>(kernel[w]);
    window->strideH = n == 1 ? 1 : static_cast<uint32_t>(strides[h]);
    window->strideW = static_cast<uint32_t>(strides[w]);
    window->dilationH = n == 1 ? 1 : static_cast<uint32_t>(dilations[h]);
    window->dilationW = static_cast<uint32_t>(dilations[w]);
    window->padTop = n == 1 ? 0 : static_cast<uint32_t>(pads[h]);
    window->padBottom = n == 1 ? 0 : static_cast<uint32_t>(pads[h + n]);
    window->padLeft = static_cast<uint32_t>(pads[w]);
    window->padRight = static_cast<uint32_t>(pads[w + n]);
    window->inputH = n == 1 ? 1 : static_cast<size_t>(x[rank - 2]);
    window->inputW = static_cast<size_t>(x[rank - 1]);
}

Status readStrides(const onnx::NodeProto& node, const std::string& where,
    std::vector<int64_t> kernel, SpatialWindow* window)
{
    window->kernel = std::move(kernel);
    const size_t n = window->axes();
    Status s = spatialInts(node, where, "strides", n, &window->strides);
    if (s.ok())
        s = spatialInts(node, where, "dilations", n, &window->dilations);
    return s;
}

Status readPads(const onnx::NodeProto& node, const std::string& where,
    const std::vector<int64_t>& x, SpatialWindow* window)
{
    const size_t n = window->axes();
    const std::vector<int64_t>& kernel = window->kernel;
    const std::vector<int64_t>& strides = window->strides;
    const std::vector<int64_t>& dilations = window->dilations;
    std::vector<int64_t>* pads = &window->pads;
    const onnx::AttributeProto* autoPad = onnxutil::findAttribute(node, "auto_pad");
    const std::string mode = autoPad ? autoPad->s() : "NOTSET";
    if (mode == "NOTSET") {
        *pads = onnxutil::intsAttribute(node, "pads");
        if (pads->empty())
            pads->assign(2 * n, 0);
    } else if (mode == "VALID") {
        pads->assign(2 * n, 0);
    } else if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
        pads->assign(2 * n, 0);
        for (size_t i = 0; i < n; ++i) {
            const int64_t in = x[2 + i];
            const int64_t out = (in + strides[i] - 1) / strides[i];
            const int64_t total = std::max<int64_t>(
                0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in);
            const int64_t small = total / 2;
            (*pads)[i] = mode == "SAME_UPPER" ? small : total - small;
            (*pads)[i + n] = total - (*pads)[i];
        }
    } else {
        return Status::invalid(where + ": auto_pad '" + mode + "' is not an ONNX value");
    }
    if (pads->size() != 2 * n)
        return Status::invalid(where + ": pads has " + std::to_string(pads->size()) +
            " values, expected " + std::to_string(2 * n));
    for (size_t i = 0; i < n; ++i) {
        if ((*pads)[i] < 0 || (*pads)[i + n] < 0 || (*pads)[i] > kMaxDim ||
            (*pads)[i + n] > kMaxDim)
            return Status::unsupported(where + ": pads must be 0 to 2^31 (negative pads crop)");
        if ((*pads)[i] >= kernel[i] * dilations[i] || (*pads)[i + n] >= kernel[i] * dilations[i])
            return Status::unsupported(where + ": a pad as large as the kernel window (" +
                std::to_string(kernel[i]) + ") is not supported");
    }
    return Status();
}

} // namespace ops
} // namespace xnnplan
} // namespace jetagent
