// sysfs and procfs access under a configurable root directory.
#include "jetagent/hal/sysfs.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string_view>
#include <utility>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace jetagent {

namespace {

bool isBlank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0';
}

// Reads a file from offset 0 into `buffer`; returns 0 or errno.
int preadAll(int fd, char* buffer, size_t capacity, size_t& length)
{
    length = 0;
    while (length + 1 < capacity) {
        const ssize_t n =
            ::pread(fd, buffer + length, capacity - 1 - length, static_cast<off_t>(length));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            buffer[length] = '\0';
            return errno;
        }
        if (n == 0)
            break;
        length += static_cast<size_t>(n);
    }
    buffer[length] = '\0';
    return 0;
}

// The fault seam's table: sorted views of the caller's map, searched without allocating.
struct FaultTable {
    std::shared_ptr<const SysfsReadFaults> source;
    std::vector<std::pair<std::string_view, int>> sorted;
};

std::atomic<const FaultTable*> g_faultTable {nullptr};

int lookupFault(const FaultTable& table, std::string_view path)
{
    const auto it = std::lower_bound(table.sorted.begin(), table.sorted.end(), path,
        [](const std::pair<std::string_view, int>& entry, std::string_view key) {
            return entry.first < key;
        });
    return it != table.sorted.end() && it->first == path ? it->second : 0;
}

bool failsAtOpen(int error)
{
    return error == EACCES || error == EPERM || error == ENOENT;
}

// The injected errno for `path` (0 = none). `atOpen` asks for open-time errors, else read-time
// ones. Only tests ever get past the first load.
int injectedFault(const char* path, bool atOpen)
{
    // Acquire: a load-acquire costs what a plain load does on x86 and about that on Arm, and
    // ThreadSanitizer understands it (it does not understand a separate fence).
    const FaultTable* table = g_faultTable.load(std::memory_order_acquire);
    if (table == nullptr)
        return 0;
    int error = lookupFault(*table, path);
    if (error == 0) {
        char resolved[PATH_MAX];
        if (::realpath(path, resolved) != nullptr)
            error = lookupFault(*table, resolved);
    }
    return error != 0 && failsAtOpen(error) == atOpen ? error : 0;
}

} // namespace

void setSysfsReadFaults(std::shared_ptr<const SysfsReadFaults> faults)
{
    static std::mutex mutex;
    // See the header: never freed, not even by the static destructors at exit, which may run
    // before those of fixtures that still publish their faults (seen in a fuzz target's exit).
    static auto* const kept = new std::vector<std::unique_ptr<FaultTable>>();
    const std::lock_guard<std::mutex> lock(mutex);
    if (!faults || faults->empty()) {
        g_faultTable.store(nullptr, std::memory_order_release);
        return;
    }
    auto table = std::make_unique<FaultTable>();
    table->source = std::move(faults);
    for (const auto& [path, error] : *table->source)
        table->sorted.emplace_back(path, error);
    // std::map orders by std::string, which compares as string_view does, so `sorted` is sorted.
    g_faultTable.store(table.get(), std::memory_order_release);
    kept->push_back(std::move(table));
}

int parseSysfsInt(const char* text, size_t length, int64_t& value)
{
    size_t i = 0;
    while (i < length && isBlank(text[i]))
        ++i;
    if (i == length)
        return ENODATA;
    bool negative = false;
    if (text[i] == '-' || text[i] == '+') {
        negative = text[i] == '-';
        ++i;
    }
    if (i == length || text[i] < '0' || text[i] > '9')
        return EINVAL;
    int64_t v = 0;
    for (; i < length && text[i] >= '0' && text[i] <= '9'; ++i) {
        const int digit = text[i] - '0';
        if (v > (INT64_MAX - digit) / 10)
            return ERANGE;
        v = v * 10 + digit;
    }
    // A number may be followed by blanks and a unit ("1234 ma"), not glued to other text.
    if (i < length && !isBlank(text[i]))
        return EINVAL;
    value = negative ? -v : v;
    return 0;
}

SysfsAttribute::~SysfsAttribute()
{
    if (fd_ >= 0)
        ::close(fd_);
}

SysfsAttribute::SysfsAttribute(SysfsAttribute&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_))
{
    other.fd_ = -1;
}

SysfsAttribute& SysfsAttribute::operator=(SysfsAttribute&& other) noexcept
{
    if (this != &other) {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = other.fd_;
        path_ = std::move(other.path_);
        other.fd_ = -1;
    }
    return *this;
}

int SysfsAttribute::open(const std::string& path)
{
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
    if (&path != &path_)
        path_ = path;
    if (const int injected = injectedFault(path_.c_str(), true))
        return injected;
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    fd_ = fd;
    return 0;
}

int SysfsAttribute::reopen()
{
    return open(path_);
}

int SysfsAttribute::readText(char* buffer, size_t capacity, size_t& length) const
{
    length = 0;
    if (capacity > 0)
        buffer[0] = '\0';
    if (fd_ < 0)
        return EBADF;
    if (capacity < 2)
        return EINVAL;
    if (const int injected = injectedFault(path_.c_str(), false))
        return injected;
    return preadAll(fd_, buffer, capacity, length);
}

int SysfsAttribute::readInt(int64_t& value) const
{
    char buffer[64];
    size_t length = 0;
    if (int error = readText(buffer, sizeof buffer, length))
        return error;
    return parseSysfsInt(buffer, length, value);
}

SysfsRoot::SysfsRoot(std::string root) : root_(std::move(root))
{
    while (!root_.empty() && root_.back() == '/')
        root_.pop_back();
}

std::string SysfsRoot::path(const std::string& absolute) const
{
    if (absolute.empty() || absolute.front() != '/')
        return root_ + "/" + absolute;
    return root_ + absolute;
}

bool SysfsRoot::exists(const std::string& absolute) const
{
    struct stat st { };
    return ::stat(path(absolute).c_str(), &st) == 0;
}

bool SysfsRoot::isDirectory(const std::string& absolute) const
{
    struct stat st { };
    return ::stat(path(absolute).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> SysfsRoot::list(const std::string& absolute) const
{
    std::vector<std::string> names;
    DIR* dir = ::opendir(path(absolute).c_str());
    if (dir == nullptr)
        return names;
    // readdir on a DIR no other thread shares is safe; readdir_r is deprecated.
    while (const dirent* entry = ::readdir(dir)) { // NOLINT(concurrency-mt-unsafe)
        const std::string name = entry->d_name;
        if (name != "." && name != "..")
            names.push_back(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
}

Expected<std::string> SysfsRoot::readBytes(const std::string& absolute) const
{
    const std::string full = path(absolute);
    if (const int injected = injectedFault(full.c_str(), true))
        return Status::io("cannot open " + full + ": " + errnoText(injected));
    const int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return Status::io("cannot open " + full + ": " + errnoText(errno));
    if (const int injected = injectedFault(full.c_str(), false)) {
        ::close(fd);
        return Status::io("cannot read " + full + ": " + errnoText(injected));
    }
    std::string data;
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            const int error = errno;
            ::close(fd);
            return Status::io("cannot read " + full + ": " + errnoText(error));
        }
        if (n == 0)
            break;
        data.append(buffer, static_cast<size_t>(n));
        if (data.size() > (1u << 20))
            break; // attribute and procfs files are small; never read a huge file whole
    }
    ::close(fd);
    return data;
}

Expected<std::string> SysfsRoot::readText(const std::string& absolute) const
{
    auto bytes = readBytes(absolute);
    if (!bytes)
        return bytes;
    std::string text = std::move(bytes).value();
    while (!text.empty() && isBlank(text.back()))
        text.pop_back();
    return text;
}

std::optional<int64_t> SysfsRoot::readInt(const std::string& absolute) const
{
    SysfsAttribute attribute;
    if (attribute.open(path(absolute)) != 0)
        return std::nullopt;
    int64_t value = 0;
    if (attribute.readInt(value) != 0)
        return std::nullopt;
    return value;
}

std::string SysfsRoot::canonical(const std::string& absolute) const
{
    std::error_code ec;
    const std::filesystem::path resolved = std::filesystem::canonical(path(absolute), ec);
    if (ec)
        return "";
    std::string text = resolved.string();
    if (root_.empty())
        return text;
    std::error_code rootEc;
    const std::string rootResolved = std::filesystem::canonical(root_, rootEc).string();
    if (rootEc)
        return "";
    if (text == rootResolved)
        return "/";
    if (text.compare(0, rootResolved.size(), rootResolved) != 0 ||
        text.size() <= rootResolved.size() || text[rootResolved.size()] != '/')
        return "";
    return text.substr(rootResolved.size());
}

} // namespace jetagent
