// Helpers shared by the tests: scratch directories, file contents, running the jetagent binary.
#include "test_support.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <chrono>
#include <csignal>
#include <thread>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

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
    std::ifstream in(path);
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line))
        lines.push_back(line);
    return lines;
}

std::string sourcePath(const std::string& relative)
{
    return std::string(JETAGENT_SOURCE_DIR) + "/" + relative;
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

} // namespace jetagent::test
