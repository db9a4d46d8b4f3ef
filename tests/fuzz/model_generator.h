// Small valid ONNX models made from fuzz bytes: an image input and a chain of layers whose kinds,
// sizes and attributes the bytes choose, each kept inside what the operator allows, so that the
// model passes the checks and reaches the preparation passes and the CPU engine's graph compiler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"

namespace jetagent::fuzz {

struct GeneratedModel {
    std::string bytes; // the serialised ModelProto
    std::vector<int64_t> inputDims; // N x C x H x W with N = 1 (the model's may be symbolic)
    int layers = 0;
};

// Reads the model's choices from `in` (a short or empty input gives a small model too). At most
// `maxLayers` layers; tensors stay at most 16 channels of 16 x 16, so a run costs microseconds.
GeneratedModel generateModel(ByteReader& in, int maxLayers);

} // namespace jetagent::fuzz
