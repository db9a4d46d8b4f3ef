// Helpers shared by the tests: scratch directories, file contents, running the jetagent binary,
// a logger's output, loopback ports. Compiled once, as the library jetagent_test_support.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "test_paths.h"

namespace jetagent::test {

// How much slower a sanitizer build runs: wall-clock bounds of end-to-end tests are widened by it
// (never a check skipped); 1 in ordinary builds.
// GCC defines __SANITIZE_ADDRESS__ under -fsanitize=address; clang 14 tells it by __has_feature.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JETAGENT_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(JETAGENT_TEST_ASAN)
constexpr double kSanitizerSlowdown = 3.0;
constexpr bool kAddressSanitizer = true;
#else
constexpr double kSanitizerSlowdown = 1.0;
constexpr bool kAddressSanitizer = false;
#endif

// A fresh empty directory under the system temp dir, removed when the object goes.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string operator/(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

std::string readFile(const std::string& path);
void writeFile(const std::string& path, const std::string& content);
std::vector<std::string> readLines(const std::string& path);

// Paths inside the source tree (models/, firmware-config/).
std::string sourcePath(const std::string& relative);

// One task of the demo shapes classifier (models/shapes_cnn.onnx, its labels and the preprocessing
// it was trained with) as an item of a config's tasks list, then `extra`: more keys of the task,
// each on a line of its own indented by four spaces ("    engine: {threads: 1}\n").
std::string shapesTaskYaml(const std::string& name = "shapes", const std::string& extra = "");

struct CommandResult {
    int exitCode = -1;
    std::string out;
    std::string err;
};

// The jetagent binary as a command: the binary itself, behind the emulator in cross builds.
std::vector<std::string> jetagentCommand();

// Runs the jetagent binary with `args` (shell-quoted here) in `workdir`, capturing its output.
CommandResult runJetagent(const std::vector<std::string>& args, const std::string& workdir);
// The same behind `wrapper`, a shell command prefix that ends by running the command given after
// it (e.g. "prlimit --as=800000000 --").
CommandResult runJetagentUnder(
    const std::string& wrapper, const std::vector<std::string>& args, const std::string& workdir);
// True when the binary runs under an emulator (cross builds under qemu-user).
bool emulated();

// Starts the jetagent binary in the background (stdout/stderr to files in `workdir`); returns its
// pid.
int spawnJetagent(const std::vector<std::string>& args, const std::string& workdir);
struct SpawnOptions {
    // Set in the child's environment; the value "$PID" stands for the child's own pid.
    std::vector<std::pair<std::string, std::string>> environment;
    int stdinFd = -1; // becomes the child's standard input
    std::vector<int> closeInChild; // e.g. the other end of that pipe
};
int spawnJetagent(
    const std::vector<std::string>& args, const std::string& workdir, const SpawnOptions& options);
// Waits up to `timeoutMs` for `pid` to exit; returns its exit code, or -1 on timeout (the process
// is killed).
int waitExit(int pid, int timeoutMs);

// The single run directory created under `logDir` (fails the test if there is not exactly one).
std::string onlyRunDirectory(const std::string& logDir);

// What one named logger ("engine", "power", ...) says at warn and above while the object lives.
class LogCapture {
public:
    explicit LogCapture(const std::string& loggerName);
    ~LogCapture();
    LogCapture(const LogCapture&) = delete;
    LogCapture& operator=(const LogCapture&) = delete;

    // Lines that contain every one of `parts`.
    int count(const std::vector<std::string>& parts) const;

private:
    static constexpr size_t kLines = 64;
    std::shared_ptr<spdlog::logger> log_;
    spdlog::level::level_enum level_;
    std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

// A TCP port on 127.0.0.1 that was free a moment ago (nothing listens on it); 0 when none could be
// had.
int unusedLoopbackPort();

} // namespace jetagent::test
