// The constant folder's quantization family: DequantizeLinear of a constant (a QDQ model's int8
// weights and int32 biases) becomes its float32 values, and QuantizeLinear of a constant (a
// fake-quantized export's weights) its integers, as ONNX defines them.
#include <algorithm>
#include <cmath>

#include "fold_evaluators.h"

namespace jetagent {
namespace fold {

namespace {

bool isQuantized(int32_t type)
{
    return type == kInt8 || type == kUint8 || type == kInt32;
}

} // namespace

namespace {

// Where each element's scale is: one for the tensor, or one per index of `axis` (opset 13 on).
struct Channels {
    int64_t count = 1, inner = 1, extent = 1;
    size_t of(size_t i) const
    {
        return count > 1 ? static_cast<size_t>((static_cast<int64_t>(i) / inner) % extent) : 0;
    }
};

Status channelsOf(const NodeContext& c, const Value& x, const Value& scale, Channels* ch)
{
    ch->count = scale.count();
    if (ch->count < 1)
        return c.invalid("it has an empty scale");
    ch->inner = x.count();
    if (ch->count == 1)
        return Status();
    int64_t axis = onnxutil::intAttribute(c.node, "axis", 1);
    if (scale.dims.size() != 1 || c.opset < 13)
        return c.invalid("a scale of " + dimsText(scale.dims) + " is not a scalar or 1-D");
    if (Status s = normalizeAxisOf(c, &axis, static_cast<int64_t>(x.dims.size())); !s)
        return s;
    ch->extent = x.dims[static_cast<size_t>(axis)];
    if (ch->extent != ch->count)
        return c.invalid(std::to_string(ch->count) + " scales for axis " + std::to_string(axis) +
            " of " + dimsText(x.dims));
    ch->inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < x.dims.size(); ++d)
        ch->inner *= x.dims[d];
    return Status();
}

} // namespace

// A QuantizeLinear of a constant (a fake-quantized export's float weights): its integers, which
// the DequantizeLinear after it then folds.
Status evaluateQuantizeLinear(const NodeContext& c, std::optional<Value>* out)
{
    const auto [x, scale, zero] = c.inputsUpTo<3>();
    if (!x || !scale || !x->isFloat() || !scale->isFloat())
        return Status();
    if (onnxutil::intAttribute(c.node, "block_size", 0) != 0 ||
        onnxutil::intAttribute(c.node, "output_dtype", 0) != 0)
        return Status();
    const int32_t type = zero ? zero->type : kUint8;
    if (type != kInt8 && type != kUint8)
        return Status(); // left to the backend, which names what it cannot take
    Channels ch;
    if (Status s = channelsOf(c, *x, *scale, &ch); !s)
        return s;
    if (zero && zero->count() != ch.count)
        return c.invalid("its scale and zero point differ in size");
    const float lo = type == kInt8 ? -128.0f : 0.0f, hi = type == kInt8 ? 127.0f : 255.0f;
    Value y;
    y.type = type;
    y.dims = x->dims;
    y.ints.resize(x->floats.size());
    for (size_t i = 0; i < x->floats.size(); ++i) {
        const size_t k = ch.of(i);
        const float z = zero ? static_cast<float>(zero->ints[k]) : 0.0f;
        // Round half to even (nearbyint in the default rounding mode), then saturate.
        const float q = std::nearbyint(x->floats[i] / scale->floats[k]) + z;
        y.ints[i] = static_cast<int64_t>(std::isnan(q) ? z : std::min(hi, std::max(lo, q)));
    }
    *out = std::move(y);
    return Status();
}

Status evaluateDequantizeLinear(const NodeContext& c, std::optional<Value>* out)
{
    const auto [x, scale, zero] = c.inputsUpTo<3>();
    if (!x || !scale || !isQuantized(x->type) || !scale->isFloat())
        return Status(); // a computed input, or a type (float8, int4) left to the backend
    if (onnxutil::intAttribute(c.node, "block_size", 0) != 0)
        return Status();
    if (zero && zero->type != x->type)
        return c.invalid(std::string("its zero point is ") + typeName(zero->type) +
            " and its input " + typeName(x->type));
    Channels ch;
    if (Status s = channelsOf(c, *x, *scale, &ch); !s)
        return s;
    if (zero && zero->count() != ch.count)
        return c.invalid("its scale and zero point differ in size");
    const int64_t channels = ch.count;
    Value y;
    y.type = kFloat;
    y.dims = x->dims;
    y.floats.resize(x->ints.size());
    for (size_t i = 0; i < x->ints.size(); ++i) {
        const size_t k = ch.of(i);
        const float z = zero ? static_cast<float>(zero->ints[k]) : 0.0f;
        // As ONNX's reference computes it: (x - zero point) in float32, times the scale.
        y.floats[i] = (static_cast<float>(x->ints[i]) - z) * scale->floats[k];
    }
    // int8 weights with zero point 0: their scales go with them (onnx_util.h).
    const bool symmetric = !zero ||
        std::all_of(zero->ints.begin(), zero->ints.end(), [](int64_t z) { return z == 0; });
    if (x->type == kInt8 && symmetric) {
        onnxutil::DequantizedScales note;
        note.axis = channels > 1 ? onnxutil::intAttribute(c.node, "axis", 1) : -1;
        if (channels > 1 && note.axis < 0)
            note.axis += static_cast<int64_t>(x->dims.size());
        note.scales = scale->floats;
        y.note = onnxutil::dequantizedNote(note);
    }
    *out = std::move(y);
    return Status();
}

} // namespace fold
} // namespace jetagent
