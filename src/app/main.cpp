// jetagent's entry point; everything else lives in the libraries.
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <unistd.h>

#include "cli.h"
#include "jetagent/base/clock.h"

namespace {

// Before anything opens a descriptor: 0, 1 and 2 open, to /dev/null where the parent closed them
// (`jetagent run ... >&- 2>&-`, as some supervisors start daemons). Otherwise the first pipe or
// log file the run opens would take the number, and every later write to stdout or stderr would
// land in it: log text in the stop signals' pipe, status lines in a frame log.
void openStandardDescriptors()
{
    for (int fd = 0; fd <= 2; ++fd) {
        if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        const int opened = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (opened < 0)
            ::_exit(71); // EX_OSERR: not even /dev/null; nothing can be said anywhere
        if (opened != fd) { // a lower number was free too: it is filled on its own turn
            ::dup2(opened, fd);
            ::close(opened);
        }
    }
}

} // namespace

int main(int argc, char** argv)
{
    // The end of the loading: the process's start to here is the dynamic loader's and the
    // libraries' constructors' (the run summary's context.startup.loading_ms).
    const int64_t mainStartNs = jetagent::monotonicNs();
    openStandardDescriptors();
    // A closed console is no reason to stop measuring (`jetagent run ... | head`): writes to it
    // fail with EPIPE, which the writers handle, and the run goes on to its logs and summary.
    std::signal(SIGPIPE, SIG_IGN);
    // Nor is a file-size limit (`ulimit -f`, systemd's LimitFSIZE=): a write past it fails with
    // EFBIG, which the logs handle as a full disk does (lines dropped and counted, no torn line),
    // instead of SIGXFSZ ending the process without its summary.
    std::signal(SIGXFSZ, SIG_IGN);
    return jetagent::runCli(argc, argv, mainStartNs);
}
