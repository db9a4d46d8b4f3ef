// Fuzz target: `jetagent compare`'s engine specs (BACKEND[:DEVICE[:PRECISION]][,key=value...]),
// read over a task's engine settings of each backend, and the backend name resolved as compare
// resolves it. An accepted spec must give settings inside the documented ranges.
#include <cstdio>
#include <cstdlib>

#include "compare.h"
#include "fuzz_support.h"

namespace {

constexpr size_t kMaxSpecBytes = 512;

void check(bool condition, const std::string& spec, const char* what)
{
    if (!condition) {
        std::fprintf(stderr, "spec '%s' accepted with %s\n", spec.c_str(), what);
        std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace jetagent;
    if (size > kMaxSpecBytes)
        return -1;
    const std::string spec(reinterpret_cast<const char*>(data), size);
    for (const char* backend : {"auto", "xnnpack", "opencv", "tensorrt"}) {
        EngineOptions base;
        base.backend = backend;
        base.batch = 4;
        base.batchMin = 1;
        base.batchMax = 8;
        base.threads = 2;
        auto parsed = parseEngineSpec(spec, base);
        if (!parsed) {
            check(!parsed.status().message().empty(), spec, "an empty error");
            continue;
        }
        const EngineOptions& o = parsed.value();
        check(!o.backend.empty(), spec, "no backend");
        check(o.batch >= 1 && o.batch <= 256, spec, "a batch out of range");
        check(o.threads >= 0 && o.threads <= 256, spec, "threads out of range");
        check(o.profileMin() <= o.batch && o.batch <= o.profileMax(), spec,
            "a batch profile without its batch");
        check(o.workspaceMb >= 0, spec, "a negative workspace");
        check(!resolveBackend(o).empty(), spec, "no backend after resolving");
    }
    return 0;
}
