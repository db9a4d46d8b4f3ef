// Test entry point: quiet library logging unless JETAGENT_TEST_LOG names a level, and an engine
// cache of the test run's own, so tests never read or fill the user's ~/.cache/jetagent.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

int main(int argc, char** argv)
{
    testing::InitGoogleTest(&argc, argv);
    const char* level = std::getenv("JETAGENT_TEST_LOG");
    spdlog::set_level(level ? spdlog::level::from_str(level) : spdlog::level::err);

    // Before any thread starts; inherited by the jetagent processes the tests spawn.
    std::string cache =
        (std::filesystem::temp_directory_path() / "jetagent-test-cache-XXXXXX").string();
    const bool scratch = ::mkdtemp(cache.data()) != nullptr;
    if (scratch) {
        ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
        ::unsetenv("CACHE_DIRECTORY");
    }
    const int result = RUN_ALL_TESTS();
    if (scratch) {
        std::error_code ec;
        std::filesystem::remove_all(cache, ec);
    }
    return result;
}
