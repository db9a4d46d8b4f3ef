// Test entry point: quiet library logging unless JETAGENT_TEST_LOG names a level.
#include <cstdlib>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

int main(int argc, char** argv)
{
    testing::InitGoogleTest(&argc, argv);
    const char* level = std::getenv("JETAGENT_TEST_LOG");
    spdlog::set_level(level ? spdlog::level::from_str(level) : spdlog::level::err);
    return RUN_ALL_TESTS();
}
