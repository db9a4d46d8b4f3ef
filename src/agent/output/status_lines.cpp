// Status lines for the console and for systemd.
#include "output/status_lines.h"

#include "jetagent/base/clock.h"
#include "jetagent/base/format.h"
#include "jetagent/hal/gstreamer_source.h"

namespace jetagent {

std::string statusLine(
    const std::string& name, const LiveView& v, const std::vector<std::string>& labels, double fps)
{
    if (!v.haveLast)
        return name + ": waiting for the first result";
    auto label = [&](int i) {
        return i >= 0 && static_cast<size_t>(i) < labels.size()
            ? labels[static_cast<size_t>(i)].c_str()
            : "?";
    };
    const FrameRecord& r = v.last;
    std::string text = formatText("%s: frame %llu -> %s %.3f", name.c_str(),
        static_cast<unsigned long long>(r.frameId), r.topK > 0 ? label(r.labels[0]) : "(failed)",
        r.topK > 0 ? static_cast<double>(r.scores[0]) : 0.0);
    if (r.truth >= 0)
        appendText(text, " (truth %s)", label(r.truth));
    appendText(text, " | e2e %.2f ms | %.1f fps | %llu frames", nsToMs(r.times.endToEndNs), fps,
        static_cast<unsigned long long>(v.frames));
    if (v.scored > 0)
        appendText(text, " | top-1 %.1f%%",
            100.0 * static_cast<double>(v.correct) / static_cast<double>(v.scored));
    return text;
}

// The one-line state systemd shows in `systemctl status`.
std::string serviceStatus(const AgentConfig& config, const Recorder& recorder,
    const std::vector<std::unique_ptr<Task>>& tasks, const std::vector<double>& fps)
{
    std::string text = config.sources.size() == 1
        ? withoutPasswords(config.source().uri)
        : std::to_string(config.sources.size()) + " streams";
    for (size_t i = 0; i < tasks.size(); ++i) {
        const LiveView view = recorder.live(i);
        if (view.haveLast)
            appendText(text, " | %s: %.1f fps, last %.2f ms, %llu frames", tasks[i]->name().c_str(),
                i < fps.size() ? fps[i] : 0.0, nsToMs(view.last.times.endToEndNs),
                static_cast<unsigned long long>(view.frames));
        else
            text += " | " + tasks[i]->name() + ": waiting for frames";
    }
    return text;
}

} // namespace jetagent
