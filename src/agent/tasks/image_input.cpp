// A model's image input against the preprocessing crop.
#include "tasks/image_input.h"

#include <algorithm>

#include "config/config.h"

namespace jetagent {

Status resolveImageInput(const AgentConfig& agent, const std::string& key, int64_t modelHeight,
    int64_t modelWidth, const std::string& shape, PreprocessConfig& pre)
{
    if (pre.cropWidth == 0) {
        if (modelHeight <= 0 || modelWidth <= 0)
            return Status::invalid(agent.where(key + ".preprocess.crop") +
                ": the model's input size is not fixed (" + shape +
                "); set crop to the size it expects");
        pre.cropWidth = static_cast<int>(modelWidth);
        pre.cropHeight = static_cast<int>(modelHeight);
    } else if ((modelHeight > 0 && modelHeight != pre.cropHeight) ||
        (modelWidth > 0 && modelWidth != pre.cropWidth)) {
        return Status::invalid(agent.where(key + ".preprocess.crop") + ": crop " +
            std::to_string(pre.cropWidth) + "x" + std::to_string(pre.cropHeight) +
            " does not match the model's input " + shape + " (crop is width x height)");
    }
    const int largest = std::max(pre.cropWidth, pre.cropHeight);
    if (pre.resizeSize == 0)
        pre.resizeSize = largest * 256 / 224;
    else if (pre.resize == ResizeMode::ShorterSide && pre.resizeSize < largest)
        return Status::invalid(agent.where(key + ".preprocess.resize_size") + ": " +
            std::to_string(pre.resizeSize) + " is smaller than the crop (" +
            std::to_string(largest) + "); the crop must fit");
    return Status();
}

} // namespace jetagent
