// Helpers shared by the tests: scratch directories, file contents, running the jetagent binary.
#include "test_support.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <chrono>
#include <csignal>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "jetagent/base/log.h"
#include "jetagent/base/text.h"

namespace fs = std::filesystem;

namespace jetagent::test {

TempDir::TempDir()
{
    std::string pattern = (fs::temp_directory_path() / "jetagent-test-XXXXXX").string();
    char* made = mkdtemp(pattern.data());
    if (made == nullptr)
        throw std::runtime_error("mkdtemp failed");
    path_ = made;
}

TempDir::~TempDir()
{
    std::error_code ec;
    fs::remove_all(path_, ec);
}

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void writeFile(const std::string& path, const std::string& content)
{
    std::ofstream out(path, std::ios::binary);
    out << content;
}

std::vector<std::string> readLines(const std::string& path)
{
    return splitLines(readFile(path));
}

std::string sourcePath(const std::string& relative)
{
    return std::string(JETAGENT_SOURCE_DIR) + "/" + relative;
}

std::string shapesTaskYaml(const std::string& name, const std::string& extra)
{
    return "  - name: " + name + "\n    model: " + sourcePath("models/shapes_cnn.onnx") +
        "\n    labels: " + sourcePath("models/shapes_labels.txt") +
        "\n    preprocess: {resize: stretch, interpolation: area}\n" + extra;
}

namespace {

std::string quote(const std::string& s)
{
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

} // namespace

std::vector<std::string> jetagentCommand()
{
    std::vector<std::string> command = {JETAGENT_EMULATOR_ARGS};
    command.emplace_back(JETAGENT_BINARY);
    return command;
}

CommandResult runJetagent(const std::vector<std::string>& args, const std::string& workdir)
{
    return runJetagentUnder("", args, workdir);
}

bool emulated()
{
    return jetagentCommand().size() > 1;
}

CommandResult runJetagentUnder(
    const std::string& wrapper, const std::vector<std::string>& args, const std::string& workdir)
{
    TempDir capture;
    std::string command = "cd " + quote(workdir) + " && " + wrapper;
    for (const auto& a : jetagentCommand())
        command += " " + quote(a);
    for (const auto& a : args)
        command += " " + quote(a);
    command += " >" + quote(capture / "out") + " 2>" + quote(capture / "err") + " </dev/null";
    const int status = std::system(command.c_str());
    CommandResult r;
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = readFile(capture / "out");
    r.err = readFile(capture / "err");
    return r;
}

int spawnJetagent(const std::vector<std::string>& args, const std::string& workdir)
{
    return spawnJetagent(args, workdir, SpawnOptions());
}

int spawnJetagent(
    const std::vector<std::string>& args, const std::string& workdir, const SpawnOptions& options)
{
    std::vector<std::string> argv = jetagentCommand();
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string out = workdir + "/spawn.out", err = workdir + "/spawn.err";
    const pid_t pid = fork();
    if (pid == 0) {
        if (chdir(workdir.c_str()) != 0)
            _exit(127);
        for (const auto& [name, value] : options.environment)
            setenv(name.c_str(), value == "$PID" ? std::to_string(getpid()).c_str() : value.c_str(),
                1);
        const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        if (options.stdinFd >= 0)
            dup2(options.stdinFd, 0);
        for (int fd : options.closeInChild)
            close(fd);
        std::vector<char*> raw;
        raw.reserve(argv.size() + 1);
        for (auto& a : argv)
            raw.push_back(a.data());
        raw.push_back(nullptr);
        execvp(raw[0], raw.data());
        _exit(127);
    }
    return pid;
}

int waitExit(int pid, int timeoutMs)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return -1;
}

std::string onlyRunDirectory(const std::string& logDir)
{
    std::vector<std::string> dirs;
    for (const auto& e : fs::directory_iterator(logDir))
        if (e.is_directory())
            dirs.push_back(e.path().string());
    EXPECT_EQ(dirs.size(), 1u) << "run directories under " << logDir;
    return dirs.empty() ? std::string() : dirs.front();
}

LogCapture::LogCapture(const std::string& loggerName)
    : log_(logger(loggerName)), level_(log_->level())
{
    sink_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(kLines);
    log_->sinks().push_back(sink_);
    log_->set_level(spdlog::level::warn);
}

LogCapture::~LogCapture()
{
    log_->sinks().pop_back();
    log_->set_level(level_);
}

int LogCapture::count(const std::vector<std::string>& parts) const
{
    int n = 0;
    for (const std::string& line : sink_->last_formatted()) {
        bool all = true;
        for (const std::string& p : parts)
            all = all && line.find(p) != std::string::npos;
        n += all ? 1 : 0;
    }
    return n;
}

int unusedLoopbackPort()
{
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), length) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
    close(fd);
    return bound ? ntohs(address.sin_port) : 0;
}

} // namespace jetagent::test
