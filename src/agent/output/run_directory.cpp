// A run's directory and its config copy.
#include "output/run_directory.h"

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "run/run_context.h"

namespace fs = std::filesystem;

namespace jetagent {

Expected<std::string> createRunDirectory(const std::string& base, const std::string& prefix)
{
    std::error_code ec;
    fs::create_directories(base, ec);
    if (ec)
        return Status::invalid("cannot create log directory '" + base + "': " + ec.message());
    const std::string stem = (fs::path(base) / (prefix + utcStamp())).string();
    for (int attempt = 1; attempt < 1000; ++attempt) {
        const std::string dir = attempt == 1 ? stem : stem + "-" + std::to_string(attempt);
        // mkdir, not create_directories: an existing directory must fail, so no earlier run is
        // overwritten.
        if (::mkdir(dir.c_str(), 0755) == 0)
            return dir;
        if (errno != EEXIST)
            return Status::invalid(
                "cannot create run directory '" + dir + "': " + errnoText(errno));
    }
    return Status::invalid("cannot find a free run directory name under '" + base + "'");
}

// Copies the config file into the run directory, beside the logs it explains. The copy is the
// record of the run, so it keeps what the user wrote, secrets included (a source URI's password,
// http.token); it is therefore created readable by its owner only (0600, never wider even for a
// moment), whatever the umask or the original's mode.
void keepConfigCopy(const AgentConfig& config, const std::string& runDirectory)
{
    if (config.path.empty())
        return;
    const std::string copy = (fs::path(runDirectory) / "config.yaml").string();
    std::string problem;
    std::ifstream in(config.path, std::ios::binary);
    const int fd = in ? ::open(copy.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
    if (!in)
        problem = "cannot read it";
    else if (fd < 0)
        problem = errnoText(errno);
    else {
        const std::string text(
            (std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        size_t done = 0;
        while (done < text.size()) {
            const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                problem = errnoText(errno);
                break;
            }
            done += static_cast<size_t>(n);
        }
        if (::close(fd) != 0 && problem.empty())
            problem = errnoText(errno);
        if (in.bad() && problem.empty())
            problem = "reading it failed";
    }
    if (!problem.empty())
        logger("agent")->warn("could not copy {} into {}: {}", config.path, runDirectory, problem);
}

} // namespace jetagent
