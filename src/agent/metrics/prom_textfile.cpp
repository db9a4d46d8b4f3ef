// Textfiles of finished work for node_exporter.
#include "metrics/prom_textfile.h"

#include <cctype>
#include <cerrno>

#include <sys/stat.h>
#include <unistd.h>

#include "jetagent/engines/cache_file.h"

namespace jetagent {

Status checkPromTextfileDir(const std::string& dir, const std::string& option)
{
    if (dir.empty())
        return Status::invalid(option +
            ": expected a directory (node_exporter's "
            "--collector.textfile.directory)");
    struct stat st { };
    if (::stat(dir.c_str(), &st) != 0)
        return Status::invalid(option + " " + dir + ": " + errnoText(errno) +
            "; name an existing directory (node_exporter's --collector.textfile.directory)");
    if (!S_ISDIR(st.st_mode))
        return Status::invalid(option + " " + dir + ": not a directory");
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        return Status::invalid(option + " " + dir + ": not writable by this user (" +
            errnoText(errno) + "); give it write access or name another directory");
    return Status();
}

std::string promTextfileName(const std::string& command, const std::string& qualifier)
{
    std::string name = "jetagent_" + command;
    if (!qualifier.empty()) {
        name += '_';
        for (char c : qualifier)
            name += std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' ? c : '_';
    }
    return name + ".prom";
}

void addLastRunTimestamp(MetricSet& set, double unixSeconds)
{
    set.add("jetagent_last_run_timestamp_seconds", MetricType::Gauge, "seconds",
        "Unix time the work this file describes finished.", {}, unixSeconds);
}

Status writePromTextfile(
    const std::string& dir, const std::string& name, std::vector<MetricFamily> families)
{
    std::string work = name;
    if (work.rfind("jetagent_", 0) == 0)
        work = work.substr(std::string("jetagent_").size());
    if (work.size() > 5 && work.compare(work.size() - 5, 5, ".prom") == 0)
        work.resize(work.size() - 5);
    for (MetricFamily& f : families)
        for (MetricSample& s : f.samples)
            s.labels.insert(s.labels.begin(), {"work", work});
    const std::string path = dir + (dir.back() == '/' ? "" : "/") + name;
    return writeFileAtomically(path, writeExposition(families, ExpositionFormat::Text004));
}

} // namespace jetagent
