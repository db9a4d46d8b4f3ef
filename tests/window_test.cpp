// The live demo's window on a real X server (Xvfb): frames are shown while the run goes on, and the
// run ends cleanly with the window. Slow-labelled: it starts an X server.
#include <cstdlib>

#include <sys/wait.h>

#include <gtest/gtest.h>

#include "run_checks.h"
#include "test_support.h"

namespace jetagent {
namespace {

TEST(LiveWindow, ShowsFramesOnAnXServer)
{
    if (std::system("command -v xvfb-run >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "xvfb-run is missing (Debian package xvfb; tools/dev.sh test installs it)";
    test::TempDir dir;
    std::string command = "cd '" + dir.path() + "' && xvfb-run -a";
    for (const auto& a : test::jetagentCommand())
        command += " '" + a + "'";
    command += " run -c '" + test::sourcePath("firmware-config/demo.yaml") +
        "' --frames 60 --display -q --log-dir logs >out.txt 2>err.txt </dev/null";
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << test::readFile(dir / "err.txt") << test::readFile(dir / "out.txt");

    const auto files = test::checkRun(test::onlyRunDirectory(dir / "logs"), "shapes");
    const auto& d = files.summary["display"];
    EXPECT_TRUE(d["window"].get<bool>());
    // Paced at 30 fps for two seconds, the window is served at about 60 Hz: it shows most frames.
    EXPECT_GT(d["frames_shown"].get<int>(), 20) << d.dump();
    EXPECT_TRUE(d["output"].is_null());
}

} // namespace
} // namespace jetagent
