// jetagent_fixture_tree: writes one of the test suite's fixture board trees into a directory, so
// that `jetagent power --sysfs-root DIR` and `power.sysfs_root` can be tried without the board.
// Injected read faults (EAGAIN, ENODATA) exist only inside the test process; here those files read
// as plain files.
#include <cstdio>
#include <string>
#include <sys/stat.h>

#include "sysfs_fixture.h"

int main(int argc, char** argv)
{
    using namespace jetagent::test;
    std::vector<BoardSpec> boards = allBoards();
    boards.push_back(thorJp7());
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s BOARD DIR   (DIR must not exist)\nboards:", argv[0]);
        for (const auto& b : boards)
            std::fprintf(stderr, " %s", b.id.c_str());
        std::fprintf(stderr, "\n");
        return 2;
    }
    const std::string id = argv[1];
    const std::string dir = argv[2];
    for (const auto& b : boards) {
        if (b.id != id)
            continue;
        if (::mkdir(dir.c_str(), 0755) != 0) {
            std::perror(dir.c_str());
            return 2;
        }
        const jetagent::Status s = lowerBoard(b).write(dir);
        if (!s) {
            std::fprintf(stderr, "%s\n", s.message().c_str());
            return 1;
        }
        std::printf("%s: %s\n", dir.c_str(), b.description.c_str());
        return 0;
    }
    std::fprintf(stderr, "unknown board '%s'\n", id.c_str());
    return 2;
}
