// `jetagent capture`: save a source's frames as image files, for datasets and for looking at them.
#pragma once

#include <cstdint>
#include <string>

#include "jetagent/base/status.h"
#include "jetagent/hal/frame_source.h"

namespace jetagent {

// Writes `frames` frames of `source` into `outDir` as PNG (or JPEG when `format` is "jpg"). Frames
// whose class the source knows go into a subdirectory per class (the layout image-directory sources
// read back). `outDir` must not exist yet or be empty, so no earlier capture is overwritten.
Status captureFrames(const SourceOptions& source, uint64_t frames, const std::string& outDir,
    const std::string& format);

} // namespace jetagent
