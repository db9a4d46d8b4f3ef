// Model limits and attribute checks run before any library sees a model (model_validate.h).
#include "jetagent/engines/model_validate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/onnx_pb.h>

#include "jetagent/base/format.h"
#include "onnx_util.h"

namespace jetagent {

namespace {

// Constant arguments (axes, pads, shapes, steps) are short lists; larger constants are weights,
// which no check here reads.
constexpr int64_t kMaxListElements = 4096;

std::string listText(const std::vector<int64_t>& values)
{
    std::string text = "[";
    for (size_t i = 0; i < values.size() && i < 16; ++i)
        text += (i ? ", " : "") + std::to_string(values[i]);
    if (values.size() > 16)
        text += ", ... (" + std::to_string(values.size()) + " values)";
    return text + "]";
}

std::string floatText(double value)
{
    if (std::isnan(value))
        return "nan";
    if (std::isinf(value))
        return value > 0 ? "inf" : "-inf";
    std::string text = formatText("%g", value);
    return text;
}

std::string rangeText(int64_t lo, int64_t hi)
{
    return std::to_string(lo) + " to " + std::to_string(hi);
}

// The product of `dims`, each checked against kMaxModelDimension and the running product against
// `maxElements` before it grows; -1 dims (unknown) count as 1. False with the reason in `why`.
bool boundedProduct(
    const std::vector<int64_t>& dims, int64_t maxElements, int64_t* count, std::string* why)
{
    int64_t n = 1;
    for (size_t i = 0; i < dims.size(); ++i) {
        const int64_t d = dims[i];
        if (d > kMaxModelDimension) {
            *why = "dimension " + std::to_string(i) + " is " + std::to_string(d) +
                ", more than the " + std::to_string(kMaxModelDimension) + " jetagent accepts";
            return false;
        }
        if (d < -1) {
            *why = "dimension " + std::to_string(i) + " is " + std::to_string(d) +
                "; sizes cannot be negative";
            return false;
        }
        if (d <= 0)
            continue;
        if (n > maxElements / d) {
            *why = "that is more than the " + std::to_string(maxElements) +
                " elements jetagent accepts";
            return false;
        }
        n *= d;
    }
    *count = n;
    return true;
}

// Where one value's shape is declared: a tensor (initializer, Constant value) or a value_info.
struct Declared {
    const onnx::TensorProto* tensor = nullptr;
    const onnx::ValueInfoProto* value = nullptr;
};

// The values visible in one graph: its own, then its enclosing graphs' (subgraphs read outer
// values by name). Keys view the names in the model, which stays unchanged while it is checked;
// dims are read from the declaration when a check asks for them, so that the 100,000s of values
// no check asks about cost one map entry each.
struct Scope {
    std::unordered_map<std::string_view, Declared> values;
    const Scope* outer = nullptr;

    const Declared* find(const std::string& name) const
    {
        for (const Scope* s = this; s; s = s->outer)
            if (const auto it = s->values.find(name); it != s->values.end())
                return &it->second;
        return nullptr;
    }
    // The dims of a value (-1 for those unknown); false when its rank is unknown.
    bool shape(const std::string& name, std::vector<int64_t>* dims) const
    {
        const Declared* d = find(name);
        if (!d)
            return false;
        if (d->tensor) {
            dims->assign(d->tensor->dims().begin(), d->tensor->dims().end());
            return true;
        }
        if (!d->value || !d->value->type().tensor_type().has_shape())
            return false;
        dims->clear();
        for (const auto& dim : d->value->type().tensor_type().shape().dim())
            dims->push_back(dim.has_dim_value() ? dim.dim_value() : -1);
        return true;
    }
    const onnx::TensorProto* constant(const std::string& name) const
    {
        const Declared* d = find(name);
        return d ? d->tensor : nullptr;
    }
};

// One node being checked: its attributes, the shapes and constants of its inputs, and messages
// that name the file, the node, the attribute, its value and the limit.
class NodeCheck {
public:
    NodeCheck(const onnx::NodeProto& node, int index, int64_t opset, const Scope& scope,
        const std::string& where)
        : node_(node), index_(index), opset_(opset), scope_(scope), where_(where)
    {
    }

    const onnx::NodeProto& node() const { return node_; }
    int64_t opset() const { return opset_; }

    Status fail(const std::string& what) const
    {
        return Status::invalid(where_ + ": " + onnxutil::nodeLabel(node_, index_) + ": " + what);
    }

    const onnx::AttributeProto* attribute(const std::string& name) const
    {
        return onnxutil::findAttribute(node_, name);
    }

    // An INT attribute, `fallback` when absent; a wrongly typed one is an error.
    Status intAttr(const std::string& name, int64_t fallback, int64_t* value) const
    {
        const auto* a = attribute(name);
        *value = fallback;
        if (!a)
            return Status();
        if (a->type() != onnx::AttributeProto::INT)
            return fail("attribute " + name + " must be an integer");
        *value = a->i();
        return Status();
    }
    Status intsAttr(const std::string& name, std::vector<int64_t>* values, bool* present) const
    {
        const auto* a = attribute(name);
        *present = a != nullptr;
        values->clear();
        if (!a)
            return Status();
        if (a->type() != onnx::AttributeProto::INTS)
            return fail("attribute " + name + " must be a list of integers");
        values->assign(a->ints().begin(), a->ints().end());
        return Status();
    }
    Status floatAttr(const std::string& name, float* value, bool* present) const
    {
        const auto* a = attribute(name);
        *present = a != nullptr;
        if (!a)
            return Status();
        if (a->type() != onnx::AttributeProto::FLOAT)
            return fail("attribute " + name + " must be a float");
        *value = a->f();
        return Status();
    }

    // An INT attribute within [lo, hi] when present.
    Status intInRange(const std::string& name, int64_t lo, int64_t hi) const
    {
        int64_t v = 0;
        if (Status s = intAttr(name, lo, &v); !s)
            return s;
        if (v < lo || v > hi)
            return fail(name + " = " + std::to_string(v) + ": must be " + rangeText(lo, hi));
        return Status();
    }

    // Each element of an INTS attribute within [lo, hi]; `count` elements when count >= 0.
    Status eachInRange(const std::string& name, int64_t lo, int64_t hi, int64_t count,
        const std::string& countReason, std::vector<int64_t>* out = nullptr) const
    {
        std::vector<int64_t> v;
        bool present = false;
        if (Status s = intsAttr(name, &v, &present); !s)
            return s;
        if (out)
            *out = v;
        if (!present)
            return Status();
        return checkList(name, v, lo, hi, count, countReason);
    }

    Status checkList(const std::string& name, const std::vector<int64_t>& v, int64_t lo, int64_t hi,
        int64_t count, const std::string& countReason) const
    {
        if (count >= 0 && static_cast<int64_t>(v.size()) != count)
            return fail(name + " " + listText(v) + " has " + std::to_string(v.size()) +
                " values; " + countReason);
        for (int64_t x : v)
            if (x < lo || x > hi)
                return fail(name + " " + listText(v) + ": each value must be " + rangeText(lo, hi));
        return Status();
    }

    // A FLOAT attribute, when present, that is finite and within [lo, hi] (or above lo when
    // `loExclusive`).
    Status floatInRange(const std::string& name, double lo, double hi, bool loExclusive) const
    {
        float v = 0;
        bool present = false;
        if (Status s = floatAttr(name, &v, &present); !s || !present)
            return s;
        if (!std::isfinite(v) || v < lo || v > hi || (loExclusive && v == lo))
            return fail(name + " = " + floatText(v) + ": must be a finite number " +
                (loExclusive ? "above " : "from ") + floatText(lo) + " to " + floatText(hi));
        return Status();
    }

    Status oneOf(const std::string& name, const std::vector<std::string>& allowed) const
    {
        const auto* a = attribute(name);
        if (!a)
            return Status();
        if (a->type() != onnx::AttributeProto::STRING)
            return fail("attribute " + name + " must be a string");
        if (std::find(allowed.begin(), allowed.end(), a->s()) != allowed.end())
            return Status();
        std::string list;
        for (const auto& s : allowed)
            list += (list.empty() ? "" : ", ") + s;
        return fail(name + " = '" + a->s() + "': must be one of " + list);
    }

    // The dims of input `i` (-1 for those unknown); false when it is absent or its rank unknown.
    bool inputShape(int i, std::vector<int64_t>* dims) const
    {
        if (i >= node_.input_size() || node_.input(i).empty())
            return false;
        return scope_.shape(node_.input(i), dims);
    }
    int inputRank(int i) const
    {
        std::vector<int64_t> dims;
        return inputShape(i, &dims) ? static_cast<int>(dims.size()) : -1;
    }
    // Dimension `d` of input `i`; -1 when unknown.
    int64_t inputDim(int i, int d) const
    {
        std::vector<int64_t> dims;
        return inputShape(i, &dims) && d >= 0 && static_cast<size_t>(d) < dims.size()
            ? dims[static_cast<size_t>(d)]
            : -1;
    }
    // The rank of the first input whose rank is known; -1 when none is.
    int anyInputRank() const
    {
        for (int i = 0; i < node_.input_size(); ++i)
            if (inputRank(i) >= 0)
                return inputRank(i);
        return -1;
    }

    // Input `i` as a constant list of integers (initializer or Constant output). False when it is
    // absent, computed at run time, or not a short integer tensor.
    bool constantInts(int i, std::vector<int64_t>* out) const
    {
        const auto* t = constantInput(i);
        return t && onnxutil::elementCount(*t) <= kMaxListElements && onnxutil::readInt64(*t, out);
    }
    bool constantFloats(int i, std::vector<float>* out) const
    {
        const auto* t = constantInput(i);
        return t && onnxutil::elementCount(*t) <= kMaxListElements && onnxutil::readFloat(*t, out);
    }

private:
    const onnx::TensorProto* constantInput(int i) const
    {
        if (i >= node_.input_size() || node_.input(i).empty())
            return nullptr;
        return scope_.constant(node_.input(i));
    }

    const onnx::NodeProto& node_;
    int index_;
    int64_t opset_;
    const Scope& scope_;
    const std::string& where_;
};

// --- per-operator checks -------------------------------------------------------------------------

// An axis attribute, when given, within [-rank, rank - 1] where the rank is known, and within
// the largest rank accepted where it is not. (Defaults are in range for the ranks they apply to.)
Status checkAxis(const NodeCheck& c, const std::string& name, int rank)
{
    if (!c.attribute(name))
        return Status();
    int64_t axis = 0;
    if (Status s = c.intAttr(name, 0, &axis); !s)
        return s;
    const int64_t r = rank >= 0 ? rank : kMaxModelRank;
    if (axis < -r || axis > r - 1)
        return c.fail(name + " = " + std::to_string(axis) + ": must be " + rangeText(-r, r - 1) +
            (rank >= 0 ? " for an input of rank " + std::to_string(rank) : std::string()));
    return Status();
}

// A list of axes (attribute or constant input) within [-rank, rank - 1], none given twice.
Status checkAxesList(
    const NodeCheck& c, const std::string& name, const std::vector<int64_t>& axes, int rank)
{
    const int64_t r = rank >= 0 ? rank : kMaxModelRank;
    std::unordered_set<int64_t> seen;
    for (int64_t axis : axes) {
        if (axis < -r || axis >= r)
            return c.fail(name + " " + listText(axes) + ": each axis must be " +
                rangeText(-r, r - 1) +
                (rank >= 0 ? " for rank " + std::to_string(rank) : std::string()));
        if (rank >= 0 && !seen.insert(axis < 0 ? axis + r : axis).second)
            return c.fail(
                name + " " + listText(axes) + ": axis " + std::to_string(axis) + " is given twice");
    }
    return Status();
}

// The axes of Squeeze, Unsqueeze and the reductions: an attribute, or input 1 from `inputSince`.
Status checkAxesArgument(const NodeCheck& c, int64_t inputSince, int rank)
{
    std::vector<int64_t> axes;
    if (c.opset() >= inputSince) {
        if (!c.constantInts(1, &axes))
            return Status();
        return checkAxesList(c, "axes (input 1)", axes, rank);
    }
    bool present = false;
    if (Status s = c.intsAttr("axes", &axes, &present); !s || !present)
        return s;
    return checkAxesList(c, "axes", axes, rank);
}

Status checkSqueeze(const NodeCheck& c)
{
    return checkAxesArgument(c, 13, c.inputRank(0));
}

Status checkUnsqueeze(const NodeCheck& c)
{
    // Unsqueeze's axes index the output, whose rank is the input's plus the number of axes.
    std::vector<int64_t> axes;
    bool present = false;
    if (c.opset() >= 13)
        present = c.constantInts(1, &axes);
    else if (Status s = c.intsAttr("axes", &axes, &present); !s)
        return s;
    if (!present)
        return Status();
    const int rank = c.inputRank(0) >= 0 ? c.inputRank(0) + static_cast<int>(axes.size()) : -1;
    return checkAxesList(c, c.opset() >= 13 ? "axes (input 1)" : "axes", axes, rank);
}

Status checkReduce(const NodeCheck& c)
{
    if (Status s = c.intInRange("keepdims", 0, 1); !s)
        return s;
    if (Status s = c.intInRange("noop_with_empty_axes", 0, 1); !s)
        return s;
    // ReduceSum took its axes as an input from opset 13, the other reductions from opset 18.
    return checkAxesArgument(c, c.node().op_type() == "ReduceSum" ? 13 : 18, c.inputRank(0));
}

// Conv, ConvTranspose, ConvInteger, QLinearConv and the pools share kernel, stride, dilation and
// pad attributes. `spatial` is the number of spatial dimensions where known (-1 otherwise).
Status checkWindow(const NodeCheck& c, int spatial, bool kernelRequired)
{
    std::vector<int64_t> kernel;
    bool present = false;
    if (Status s = c.intsAttr("kernel_shape", &kernel, &present); !s)
        return s;
    if (kernelRequired && !present)
        return c.fail("has no kernel_shape");
    if (present && spatial < 0)
        spatial = static_cast<int>(kernel.size());
    const std::string per = "one per spatial dimension (" + std::to_string(spatial) + ")";
    if (present)
        if (Status s = c.checkList("kernel_shape", kernel, 1, kMaxModelDimension, spatial, per); !s)
            return s;
    if (Status s = c.eachInRange("strides", 1, kMaxModelDimension, spatial, per); !s)
        return s;
    if (Status s = c.eachInRange("dilations", 1, kMaxModelDimension, spatial, per); !s)
        return s;
    std::vector<int64_t> pads;
    if (Status s = c.eachInRange("pads", 0, kMaxModelDimension, spatial < 0 ? -1 : 2 * spatial,
            "a begin and an end per spatial dimension (" + std::to_string(2 * spatial) + ")",
            &pads);
        !s)
        return s;
    if (spatial < 0 && pads.size() % 2 != 0)
        return c.fail("pads " + listText(pads) +
            " has an odd number of values; it holds a begin "
            "and an end per spatial dimension");
    return c.oneOf("auto_pad", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"});
}

// The spatial rank of a convolution from its weight, else its kernel_shape, else its input.
int convolutionSpatialRank(const NodeCheck& c, int weightInput)
{
    if (c.inputRank(weightInput) >= 3)
        return c.inputRank(weightInput) - 2;
    if (const auto* a = c.attribute("kernel_shape"))
        return a->ints_size();
    return c.inputRank(0) >= 3 ? c.inputRank(0) - 2 : -1;
}

Status checkConvolution(const NodeCheck& c)
{
    const std::string& op = c.node().op_type();
    const int weight = op == "QLinearConv" ? 3 : 1;
    const bool transpose = op == "ConvTranspose";
    const int wrank = c.inputRank(weight);
    if (wrank >= 0 && wrank < 3)
        return c.fail("weight '" + c.node().input(weight) + "' has rank " + std::to_string(wrank) +
            "; convolution weights have rank 3 or more");
    const int spatial = convolutionSpatialRank(c, weight);
    if (Status s = checkWindow(c, spatial, false); !s)
        return s;
    if (Status s = c.intInRange("group", 1, kMaxModelDimension); !s)
        return s;
    int64_t group = 1;
    (void)c.intAttr("group", 1, &group);
    std::vector<int64_t> w;
    if (c.inputShape(weight, &w))
        for (size_t d = 0; d < w.size(); ++d)
            if (w[d] == 0)
                return c.fail("weight '" + c.node().input(weight) + "' " + listText(w) +
                    " has an empty dimension " + std::to_string(d));
    // Conv: W is [M, C/group, k...], so group divides M and C = W[1] * group.
    // ConvTranspose: W is [C, M/group, k...], so group divides C = W[0].
    const int64_t w0 = c.inputDim(weight, 0);
    const int64_t w1 = c.inputDim(weight, 1);
    const int64_t channels = c.inputDim(0, 1);
    if (w0 > 0 && w0 % group != 0)
        return c.fail("group = " + std::to_string(group) + " does not divide the " +
            std::to_string(w0) + (transpose ? " input" : " output") + " channels of weight '" +
            c.node().input(weight) + "'");
    if (!transpose && channels > 0 && w1 > 0 && channels != w1 * group)
        return c.fail("group = " + std::to_string(group) + ": the input has " +
            std::to_string(channels) + " channels, the weight '" + c.node().input(weight) +
            "' expects " + std::to_string(w1) + " x " + std::to_string(group));
    if (transpose && channels > 0 && w0 > 0 && channels != w0)
        return c.fail("the input has " + std::to_string(channels) + " channels, the weight '" +
            c.node().input(weight) + "' expects " + std::to_string(w0));
    if (transpose) {
        const std::string per = "one per spatial dimension (" + std::to_string(spatial) + ")";
        if (Status s = c.eachInRange("output_padding", 0, kMaxModelDimension, spatial, per); !s)
            return s;
        if (Status s = c.eachInRange("output_shape", 1, kMaxModelDimension, -1, per); !s)
            return s;
    }
    return Status();
}

// LpPool's p: a float in opset 1, an integer from opset 2.
Status checkNorm(const NodeCheck& c)
{
    const auto* p = c.attribute("p");
    if (p && p->type() == onnx::AttributeProto::FLOAT)
        return c.floatInRange("p", 1, std::numeric_limits<float>::max(), false);
    return c.intInRange("p", 1, kMaxModelDimension);
}

Status checkPool(const NodeCheck& c)
{
    const int spatial = c.inputRank(0) >= 3 ? c.inputRank(0) - 2 : -1;
    const bool maxUnpool = c.node().op_type() == "MaxUnpool";
    if (Status s = checkWindow(c, spatial, true); !s)
        return s;
    if (Status s = c.intInRange("ceil_mode", 0, 1); !s)
        return s;
    if (Status s = c.intInRange("count_include_pad", 0, 1); !s)
        return s;
    if (Status s = c.intInRange("storage_order", 0, 1); !s)
        return s;
    if (Status s = checkNorm(c); !s)
        return s;
    if (maxUnpool)
        return Status();
    // A window that lies wholly in the padding averages nothing (0 / 0).
    std::vector<int64_t> kernel, pads, dilations;
    bool present = false;
    (void)c.intsAttr("kernel_shape", &kernel, &present);
    (void)c.intsAttr("pads", &pads, &present);
    (void)c.intsAttr("dilations", &dilations, &present);
    for (size_t i = 0; i < pads.size() && !kernel.empty(); ++i) {
        const size_t k = i % kernel.size();
        const int64_t extent = (kernel[k] - 1) * (k < dilations.size() ? dilations[k] : 1) + 1;
        if (pads[i] >= extent)
            return c.fail("pads " + listText(pads) + ": pad " + std::to_string(pads[i]) +
                " is not smaller than the kernel's extent " + std::to_string(extent) +
                ", so a window would hold padding only");
    }
    return Status();
}

Status checkGlobalLpPool(const NodeCheck& c)
{
    return checkNorm(c);
}

Status checkGemm(const NodeCheck& c)
{
    if (Status s = c.intInRange("transA", 0, 1); !s)
        return s;
    if (Status s = c.intInRange("transB", 0, 1); !s)
        return s;
    const double big = std::numeric_limits<float>::max();
    if (Status s = c.floatInRange("alpha", -big, big, false); !s)
        return s;
    return c.floatInRange("beta", -big, big, false);
}

Status checkFlatten(const NodeCheck& c)
{
    // Flatten's axis may equal the rank: everything goes into the first dimension.
    const int rank = c.inputRank(0);
    int64_t axis = 1;
    if (Status s = c.intAttr("axis", 1, &axis); !s)
        return s;
    const int64_t r = rank >= 0 ? rank : kMaxModelRank;
    if (axis < -r || axis > r)
        return c.fail("axis = " + std::to_string(axis) + ": must be " + rangeText(-r, r) +
            (rank >= 0 ? " for an input of rank " + std::to_string(rank) : std::string()));
    return Status();
}

Status checkInputAxis(const NodeCheck& c)
{
    // Softmax and its kind default to axis 1 before opset 13 and -1 from it; any default is in
    // range, only a given axis is checked.
    return checkAxis(c, "axis", c.inputRank(0));
}

Status checkConcat(const NodeCheck& c)
{
    if (!c.attribute("axis"))
        return c.fail("has no axis");
    return checkAxis(c, "axis", c.anyInputRank());
}

Status checkGatherND(const NodeCheck& c)
{
    // ONNX 1.12's shape inference indexes with batch_dims unchecked.
    const int rank = std::min(c.inputRank(0), c.inputRank(1));
    const int64_t hi = (c.inputRank(0) >= 0 && c.inputRank(1) >= 0 ? rank : kMaxModelRank) - 1;
    return c.intInRange("batch_dims", 0, std::max<int64_t>(0, hi));
}

Status checkLayerNormalization(const NodeCheck& c)
{
    // ONNX 1.12's shape inference indexes the input's dims with the axis unchecked.
    if (Status s = checkAxis(c, "axis", c.inputRank(0)); !s)
        return s;
    return c.floatInRange("epsilon", 0, std::numeric_limits<float>::max(), false);
}

Status checkNormalization(const NodeCheck& c)
{
    const double big = std::numeric_limits<float>::max();
    if (Status s = c.floatInRange("epsilon", 0, big, false); !s)
        return s;
    if (Status s = c.floatInRange("momentum", -big, big, false); !s)
        return s;
    return c.intInRange("training_mode", 0, 1);
}

Status checkLRN(const NodeCheck& c)
{
    if (!c.attribute("size"))
        return c.fail("has no size");
    if (Status s = c.intInRange("size", 1, kMaxModelDimension); !s)
        return s;
    const double big = std::numeric_limits<float>::max();
    for (const char* name : {"alpha", "beta", "bias"})
        if (Status s = c.floatInRange(name, -big, big, false); !s)
            return s;
    return Status();
}

Status checkTranspose(const NodeCheck& c)
{
    std::vector<int64_t> perm;
    bool present = false;
    if (Status s = c.intsAttr("perm", &perm, &present); !s || !present)
        return s;
    const int rank = c.inputRank(0);
    if (rank >= 0 && static_cast<int>(perm.size()) != rank)
        return c.fail("perm " + listText(perm) + " has " + std::to_string(perm.size()) +
            " values for an input of rank " + std::to_string(rank));
    std::vector<bool> seen(perm.size(), false);
    for (int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(p)])
            return c.fail("perm " + listText(perm) + " is not a permutation of 0 to " +
                std::to_string(static_cast<int64_t>(perm.size()) - 1));
        seen[static_cast<size_t>(p)] = true;
    }
    return Status();
}

Status checkSplit(const NodeCheck& c)
{
    const int rank = c.inputRank(0);
    if (Status s = checkAxis(c, "axis", rank); !s)
        return s;
    std::vector<int64_t> sizes;
    bool present = false;
    if (c.opset() >= 13)
        present = c.constantInts(1, &sizes);
    else if (Status s = c.intsAttr("split", &sizes, &present); !s)
        return s;
    if (!present)
        return Status();
    const std::string name = c.opset() >= 13 ? "split (input 1)" : "split";
    if (Status s = c.checkList(name, sizes, 0, kMaxModelDimension, c.node().output_size(),
            "one per output (" + std::to_string(c.node().output_size()) + ")");
        !s)
        return s;
    int64_t axis = 0;
    (void)c.intAttr("axis", 0, &axis);
    const int64_t dim = c.inputDim(0, static_cast<int>(axis < 0 ? axis + rank : axis));
    int64_t sum = 0;
    for (int64_t v : sizes)
        sum += v;
    if (dim >= 0 && sum != dim)
        return c.fail(name + " " + listText(sizes) + " adds up to " + std::to_string(sum) +
            ", the axis has " + std::to_string(dim));
    return Status();
}

Status checkSlice(const NodeCheck& c)
{
    std::vector<int64_t> starts, ends, axes, steps;
    bool haveStarts = false, haveEnds = false, haveAxes = false, haveSteps = false;
    if (c.opset() >= 10) {
        haveStarts = c.constantInts(1, &starts);
        haveEnds = c.constantInts(2, &ends);
        haveAxes = c.constantInts(3, &axes);
        haveSteps = c.constantInts(4, &steps);
    } else {
        for (auto [name, list, have] : {std::make_tuple("starts", &starts, &haveStarts),
                 std::make_tuple("ends", &ends, &haveEnds),
                 std::make_tuple("axes", &axes, &haveAxes)})
            if (Status s = c.intsAttr(name, list, have); !s)
                return s;
    }
    if (haveStarts && haveEnds && starts.size() != ends.size())
        return c.fail(
            "starts " + listText(starts) + " and ends " + listText(ends) + " differ in length");
    const size_t n = haveStarts ? starts.size() : ends.size();
    if (haveAxes && (haveStarts || haveEnds) && axes.size() != n)
        return c.fail("axes " + listText(axes) + " has " + std::to_string(axes.size()) +
            " values for " + std::to_string(n) + " starts");
    if (haveSteps && (haveStarts || haveEnds) && steps.size() != n)
        return c.fail("steps " + listText(steps) + " has " + std::to_string(steps.size()) +
            " values for " + std::to_string(n) + " starts");
    for (int64_t step : steps)
        if (step == 0)
            return c.fail("steps (input 4) " + listText(steps) + ": a step cannot be 0");
    if (haveAxes)
        return checkAxesList(c, "axes", axes, c.inputRank(0));
    return Status();
}

Status checkReshape(const NodeCheck& c)
{
    if (Status s = c.intInRange("allowzero", 0, 1); !s)
        return s;
    std::vector<int64_t> shape;
    bool present = false;
    std::string name = "shape (input 1)";
    if (c.opset() >= 5)
        present = c.constantInts(1, &shape);
    else if (Status s = c.intsAttr("shape", &shape, &present); !s)
        return s;
    else
        name = "shape";
    if (!present)
        return Status();
    if (Status s = c.checkList(name, shape, -1, kMaxModelDimension, -1, ""); !s)
        return s;
    if (std::count(shape.begin(), shape.end(), -1) > 1)
        return c.fail(name + " " + listText(shape) + " has more than one -1");
    if (static_cast<int64_t>(shape.size()) > kMaxModelRank)
        return c.fail(name + " " + listText(shape) + " has rank " + std::to_string(shape.size()) +
            ", more than " + std::to_string(kMaxModelRank));
    return Status();
}

// Resize and Upsample scales, from the attribute (Upsample before opset 9) or an input.
Status checkScales(const NodeCheck& c, const std::string& name, const std::vector<float>& scales)
{
    const int rank = c.inputRank(0);
    if (rank >= 0 && !scales.empty() && static_cast<int>(scales.size()) != rank)
        return c.fail(name + " has " + std::to_string(scales.size()) +
            " values for an input of rank " + std::to_string(rank));
    for (float s : scales)
        if (!std::isfinite(s) || s <= 0 || s > kMaxResizeScale)
            return c.fail(name + ": scale " + floatText(s) +
                " must be a finite number above 0 "
                "and at most " +
                floatText(kMaxResizeScale));
    return Status();
}

Status checkResize(const NodeCheck& c)
{
    const bool upsample = c.node().op_type() == "Upsample";
    if (Status s = c.oneOf("mode",
            upsample ? std::vector<std::string> {"nearest", "linear", "bilinear"}
                     : std::vector<std::string> {"nearest", "linear", "cubic"});
        !s)
        return s;
    std::vector<float> scales;
    if (upsample && c.opset() < 9) {
        const auto* a = c.attribute("scales");
        if (a && a->type() != onnx::AttributeProto::FLOATS)
            return c.fail("attribute scales must be a list of floats");
        if (a)
            scales.assign(a->floats().begin(), a->floats().end());
        return checkScales(c, "scales", scales);
    }
    const int scalesInput = upsample || c.opset() < 11 ? 1 : 2;
    if (c.constantFloats(scalesInput, &scales))
        if (Status s = checkScales(c, "scales (input " + std::to_string(scalesInput) + ")", scales);
            !s)
            return s;
    std::vector<int64_t> sizes;
    if (!upsample && c.opset() >= 11 && c.constantInts(3, &sizes))
        return c.checkList("sizes (input 3)", sizes, 1, kMaxModelDimension,
            c.inputRank(0) >= 0 && !sizes.empty() ? c.inputRank(0) : -1, "one per input dimension");
    return Status();
}

Status checkPad(const NodeCheck& c)
{
    if (Status s = c.oneOf("mode", {"constant", "reflect", "edge"}); !s)
        return s;
    std::vector<int64_t> pads;
    bool present = false;
    std::string name = "pads (input 1)";
    if (c.opset() >= 11) {
        present = c.constantInts(1, &pads);
    } else {
        name = c.opset() < 2 ? "paddings" : "pads";
        if (Status s = c.intsAttr(name, &pads, &present); !s)
            return s;
    }
    if (!present)
        return Status();
    // Negative pads crop, as the operator allows.
    const int rank = c.inputRank(0);
    return c.checkList(name, pads, -kMaxModelDimension, kMaxModelDimension,
        rank >= 0 ? 2 * rank : -1, "a begin and an end per input dimension");
}

Status checkBlocks(const NodeCheck& c)
{
    if (!c.attribute("blocksize"))
        return c.fail("has no blocksize");
    if (Status s = c.intInRange("blocksize", 1, kMaxModelDimension); !s)
        return s;
    if (Status s = c.oneOf("mode", {"DCR", "CRD"}); !s)
        return s;
    int64_t block = 1;
    (void)c.intAttr("blocksize", 1, &block);
    const int64_t channels = c.inputDim(0, 1);
    if (c.node().op_type() == "DepthToSpace" && channels > 0 && channels % (block * block) != 0)
        return c.fail("blocksize = " + std::to_string(block) + ": its square does not divide the " +
            std::to_string(channels) + " input channels");
    return Status();
}

// Constant shapes that make an operator allocate (ConstantOfShape, Expand, Tile): each entry
// within the dimension limit.
Status checkShapeInput(const NodeCheck& c, int input, const std::string& name)
{
    std::vector<int64_t> values;
    if (!c.constantInts(input, &values))
        return Status();
    if (Status s = c.checkList(name, values, 0, kMaxModelDimension, -1, ""); !s)
        return s;
    int64_t count = 0;
    std::string why;
    if (!boundedProduct(values, kMaxTensorElements, &count, &why))
        return c.fail(name + " " + listText(values) + ": " + why);
    return Status();
}

Status checkConstantOfShape(const NodeCheck& c)
{
    return checkShapeInput(c, 0, "shape (input 0)");
}

Status checkExpand(const NodeCheck& c)
{
    return checkShapeInput(c, 1, "shape (input 1)");
}

Status checkTile(const NodeCheck& c)
{
    return checkShapeInput(c, 1, "repeats (input 1)");
}

Status checkRange(const NodeCheck& c)
{
    // A step of 0 never reaches the limit; a tiny one asks for an absurd number of elements.
    std::vector<float> start, limit, delta;
    if (!c.constantFloats(0, &start) || !c.constantFloats(1, &limit) ||
        !c.constantFloats(2, &delta)) {
        std::vector<int64_t> s, l, d;
        if (!c.constantInts(0, &s) || !c.constantInts(1, &l) || !c.constantInts(2, &d) ||
            s.size() != 1 || l.size() != 1 || d.size() != 1)
            return Status();
        start = {static_cast<float>(s[0])};
        limit = {static_cast<float>(l[0])};
        delta = {static_cast<float>(d[0])};
    }
    if (start.size() != 1 || limit.size() != 1 || delta.size() != 1)
        return c.fail("start, limit and delta must be scalars");
    if (!(delta[0] != 0) || !std::isfinite(delta[0]))
        return c.fail("delta = " + floatText(delta[0]) + ": must be finite and not 0");
    const double count = std::ceil((static_cast<double>(limit[0]) - start[0]) / delta[0]);
    if (!(count <= static_cast<double>(kMaxTensorElements)))
        return c.fail("from " + floatText(start[0]) + " to " + floatText(limit[0]) + " by " +
            floatText(delta[0]) + " gives more than " + std::to_string(kMaxTensorElements) +
            " elements");
    return Status();
}

Status checkTopK(const NodeCheck& c)
{
    if (Status s = checkAxis(c, "axis", c.inputRank(0)); !s)
        return s;
    std::vector<int64_t> k;
    if (c.opset() >= 10 && c.constantInts(1, &k))
        return c.checkList("K (input 1)", k, 0, kMaxModelDimension, 1, "K is one value");
    if (c.opset() < 10)
        return c.intInRange("k", 0, kMaxModelDimension);
    return Status();
}

Status checkDropout(const NodeCheck& c)
{
    if (c.opset() < 12)
        return c.floatInRange("ratio", 0, 1, false);
    std::vector<float> ratio;
    if (c.constantFloats(1, &ratio))
        for (float r : ratio)
            if (!(r >= 0 && r < 1))
                return c.fail("ratio (input 1) = " + floatText(r) + ": must be from 0 to below 1");
    return Status();
}

Status checkCelu(const NodeCheck& c)
{
    // Celu divides by alpha.
    float alpha = 1;
    bool present = false;
    if (Status s = c.floatAttr("alpha", &alpha, &present); !s)
        return s;
    if (present && (!std::isfinite(alpha) || alpha == 0))
        return c.fail("alpha = " + floatText(alpha) + ": must be finite and not 0");
    return Status();
}

Status checkFiniteFloats(const NodeCheck& c)
{
    // Activation parameters: NaN or infinity make every output NaN.
    for (const auto& a : c.node().attribute())
        if (a.type() == onnx::AttributeProto::FLOAT && !std::isfinite(a.f()))
            return c.fail(a.name() + " = " + floatText(a.f()) + ": must be a finite number");
    return Status();
}

Status checkCast(const NodeCheck& c)
{
    // Cast-1 names the type as a string; later opsets as a TensorProto data type.
    const auto* a = c.attribute("to");
    if (!a || a->type() != onnx::AttributeProto::INT)
        return Status();
    const int64_t to = a->i();
    if (to <= onnx::TensorProto_DataType_UNDEFINED || to > std::numeric_limits<int>::max() ||
        !onnx::TensorProto_DataType_IsValid(static_cast<int>(to)))
        return c.fail("to = " + std::to_string(to) + " is not an ONNX data type");
    return Status();
}

Status checkRoiPool(const NodeCheck& c)
{
    const double big = std::numeric_limits<float>::max();
    if (Status s = c.floatInRange("spatial_scale", 0, big, true); !s)
        return s;
    if (c.node().op_type() == "MaxRoiPool") {
        if (!c.attribute("pooled_shape"))
            return c.fail("has no pooled_shape");
        return c.eachInRange("pooled_shape", 1, kMaxModelDimension, 2, "height and width");
    }
    if (Status s = c.intInRange("output_height", 1, kMaxModelDimension); !s)
        return s;
    if (Status s = c.intInRange("output_width", 1, kMaxModelDimension); !s)
        return s;
    return c.intInRange("sampling_ratio", 0, kMaxModelDimension);
}

Status checkLpNormalization(const NodeCheck& c)
{
    if (Status s = c.intInRange("p", 1, 2); !s)
        return s;
    return checkAxis(c, "axis", c.inputRank(0));
}

Status checkOneHot(const NodeCheck& c)
{
    std::vector<int64_t> depth;
    if (c.constantInts(1, &depth))
        if (Status s = c.checkList("depth (input 1)", depth, 1, kMaxModelDimension, 1, "one"); !s)
            return s;
    // The axis indexes the output, one rank above the indices.
    return checkAxis(c, "axis", c.inputRank(0) >= 0 ? c.inputRank(0) + 1 : -1);
}

// If, Loop and Scan without the subgraphs they run (ONNX's shape inference of Scan reads its body
// unchecked). The subgraphs themselves are checked like the main graph.
Status checkControlFlow(const NodeCheck& c)
{
    const std::string& op = c.node().op_type();
    const std::vector<const char*> needed = op == "If"
        ? std::vector<const char*> {"then_branch", "else_branch"}
        : std::vector<const char*> {"body"};
    for (const char* name : needed) {
        const auto* a = c.attribute(name);
        if (!a || a->type() != onnx::AttributeProto::GRAPH)
            return c.fail(std::string("has no ") + name + " graph");
    }
    if (op == "Scan")
        return c.intInRange("num_scan_inputs", 1, kMaxModelDimension);
    return Status();
}

using Checker = Status (*)(const NodeCheck&);

const std::unordered_map<std::string, Checker>& checkers()
{
    static const std::unordered_map<std::string, Checker> table = {
        {"Conv", checkConvolution},
        {"ConvTranspose", checkConvolution},
        {"ConvInteger", checkConvolution},
        {"QLinearConv", checkConvolution},
        {"MaxPool", checkPool},
        {"AveragePool", checkPool},
        {"LpPool", checkPool},
        {"MaxUnpool", checkPool},
        {"GlobalLpPool", checkGlobalLpPool},
        {"Gemm", checkGemm},
        {"Flatten", checkFlatten},
        {"Concat", checkConcat},
        {"Gather", checkInputAxis},
        {"GatherElements", checkInputAxis},
        {"ScatterElements", checkInputAxis},
        {"Scatter", checkInputAxis},
        {"Softmax", checkInputAxis},
        {"LogSoftmax", checkInputAxis},
        {"Hardmax", checkInputAxis},
        {"ArgMax", checkInputAxis},
        {"ArgMin", checkInputAxis},
        {"Compress", checkInputAxis},
        {"GatherND", checkGatherND},
        {"LayerNormalization", checkLayerNormalization},
        {"BatchNormalization", checkNormalization},
        {"InstanceNormalization", checkNormalization},
        {"LRN", checkLRN},
        {"Transpose", checkTranspose},
        {"Split", checkSplit},
        {"Squeeze", checkSqueeze},
        {"Unsqueeze", checkUnsqueeze},
        {"ReduceSum", checkReduce},
        {"ReduceMean", checkReduce},
        {"ReduceMax", checkReduce},
        {"ReduceMin", checkReduce},
        {"ReduceProd", checkReduce},
        {"ReduceL1", checkReduce},
        {"ReduceL2", checkReduce},
        {"ReduceLogSum", checkReduce},
        {"ReduceLogSumExp", checkReduce},
        {"ReduceSumSquare", checkReduce},
        {"Slice", checkSlice},
        {"Reshape", checkReshape},
        {"Resize", checkResize},
        {"Upsample", checkResize},
        {"Pad", checkPad},
        {"DepthToSpace", checkBlocks},
        {"SpaceToDepth", checkBlocks},
        {"ConstantOfShape", checkConstantOfShape},
        {"Expand", checkExpand},
        {"Tile", checkTile},
        {"Range", checkRange},
        {"TopK", checkTopK},
        {"Dropout", checkDropout},
        {"Celu", checkCelu},
        {"Elu", checkFiniteFloats},
        {"LeakyRelu", checkFiniteFloats},
        {"Selu", checkFiniteFloats},
        {"HardSigmoid", checkFiniteFloats},
        {"ThresholdedRelu", checkFiniteFloats},
        {"Cast", checkCast},
        {"MaxRoiPool", checkRoiPool},
        {"RoiAlign", checkRoiPool},
        {"LpNormalization", checkLpNormalization},
        {"OneHot", checkOneHot},
        {"If", checkControlFlow},
        {"Loop", checkControlFlow},
        {"Scan", checkControlFlow},
    };
    return table;
}

// --- tensors and declared values -----------------------------------------------------------------

// The repeated field a tensor of `type` keeps its values in, and how many values per element.
struct TypedField {
    const char* name = nullptr;
    int size = 0; // of the field in `tensor`
    int perElement = 1;
};

TypedField typedFieldOf(const onnx::TensorProto& t)
{
    using T = onnx::TensorProto;
    switch (t.data_type()) {
    case T::FLOAT: return {"float_data", t.float_data_size(), 1};
    case T::COMPLEX64: return {"float_data", t.float_data_size(), 2};
    case T::DOUBLE: return {"double_data", t.double_data_size(), 1};
    case T::COMPLEX128: return {"double_data", t.double_data_size(), 2};
    case T::INT64: return {"int64_data", t.int64_data_size(), 1};
    case T::UINT32:
    case T::UINT64: return {"uint64_data", t.uint64_data_size(), 1};
    case T::STRING: return {"string_data", t.string_data_size(), 1};
    case T::INT32:
    case T::INT16:
    case T::INT8:
    case T::UINT16:
    case T::UINT8:
    case T::BOOL:
    case T::FLOAT16:
    case T::BFLOAT16: return {"int32_data", t.int32_data_size(), 1};
    default: return {};
    }
}

Status checkTensor(const onnx::TensorProto& t, const std::string& what)
{
    auto count = checkedElementCount(t, what);
    if (!count)
        return count.status();
    if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
        return Status::invalid(what + " keeps its data in an external file that was not read");
    const TypedField field = typedFieldOf(t);
    if (!field.name)
        return Status::invalid(what + " has data type " + std::to_string(t.data_type()) +
            ", which this build's ONNX library does not know");
    const int sizes[] = {t.float_data_size(), t.double_data_size(), t.int64_data_size(),
        t.uint64_data_size(), t.string_data_size(), t.int32_data_size()};
    int fieldsUsed = 0;
    for (int size : sizes)
        fieldsUsed += size > 0;
    if (fieldsUsed > (field.size > 0 ? 1 : 0) || (t.has_raw_data() && field.size > 0))
        return Status::invalid(what + " holds data in more than one field, or not in " +
            field.name + (t.data_type() == onnx::TensorProto::STRING ? "" : " or raw_data") +
            " where its type keeps it");
    if (t.has_raw_data()) {
        const size_t item = onnxElementSize(t.data_type());
        if (item == 0)
            return Status::invalid(what + ": a tensor of strings cannot keep raw_data");
        const uint64_t expected = static_cast<uint64_t>(count.value()) * item;
        if (t.raw_data().size() != expected)
            return Status::invalid(what + " declares " + std::to_string(count.value()) +
                " elements (" + std::to_string(expected) + " bytes), its raw_data holds " +
                std::to_string(t.raw_data().size()) + " bytes");
        return Status();
    }
    const int64_t expected = count.value() * field.perElement;
    if (field.size != expected)
        return Status::invalid(what + " declares " + std::to_string(count.value()) +
            " elements, its " + field.name + " holds " + std::to_string(field.size) + " values" +
            (field.perElement > 1 ? " (" + std::to_string(field.perElement) + " per element)"
                                  : std::string()));
    return Status();
}

Status checkSparseTensor(const onnx::SparseTensorProto& t, const std::string& what)
{
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    int64_t count = 0;
    std::string why;
    if (static_cast<int>(dims.size()) > kMaxModelRank ||
        !boundedProduct(dims, kMaxTensorElements, &count, &why) ||
        std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; }))
        return Status::invalid(what + " (sparse): dims " + listText(dims) + ": " +
            (why.empty() ? "out of range" : why));
    if (Status s = checkTensor(t.values(), what + " (sparse values)"); !s)
        return s;
    return checkTensor(t.indices(), what + " (sparse indices)");
}

// A declared shape: each dimension within the limit, and the element count (unknown dimensions as
// 1) within `maxElements`. `what` is called only to name the value in an error.
Status checkValueInfo(
    const onnx::ValueInfoProto& v, const std::function<std::string()>& what, int64_t maxElements)
{
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
        return Status();
    const auto& shape = v.type().tensor_type().shape();
    if (shape.dim_size() > kMaxModelRank)
        return Status::invalid(what() + " has rank " + std::to_string(shape.dim_size()) +
            ", more than the " + std::to_string(kMaxModelRank) + " jetagent accepts");
    // The common case without allocating: every dimension in range, the product too.
    int64_t n = 1;
    bool fits = true;
    for (const auto& d : shape.dim()) {
        const int64_t size = d.has_dim_value() ? d.dim_value() : 1;
        if (size < 0 || size > kMaxModelDimension || (size > 0 && n > maxElements / size)) {
            fits = false;
            break;
        }
        n *= std::max<int64_t>(size, 1);
    }
    if (fits)
        return Status();
    std::vector<int64_t> dims;
    for (const auto& d : shape.dim()) {
        if (d.has_dim_value() && d.dim_value() < 0)
            return Status::invalid(what() + " declares dimension " + std::to_string(dims.size()) +
                " as " + std::to_string(d.dim_value()) + "; sizes cannot be negative");
        dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    }
    int64_t count = 0;
    std::string why;
    boundedProduct(dims, maxElements, &count, &why);
    return Status::invalid(what() + " " + listText(dims) + ": " + why +
        " (a shape this large is a damaged or hostile file)");
}

// --- graphs --------------------------------------------------------------------------------------

class Validator {
public:
    Validator(const onnx::ModelProto& model, const std::string& path)
        : where_("model file '" + path + "'"), opset_(onnxutil::defaultOpset(model))
    {
    }

    Status graph(const onnx::GraphProto& g, const Scope* outer, int depth)
    {
        if (depth > kMaxSubgraphDepth)
            return Status::invalid(where_ + ": subgraph '" + g.name() + "' is nested " +
                std::to_string(depth) + " deep, more than the " +
                std::to_string(kMaxSubgraphDepth) + " jetagent accepts");
        Scope scope;
        scope.outer = outer;
        if (Status s = declared(g, depth, &scope); !s)
            return s;
        for (int i = 0; i < g.node_size(); ++i)
            if (Status s = node(g.node(i), i, scope, depth); !s)
                return s;
        return Status();
    }

private:
    // Initializers, inputs, outputs and value_info: sizes and shapes, into `scope`.
    Status declared(const onnx::GraphProto& g, int depth, Scope* scope)
    {
        const std::string in = depth == 0 ? "" : " of subgraph '" + g.name() + "'";
        scope->values.reserve(static_cast<size_t>(g.initializer_size()) +
            static_cast<size_t>(g.value_info_size()) + static_cast<size_t>(g.output_size()) +
            static_cast<size_t>(g.input_size()));
        for (const auto& t : g.initializer()) {
            if (Status s = checkTensor(t, where_ + ": initializer '" + t.name() + "'" + in); !s)
                return s;
            scope->values[t.name()].tensor = &t;
        }
        for (const auto& t : g.sparse_initializer())
            if (Status s = checkSparseTensor(t, where_ + ": sparse initializer" + in); !s)
                return s;
        auto declare = [&](const onnx::ValueInfoProto& v, const char* kind, int64_t limit) {
            Declared& d = scope->values[v.name()];
            if (!d.tensor)
                d.value = &v;
            return checkValueInfo(
                v, [&] { return where_ + ": " + kind + " '" + v.name() + "'" + in; }, limit);
        };
        for (const auto& v : g.value_info())
            if (Status s = declare(v, "value", kMaxTensorElements); !s)
                return s;
        for (const auto& v : g.output())
            if (Status s = declare(v, "graph output", kMaxTensorElements); !s)
                return s;
        // Real inputs last: their declared shape wins over value_info, as it does in ONNX.
        for (const auto& v : g.input()) {
            const auto it = scope->values.find(v.name());
            const bool real = it == scope->values.end() || !it->second.tensor;
            if (Status s = declare(
                    v, "graph input", real && depth == 0 ? kMaxInputElements : kMaxTensorElements);
                !s)
                return s;
        }
        // Constant nodes are constants as much as initializers are (exports feed Reshape,
        // Slice and Pad from them); checked here already, since a node before them in a graph
        // out of order may read them.
        for (int i = 0; i < g.node_size(); ++i) {
            const auto& n = g.node(i);
            if (n.op_type() != "Constant" || n.output_size() != 1 || !isDefaultDomain(n))
                continue;
            for (const auto& a : n.attribute())
                if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) {
                    if (Status s = checkTensor(a.t(),
                            where_ + ": " + onnxutil::nodeLabel(n, i) + ": attribute value" + in);
                        !s)
                        return s;
                    scope->values[n.output(0)] = Declared {&a.t(), nullptr};
                }
        }
        return Status();
    }

    static bool isDefaultDomain(const onnx::NodeProto& n)
    {
        return n.domain().empty() || n.domain() == "ai.onnx";
    }

    Status node(const onnx::NodeProto& n, int index, const Scope& scope, int depth)
    {
        const std::string label = where_ + ": " + onnxutil::nodeLabel(n, index);
        for (const auto& a : n.attribute()) {
            const std::string what = label + ": attribute " + a.name();
            if (a.has_t())
                if (Status s = checkTensor(a.t(), what); !s)
                    return s;
            for (const auto& t : a.tensors())
                if (Status s = checkTensor(t, what); !s)
                    return s;
            if (a.has_sparse_tensor())
                if (Status s = checkSparseTensor(a.sparse_tensor(), what); !s)
                    return s;
            for (const auto& t : a.sparse_tensors())
                if (Status s = checkSparseTensor(t, what); !s)
                    return s;
            if (a.has_g())
                if (Status s = graph(a.g(), &scope, depth + 1); !s)
                    return s;
            for (const auto& g : a.graphs())
                if (Status s = graph(g, &scope, depth + 1); !s)
                    return s;
        }
        if (!isDefaultDomain(n))
            return Status(); // custom operators are refused by name after this
        const auto it = checkers().find(n.op_type());
        if (it == checkers().end())
            return Status();
        return it->second(NodeCheck(n, index, opset_, scope, where_));
    }

    const std::string where_;
    const int64_t opset_;
};

// --- guards inside ONNX's shape inference -------------------------------------------------------

// ONNX 1.12's shape inference of these operators indexes an input's dimensions by an attribute or
// rank it never checks (a crash, not an error: LayerNormalization with its Mean output and an axis
// out of range, STFT with a signal that is not 3-D), and does so where only inference may know the
// input's rank: a value the file declares no shape for. The checks run inside inference, at the
// moment the rank is known, and fail it with an error naming the operator and the attribute.
int inferredRank(onnx::InferenceContext& ctx, size_t input)
{
    if (input >= ctx.getNumInputs())
        return -1;
    const onnx::TypeProto* type = ctx.getInputType(input);
    if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape())
        return -1;
    return type->tensor_type().shape().dim_size();
}

int64_t inferenceInt(onnx::InferenceContext& ctx, const char* name, int64_t fallback)
{
    const onnx::AttributeProto* a = ctx.getAttribute(name);
    return a && a->type() == onnx::AttributeProto::INT ? a->i() : fallback;
}

void guardLayerNormalization(onnx::InferenceContext& ctx)
{
    const int rank = inferredRank(ctx, 0);
    const int64_t axis = inferenceInt(ctx, "axis", -1);
    if (rank >= 0 && (axis < -rank || axis >= rank))
        fail_shape_inference("LayerNormalization: axis = ", axis, ": must be ", -rank, " to ",
            rank - 1, " for an input of rank ", rank);
}

void guardSTFT(onnx::InferenceContext& ctx)
{
    const int rank = inferredRank(ctx, 0);
    if (rank >= 0 && rank != 3)
        fail_shape_inference(
            "STFT: the signal has rank ", rank, "; it must have rank 3 ([batch, length, 1 or 2])");
}

using Guard = void (*)(onnx::InferenceContext&);

const std::unordered_map<std::string, Guard>& inferenceGuards()
{
    static const std::unordered_map<std::string, Guard> table = {
        {"LayerNormalization", guardLayerNormalization},
        {"STFT", guardSTFT},
    };
    return table;
}

// ONNX's schema registry, except that the schemas of guarded operators are copies whose inference
// runs the guard first. The copies are made once per schema and kept for the program's life, as
// the registry's own are.
class GuardedSchemaRegistry final : public onnx::ISchemaRegistry {
public:
    const onnx::OpSchema* GetSchema(const std::string& key, const int maxInclusiveVersion,
        const std::string& domain) const override
    {
        const onnx::OpSchema* schema =
            onnx::OpSchemaRegistry::Schema(key, maxInclusiveVersion, domain);
        if (!schema || !(domain.empty() || domain == "ai.onnx"))
            return schema;
        const auto guard = inferenceGuards().find(key);
        if (guard == inferenceGuards().end())
            return schema;
        const std::lock_guard<std::mutex> lock(mutex_);
        auto it = guarded_.find(schema);
        if (it == guarded_.end()) {
            auto copy = std::make_unique<onnx::OpSchema>(*schema);
            onnx::InferenceFunction original = schema->GetTypeAndShapeInferenceFunction();
            Guard check = guard->second;
            copy->TypeAndShapeInferenceFunction([original, check](onnx::InferenceContext& ctx) {
                check(ctx);
                if (original)
                    original(ctx);
            });
            it = guarded_.emplace(schema, std::move(copy)).first;
        }
        return it->second.get();
    }

private:
    mutable std::mutex mutex_;
    mutable std::map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> guarded_;
};

} // namespace

namespace onnxutil {

const onnx::ISchemaRegistry* checkedSchemaRegistry()
{
    static const GuardedSchemaRegistry registry;
    return &registry;
}

} // namespace onnxutil

size_t onnxElementSize(int32_t dataType)
{
    using T = onnx::TensorProto;
    switch (dataType) {
    case T::DOUBLE:
    case T::INT64:
    case T::UINT64:
    case T::COMPLEX64: return 8;
    case T::FLOAT:
    case T::INT32:
    case T::UINT32: return 4;
    case T::FLOAT16:
    case T::BFLOAT16:
    case T::INT16:
    case T::UINT16: return 2;
    case T::INT8:
    case T::UINT8:
    case T::BOOL: return 1;
    case T::COMPLEX128: return 16;
    default: return 0;
    }
}

Expected<int64_t> checkedElementCount(const onnx::TensorProto& tensor, const std::string& what)
{
    if (tensor.dims_size() > kMaxModelRank)
        return Status::invalid(what + " has rank " + std::to_string(tensor.dims_size()) +
            ", more than the " + std::to_string(kMaxModelRank) + " jetagent accepts");
    const std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
    for (size_t i = 0; i < dims.size(); ++i)
        if (dims[i] < 0)
            return Status::invalid(what + " has dims " + listText(dims) + ": dimension " +
                std::to_string(i) + " is negative");
    int64_t count = 0;
    std::string why;
    if (!boundedProduct(dims, kMaxTensorElements, &count, &why))
        return Status::invalid(what + " has dims " + listText(dims) + ": " + why);
    return std::find(dims.begin(), dims.end(), 0) != dims.end() ? 0 : count;
}

Status validateModel(const onnx::ModelProto& model, const std::string& path)
{
    Validator validator(model, path);
    return validator.graph(model.graph(), nullptr, 0);
}

} // namespace jetagent
