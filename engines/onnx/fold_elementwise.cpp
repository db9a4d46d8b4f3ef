// Constant folding element by element: Cast, Add/Sub/Mul/Div, Mod, Pow, Equal, Not, Where,
// Floor/Ceil/Sqrt/Neg.
#include "fold_evaluators.h"

#include <cmath>
#include <limits>
#include <utility>

namespace jetagent {
namespace fold {

namespace {

template <typename T>
const std::vector<T>& elementsOf(const Value& v);
template <>
const std::vector<int64_t>& elementsOf(const Value& v)
{
    return v.ints;
}
template <>
const std::vector<float>& elementsOf(const Value& v)
{
    return v.floats;
}

// Two's-complement wrap to the element type, as ONNX runtimes compute INT32 arithmetic.
int64_t wrapTo(int32_t type, int64_t v)
{
    if (type != kInt32)
        return v;
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

// A float converted to an integer type by truncation, as C and ONNX runtimes cast; false when the
// result is undefined (NaN, infinity, out of range).
bool truncateFloat(float f, int32_t type, int64_t* out)
{
    const double limit = type == kInt32 ? 2147483648.0 : 9223372036854775808.0;
    if (!std::isfinite(f) || static_cast<double>(f) >= limit || static_cast<double>(f) < -limit)
        return false;
    *out = static_cast<int64_t>(f);
    return true;
}

// Applies `op` to the broadcast elements of `a` and `b`; false when `op` refuses an element.
template <typename T, typename R, typename Op>
bool combine(const Value& a, const Value& b, const std::vector<int64_t>& dims, int64_t count, Op op,
    std::vector<R>* out)
{
    const auto ia = sourceIndices(dims, broadcastStrides(a.dims, dims.size()), 0, count);
    const auto ib = sourceIndices(dims, broadcastStrides(b.dims, dims.size()), 0, count);
    const auto& va = elementsOf<T>(a);
    const auto& vb = elementsOf<T>(b);
    out->resize(static_cast<size_t>(count));
    for (size_t n = 0; n < out->size(); ++n)
        if (!op(va[static_cast<size_t>(ia[n])], vb[static_cast<size_t>(ib[n])], &(*out)[n]))
            return false;
    return true;
}

// The broadcast shape of a binary node's two inputs, which must share an element type.
Status binaryShape(const NodeContext& c, std::vector<int64_t>* dims, int64_t* count, bool* fits)
{
    const auto [a, b] = c.inputsUpTo<2>();
    if (!a || !b)
        return c.invalid("needs two inputs");
    if (a->type != b->type)
        return c.invalid(
            std::string("combines ") + typeName(a->type) + " with " + typeName(b->type));
    if (!broadcastDims(a->dims, b->dims, dims))
        return c.invalid("cannot broadcast " + dimsText(a->dims) + " with " + dimsText(b->dims));
    *fits = foldableCount(*dims, count);
    return Status();
}

// A binary node of numbers, both inputs of one type: `floatOp` or `intOp` on each broadcast pair
// of elements, the result of the inputs' type; left unfolded where an op refuses an element.
template <typename FloatOp, typename IntOp>
Status evaluateBinary(const NodeContext& c, std::optional<Value>* out, FloatOp floatOp, IntOp intOp)
{
    std::vector<int64_t> dims;
    int64_t count = 0;
    bool fits = false;
    if (Status s = binaryShape(c, &dims, &count, &fits); !s)
        return s;
    const Value& a = *c.input(0);
    const Value& b = *c.input(1);
    if (!fits || a.type == kBool)
        return Status();
    Value result;
    result.type = a.type;
    const bool computed = a.isFloat() ? combine<float>(a, b, dims, count, floatOp, &result.floats)
                                      : combine<int64_t>(a, b, dims, count, intOp, &result.ints);
    if (!computed)
        return Status();
    result.dims = std::move(dims);
    *out = std::move(result);
    return Status();
}

} // namespace

Status evaluateCast(const NodeContext& c, std::optional<Value>* out)
{
    const Value* in = c.input(0);
    if (!in)
        return c.invalid("has no input");
    const auto* to = onnxutil::findAttribute(c.node, "to");
    if (!to || to->type() != onnx::AttributeProto::INT)
        return c.invalid("has no 'to' attribute");
    if (to->i() != kInt64 && to->i() != kInt32 && to->i() != kBool && to->i() != kFloat)
        return Status();
    const auto type = static_cast<int32_t>(to->i());
    Value result;
    result.type = type;
    result.dims = in->dims;
    if (type == kFloat) {
        if (in->isFloat())
            result.floats = in->floats;
        else
            for (int64_t v : in->ints)
                result.floats.push_back(static_cast<float>(v));
    } else if (in->isFloat()) {
        for (float f : in->floats) {
            int64_t v = 0;
            if (type == kBool)
                v = f != 0.0f;
            else if (!truncateFloat(f, type, &v))
                return Status();
            result.ints.push_back(v);
        }
    } else {
        for (int64_t v : in->ints)
            result.ints.push_back(type == kBool ? v != 0 : wrapTo(type, v));
    }
    *out = std::move(result);
    return Status();
}

Status evaluateArithmetic(const NodeContext& c, std::optional<Value>* out)
{
    const std::string& op = c.node.op_type();
    const char kind = op == "Add" ? '+' : op == "Sub" ? '-' : op == "Mul" ? '*' : '/';
    const int32_t type = c.input(0) ? c.input(0)->type : kInt64;
    return evaluateBinary(
        c, out,
        [kind](float x, float y, float* r) {
            *r = kind == '+' ? x + y : kind == '-' ? x - y : kind == '*' ? x * y : x / y;
            return true;
        },
        [kind, type](int64_t x, int64_t y, int64_t* r) {
            // Unsigned arithmetic wraps where signed overflow would be undefined.
            const auto ux = static_cast<uint64_t>(x);
            const auto uy = static_cast<uint64_t>(y);
            if (kind == '+')
                *r = static_cast<int64_t>(ux + uy);
            else if (kind == '-')
                *r = static_cast<int64_t>(ux - uy);
            else if (kind == '*')
                *r = static_cast<int64_t>(ux * uy);
            else if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1))
                return false; // undefined: the runtime's problem, not the folder's
            else
                *r = x / y; // truncates toward zero, as ONNX specifies
            if (kind == '/' && wrapTo(type, *r) != *r)
                return false;
            *r = wrapTo(type, *r);
            return true;
        });
}

Status evaluateMod(const NodeContext& c, std::optional<Value>* out)
{
    const bool cMod = onnxutil::intAttribute(c.node, "fmod", 0) != 0;
    if (c.input(0) && c.input(0)->isFloat() && !cMod)
        return c.invalid("a float Mod needs fmod=1");
    return evaluateBinary(
        c, out,
        [](float x, float y, float* r) {
            *r = std::fmod(x, y);
            return true;
        },
        [cMod](int64_t x, int64_t y, int64_t* r) {
            if (y == 0)
                return false; // undefined: left to the runtime
            if (y == -1) {
                *r = 0; // also where x % y would overflow (the smallest integer)
                return true;
            }
            *r = x % y; // the sign of the dividend, as C's fmod
            // fmod=0: the sign of the divisor, as Python's and numpy's %.
            if (!cMod && *r != 0 && ((*r < 0) != (y < 0)))
                *r += y;
            return true;
        });
}

Status evaluatePow(const NodeContext& c, std::optional<Value>* out)
{
    const auto [base, exponent] = c.inputsUpTo<2>();
    if (!base || !exponent)
        return c.invalid("needs X and Y");
    if (base->type == kBool || exponent->type == kBool)
        return c.invalid("has a bool operand");
    std::vector<int64_t> dims;
    if (!broadcastDims(base->dims, exponent->dims, &dims))
        return c.invalid(
            "cannot broadcast " + dimsText(base->dims) + " with " + dimsText(exponent->dims));
    int64_t count = 0;
    // An integer power of an integer can overflow and a float power of one has no integer
    // result: only float bases fold (the exponent float or integer), as the exporters emit them.
    if (!foldableCount(dims, &count) || !base->isFloat())
        return Status();
    const auto ib = sourceIndices(dims, broadcastStrides(base->dims, dims.size()), 0, count);
    const auto ie = sourceIndices(dims, broadcastStrides(exponent->dims, dims.size()), 0, count);
    Value result;
    result.type = kFloat;
    result.dims = std::move(dims);
    result.floats.resize(static_cast<size_t>(count));
    for (size_t n = 0; n < result.floats.size(); ++n) {
        const auto e = static_cast<size_t>(ie[n]);
        const double y = exponent->isFloat() ? static_cast<double>(exponent->floats[e])
                                             : static_cast<double>(exponent->ints[e]);
        result.floats[n] = static_cast<float>(
            std::pow(static_cast<double>(base->floats[static_cast<size_t>(ib[n])]), y));
    }
    *out = std::move(result);
    return Status();
}

Status evaluateNot(const NodeContext& c, std::optional<Value>* out)
{
    const Value* in = c.input(0);
    if (!in)
        return c.invalid("has no input");
    if (in->type != kBool)
        return c.invalid(std::string("input is ") + typeName(in->type) + ", not bool");
    Value result = *in;
    for (int64_t& v : result.ints)
        v = v == 0;
    *out = std::move(result);
    return Status();
}

Status evaluateEqual(const NodeContext& c, std::optional<Value>* out)
{
    std::vector<int64_t> dims;
    int64_t count = 0;
    bool fits = false;
    if (Status s = binaryShape(c, &dims, &count, &fits); !s)
        return s;
    if (!fits)
        return Status();
    const Value& a = *c.input(0);
    const Value& b = *c.input(1);
    Value result;
    result.type = kBool;
    if (a.isFloat())
        combine<float>(
            a, b, dims, count,
            [](float x, float y, int64_t* r) {
                *r = x == y;
                return true;
            },
            &result.ints);
    else
        combine<int64_t>(
            a, b, dims, count,
            [](int64_t x, int64_t y, int64_t* r) {
                *r = x == y;
                return true;
            },
            &result.ints);
    result.dims = std::move(dims);
    *out = std::move(result);
    return Status();
}

Status evaluateWhere(const NodeContext& c, std::optional<Value>* out)
{
    const auto [condition, x, y] = c.inputsUpTo<3>();
    if (!condition || !x || !y)
        return c.invalid("needs condition, X and Y");
    if (condition->type != kBool)
        return c.invalid(std::string("condition is ") + typeName(condition->type) + ", not bool");
    if (x->type != y->type)
        return c.invalid(
            std::string("selects between ") + typeName(x->type) + " and " + typeName(y->type));
    std::vector<int64_t> dims;
    if (!broadcastDims(condition->dims, x->dims, &dims) || !broadcastDims(dims, y->dims, &dims))
        return c.invalid("cannot broadcast " + dimsText(condition->dims) + ", " +
            dimsText(x->dims) + " and " + dimsText(y->dims));
    int64_t count = 0;
    if (!foldableCount(dims, &count))
        return Status();
    const auto ic = sourceIndices(dims, broadcastStrides(condition->dims, dims.size()), 0, count);
    const auto ix = sourceIndices(dims, broadcastStrides(x->dims, dims.size()), 0, count);
    const auto iy = sourceIndices(dims, broadcastStrides(y->dims, dims.size()), 0, count);
    std::vector<int64_t> source(static_cast<size_t>(count));
    // Index into X, or into Y offset past X's elements, so that one take() reads both.
    Value both = *x;
    const int64_t xSize = x->count();
    both.floats.insert(both.floats.end(), y->floats.begin(), y->floats.end());
    both.ints.insert(both.ints.end(), y->ints.begin(), y->ints.end());
    for (size_t n = 0; n < source.size(); ++n)
        source[n] = condition->ints[static_cast<size_t>(ic[n])] ? ix[n] : xSize + iy[n];
    *out = take(both, std::move(dims), source);
    return Status();
}

Status evaluateUnary(const NodeContext& c, std::optional<Value>* out)
{
    const Value* in = c.input(0);
    if (!in)
        return c.invalid("has no input");
    const std::string& op = c.node.op_type();
    Value result = *in;
    if (op == "Neg" && in->isInteger()) {
        for (int64_t& v : result.ints)
            v = wrapTo(in->type, static_cast<int64_t>(0 - static_cast<uint64_t>(v)));
    } else if (!in->isFloat()) {
        return Status();
    } else {
        for (float& v : result.floats)
            v = op == "Floor"  ? std::floor(v)
                : op == "Ceil" ? std::ceil(v)
                : op == "Sqrt" ? std::sqrt(v)
                               : -v;
    }
    *out = std::move(result);
    return Status();
}

} // namespace fold
} // namespace jetagent
