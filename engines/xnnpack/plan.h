// The compiled form of a model for the xnnpack backend: values with their layout and place in one
// arena, and the steps that compute them (internal to engines/xnnpack/).
//
// A Plan is immutable and shared by every session of an engine: it holds the re-laid weights and
// every operator's parameters. A session instantiates each step once over its own arena (creating
// and setting up the XNNPACK operators there), so that a run only calls the steps in order and
// allocates nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pthreadpool.h>

#include "jetagent/base/status.h"

namespace jetagent {
namespace xnnplan {

// How a value's elements lie in memory. Tensors of rank 4 and 5 that convolutions and pools read
// are channels-last (NHWC, NDHWC), chosen once by the compiler; everything else is plain row-major
// in ONNX's axis order.
enum class Layout { Plain, ChannelsLast };

enum class DType { F32, QS8, F16 };

// Physical axis i holds logical (ONNX) axis order[i].
std::vector<int> physicalOrder(int rank, Layout layout);
std::vector<int64_t> physicalDims(const std::vector<int64_t>& dims, Layout layout);
int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end);

struct Value {
    std::string name;
    std::vector<int64_t> dims; // logical (ONNX) shape
    Layout layout = Layout::Plain;
    int root = -1; // the value whose memory this one reuses unchanged (a reshape); -1: its own
    int64_t offset = 0; // in floats from the arena's start (the memory plan)
    // How the value's elements are held (quantize.h lowers parts of a plan): F32; QS8, signed
    // 8-bit integers with real = scale * (q - zeroPoint); F16, IEEE half floats. Aliases follow
    // their root.
    DType type = DType::F32;
    float scale = 1;
    int32_t zeroPoint = 0;

    int64_t count() const { return product(dims, 0, dims.size()); }
    // What the value takes in the arena, in floats.
    int64_t floats() const
    {
        return type == DType::QS8 ? (count() + 3) / 4
            : type == DType::F16  ? (count() + 1) / 2
                                  : count();
    }
};

// What a step runs on in one session.
class StepExec {
public:
    virtual ~StepExec() = default;
    virtual Status run(pthreadpool_t pool) = 0;
};

struct Plan;

// What a step is in a pass that lowers a plan to int8 or fp16 (quantize.h): it stays in fp32;
// it computes its lowered output with a scale of its own (convolutions, additions); or it moves
// lowered values, which its inputs and outputs share one scale and zero point for.
enum class LowRole { Float, Compute, PassThrough };

// One node (or a fused group of nodes) of the model.
class StepDef {
public:
    virtual ~StepDef() = default;
    std::string node; // "Conv 'Conv_12'" (+ "+ Relu 'Relu_13'" when fused)
    std::string op; // the ONNX operator
    std::vector<int> inputs; // value ids
    int output = -1;
    std::vector<int> extraOutputs; // Split's further outputs
    // fp16 plans (halvePlan): the step runs on XNNPACK's fp16 kernels over F16 values.
    bool half = false;
    virtual const char* library() const = 0; // "xnnpack" or "reference"
    // Creates what runs this step over `arena` (XNNPACK operators are created and set up here).
    // `last`: the run's last step, after which the pool's workers sleep at once instead of
    // spinning for the next job (the agent's own threads need the cores between inferences).
    virtual Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const = 0;

    // The lowering passes (quantize.cpp), each step saying what it can do (step_lowering.cpp).
    // Its role in a pass to `type` (QS8 or F16), given whether any and whether all of its inputs
    // are held in that type already; Float where it has no such kernel.
    virtual LowRole lowRole(DType /*type*/, bool /*anyLow*/, bool /*allLow*/) const
    {
        return LowRole::Float;
    }
    // A Compute step's int8 kernel takes these scales (`in`: its inputs' int8 parameters, `out`:
    // its output's).
    virtual bool int8ScalesFit(const std::vector<Value>& /*in*/, const Value& /*out*/) const
    {
        return true;
    }
    // The int8 step doing this one's work, over `plan`'s values with their int8 parameters set;
    // nullptr from a step with no int8 form.
    virtual std::unique_ptr<StepDef> toInt8(const Plan& /*plan*/) const { return nullptr; }
    // Becomes its fp16 form in place (weights rounded to fp16).
    virtual void toHalf() { half = true; }
    // The weights the lowering passes re-make, in floats' worth of memory.
    virtual int64_t lowerableWeights() const { return 0; }
    // Reads value `to` wherever it read value `from`.
    virtual void replaceInput(int from, int to)
    {
        for (int& id : inputs)
            if (id == from)
                id = to;
    }
};

struct Plan {
    std::vector<Value> values;
    std::vector<std::unique_ptr<StepDef>> steps;
    std::vector<int> inputs; // value ids of the model's inputs, in the model's order
    std::vector<int> outputs; // and of its outputs
    int64_t arenaFloats = 0; // the memory plan's size (XNNPACK's read-ahead padding included)
    int64_t weightFloats = 0; // re-laid weights and constants the steps hold (int8 weights
                              // counted in floats' worth of bytes)
    int64_t macs = 0; // multiply-accumulates of the convolutions and matrix products, per run

    const Value& rootOf(int value) const
    {
        const Value* v = &values[static_cast<size_t>(value)];
        while (v->root >= 0)
            v = &values[static_cast<size_t>(v->root)];
        return *v;
    }
    float* address(float* arena, int value) const
    {
        return arena + values[static_cast<size_t>(value)].offset;
    }
};

// Assigns every value without a root an offset in one arena: values whose lifetimes (from the step
// that writes them to the last step that reads them, model inputs from the start, outputs to the
// end) overlap never share memory; the rest reuse it. Aliases take their root's offset.
void planMemory(Plan* plan);

} // namespace xnnplan
} // namespace jetagent
