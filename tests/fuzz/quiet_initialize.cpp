// The LLVMFuzzerInitialize of every harness whose set-up is quiet logs alone (sysfs_fuzz.cpp has
// its own): compiled into each of those programs by jetagent_fuzz_target (CMakeLists.txt).
#include "fuzz_support.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/)
{
    jetagent::fuzz::quietLogging();
    return 0;
}
