// The annotated recording as a user gets it: `jetagent run --output file://OUT.mp4` on the demo,
// decoded again, every frame's label checked against the frame it is drawn on.
//
// How a decoded frame is checked, with nothing drawn for the test's sake:
//  1. Which source frame it is. synthetic://shapes is deterministic (seed, index), so the test
//     regenerates candidate frames and takes the one whose lower half (below the overlay panel)
//     matches the decoded image; frames come out in order, so the search runs forward from the
//     previous match.
//  2. Which label it carries. The overlay's first line begins "shapes: <top-1 label> ". The test
//     draws that beginning with drawOverlay on the regenerated frame for each of the six class
//     names and compares the label's box with the decoded frame: the right name differs only by
//     the codec's noise, a wrong one by whole glyphs.
//  3. Whose result the label is. Every frame the task inferred has a line in the frame log: its
//     label must be that frame's top-1 (and, the model being exact on the demo, its true class).
//     A frame the task never inferred (a live queue dropped it) must carry the newest earlier
//     result and the note "^ result of frame N", found by template matching in the panel.
#include <chrono>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include "display/display.h"
#include "display/text_draw.h"
#include "gst_receiver.h"
#include "jetagent/hal/synthetic_shapes.h"
#include "test_image.h"
#include "test_support.h"

namespace jetagent {
namespace {

constexpr int kWidth = 320; // the demo's frame size and seed
constexpr int kHeight = 240;
constexpr uint64_t kSeed = 1;

// The demo config with `fps` for its rate and absolute model paths, written into `dir`.
std::string demoConfig(const test::TempDir& dir, int fps, const std::string& backend = "auto")
{
    std::string text = test::readFile(test::sourcePath("firmware-config/demo.yaml"));
    const auto replace = [&](const std::string& from, const std::string& to) {
        for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 1))
            text.replace(at, from.size(), to);
    };
    replace("../models/", test::sourcePath("models") + "/");
    replace("fps: 30 ", "fps: " + std::to_string(fps) + " ");
    replace("backend: auto", "backend: " + backend);
    // The network streams at a rate that keeps the reader's margins (the codec's noise on the
    // label under 12 levels); files use their own codec's quality.
    text += "\ndisplay:\n  bitrate_kbps: 3000\n";
    test::writeFile(dir / "demo.yaml", text);
    return dir / "demo.yaml";
}

std::vector<cv::Mat> decode(const std::string& path)
{
    std::vector<cv::Mat> frames;
    cv::VideoCapture capture(path, cv::CAP_FFMPEG);
    EXPECT_TRUE(capture.isOpened()) << path;
    cv::Mat frame;
    while (capture.read(frame))
        frames.push_back(frame.clone());
    return frames;
}

// frame id -> top-1 label, from the task's CSV log.
std::map<uint64_t, std::string> topLabels(const std::string& csv)
{
    std::map<uint64_t, std::string> labels;
    const auto lines = test::readLines(csv);
    for (size_t i = 1; i < lines.size(); ++i) {
        std::vector<std::string> f;
        std::stringstream in(lines[i]);
        for (std::string field; std::getline(in, field, ',');)
            f.push_back(field);
        labels[std::stoull(f.at(0))] = f.at(9);
    }
    return labels;
}

double meanAbsDiff(const cv::Mat& a, const cv::Mat& b)
{
    cv::Mat diff;
    cv::absdiff(a, b, diff);
    const cv::Scalar m = cv::mean(diff);
    return (m[0] + m[1] + m[2]) / 3.0;
}

// The source frame `decoded` shows, searched from `from` on; -1 when none matches.
int64_t identify(const cv::Mat& decoded, const ShapesRenderer& shapes, uint64_t from)
{
    constexpr uint64_t kSearch = 200;
    constexpr double kSure = 2.5; // the codec's mean error on one frame is 1 to 2 levels
    constexpr double kSameFrame = 6.0;
    const cv::Rect lower(0, kHeight / 2, kWidth, kHeight / 2); // below any panel
    Image candidate;
    int64_t best = -1;
    double bestError = kSameFrame;
    for (uint64_t k = from; k < from + kSearch && bestError > kSure; ++k) {
        shapes.render(k, candidate);
        const double error = meanAbsDiff(decoded(lower), test::asMat(candidate)(lower));
        if (error < bestError) {
            bestError = error;
            best = static_cast<int64_t>(k);
        }
    }
    return best;
}

int textWidth(const std::string& text, const OverlayStyle& style)
{
    return overlayTextWidth(text, style);
}

// The class name drawn as the top-1 label of `decoded` (source frame `k`): the name whose
// rendering matches best, with its error and the runner-up's.
struct LabelMatch {
    std::string label;
    double error = 0.0;
    double second = 1e9;
};

const std::string kWaiting = "waiting";

// Every class name, and "waiting": what a frame recorded before the task's first result shows.
std::vector<std::string> labelCandidates()
{
    std::vector<std::string> names(
        std::begin(ShapesRenderer::kClassNames), std::end(ShapesRenderer::kClassNames));
    names.push_back(kWaiting);
    return names;
}

// Source frame k with the task's line drawn as the view draws it for result `label`.
void drawLabelled(const ShapesRenderer& shapes, uint64_t k, const std::string& label, Image& out)
{
    shapes.render(k, out);
    Overlay overlay;
    OverlayTask task;
    task.name = "shapes";
    task.haveResult = label != kWaiting;
    if (task.haveResult)
        task.top = {{label, 1.0f}};
    overlay.tasks.push_back(task);
    drawOverlay(out, overlay);
}

LabelMatch readLabel(const cv::Mat& decoded, const ShapesRenderer& shapes, uint64_t k)
{
    const OverlayStyle style = overlayStyle(decoded.rows);
    const int x0 = style.margin + textWidth("shapes: ", style);
    const int baselineY = style.margin / 2 + style.lineHeight - style.baseline;
    LabelMatch best;
    best.error = 1e9;
    Image drawn;
    for (const std::string& name : labelCandidates()) {
        drawLabelled(shapes, k, name, drawn);
        // The name and the space after it: a longer name would show there.
        const cv::Rect box(x0 - 1, baselineY - style.lineHeight + style.baseline,
            textWidth(name + " ", style) + 1, style.lineHeight);
        const double error = meanAbsDiff(decoded(box), test::asMat(drawn)(box));
        if (error < best.error) {
            best.second = best.error;
            best.error = error;
            best.label = name;
        } else {
            best.second = std::min(best.second, error);
        }
    }
    return best;
}

// How well "^ result of frame <j>:" matches where a note line begins in the panel of `decoded`,
// on any line (1 = exactly). The text's white cores are compared, the panel's background and the
// black outlines left out.
double noteScore(const cv::Mat& decoded, uint64_t j)
{
    const OverlayStyle style = overlayStyle(decoded.rows);
    const std::string note = "^ result of frame " + std::to_string(j) + ":";
    const int x = style.margin + textWidth("  ", style);
    Image drawn = test::solidImage(style.lineHeight + 4, textWidth(note, style) + 6, 0, 0, 0);
    drawText(drawn, note, 3, style.lineHeight - style.baseline, {style.scale, style.thickness}, 255,
        255, 255);
    cv::Mat text;
    cv::cvtColor(test::asMat(drawn), text, cv::COLOR_BGR2GRAY);
    cv::threshold(text, text, 128, 255, cv::THRESH_BINARY);
    const cv::Rect band(std::max(0, x - 6), 0, text.cols + 12, 6 * style.lineHeight);
    cv::Mat grey;
    cv::cvtColor(
        decoded(band & cv::Rect(0, 0, decoded.cols, decoded.rows)), grey, cv::COLOR_BGR2GRAY);
    cv::threshold(grey, grey, 170, 255, cv::THRESH_BINARY);
    cv::Mat score;
    cv::matchTemplate(grey, text, score, cv::TM_CCORR_NORMED);
    double best = 0;
    cv::minMaxLoc(score, nullptr, &best);
    return best;
}

struct Checked {
    size_t frames = 0; // decoded
    size_t own = 0; // drawn with their own result
    size_t earlier = 0; // drawn with an earlier frame's result, marked so
    size_t waiting = 0; // recorded before the task's first result ("shapes: waiting")
    nlohmann::json summary;
};

// Checks every frame of `decoded` (what the user got from the run in `runDir`) as described above.
Checked checkFrames(const std::vector<cv::Mat>& decoded, const std::string& runDir)
{
    Checked c;
    c.summary = nlohmann::json::parse(test::readFile(runDir + "/summary.json"));
    const auto labels = topLabels(runDir + "/shapes.frames.csv");
    c.frames = decoded.size();

    const ShapesRenderer shapes(kWidth, kHeight, kSeed);
    Image truthImage;
    uint64_t next = 0;
    for (size_t i = 0; i < decoded.size(); ++i) {
        const int64_t k = identify(decoded[i], shapes, next);
        EXPECT_GE(k, 0) << "recorded frame " << i << " matches no source frame from " << next;
        if (k < 0)
            continue;
        next = static_cast<uint64_t>(k) + 1;
        SCOPED_TRACE(
            "recorded frame " + std::to_string(i) + " = source frame " + std::to_string(k));
        const LabelMatch label = readLabel(decoded[i], shapes, static_cast<uint64_t>(k));
        // The right name differs by the codec's noise only (12 to 13 levels on the font's sharp
        // edges); the others by whole glyphs (45 and more).
        EXPECT_LT(label.error, 16.0) << label.label << ", next best " << label.second;
        EXPECT_GT(label.second, label.error + 8.0) << label.label;
        const auto own = labels.find(static_cast<uint64_t>(k));
        if (label.label == kWaiting) {
            // Only before the task's first result: a paced run under load may drop the first
            // frames before any is inferred, and the view records them saying so.
            ++c.waiting;
            EXPECT_EQ(own, labels.end());
            EXPECT_EQ(labels.lower_bound(static_cast<uint64_t>(k)), labels.begin())
                << "'waiting' after a result";
            continue;
        }
        if (own != labels.end()) {
            ++c.own;
            EXPECT_EQ(label.label, own->second);
            EXPECT_EQ(label.label,
                ShapesRenderer::kClassNames[static_cast<size_t>(
                    shapes.render(static_cast<uint64_t>(k), truthImage))]);
            EXPECT_LT(noteScore(decoded[i], own->first), 0.6) << "a note on an inferred frame";
            continue;
        }
        // Never inferred: the newest earlier result, and the note naming its frame.
        ++c.earlier;
        auto earlier = labels.lower_bound(static_cast<uint64_t>(k));
        EXPECT_NE(earlier, labels.begin());
        if (earlier == labels.begin())
            continue;
        --earlier;
        EXPECT_EQ(label.label, earlier->second);
        EXPECT_GT(noteScore(decoded[i], earlier->first), 0.7)
            << "no note naming frame " << earlier->first;
    }
    return c;
}

// Runs the demo with `args`, decodes the recording and checks every frame.
Checked runAndCheck(const std::vector<std::string>& args, int fps, uint64_t frames,
    const std::string& backend = "auto")
{
    test::TempDir dir;
    std::vector<std::string> command = {"run", "-c", demoConfig(dir, fps, backend), "-q",
        "--frames", std::to_string(frames), "--log-dir", "logs", "--output", "file://out.mp4"};
    command.insert(command.end(), args.begin(), args.end());
    const auto r = test::runJetagent(command, dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return checkFrames(decode(dir / "out.mp4"), test::onlyRunDirectory(dir / "logs"));
}

// The reader the checks below rely on: an undecoded frame drawn with a class name or "waiting"
// reads back as that, by a margin.
TEST(OverlayRecording, TheLabelReaderTellsEveryNameAndWaitingApart)
{
    const ShapesRenderer shapes(kWidth, kHeight, kSeed);
    for (const std::string& name : labelCandidates()) {
        Image frame;
        drawLabelled(shapes, 7, name, frame);
        const LabelMatch label = readLabel(test::asMat(frame), shapes, 7);
        EXPECT_EQ(label.label, name);
        EXPECT_LT(label.error, 1.0) << name;
        EXPECT_GT(label.second, label.error + 8.0) << name;
    }
}

TEST(OverlayRecording, OfflineEveryFrameCarriesItsOwnLabel)
{
    constexpr uint64_t kFrames = 60;
    const Checked c = runAndCheck({"--as-fast-as-possible"}, 30, kFrames);
    EXPECT_EQ(c.frames, kFrames); // offline: the recording loses no frame
    EXPECT_EQ(c.own, kFrames);
    EXPECT_EQ(c.summary["display"]["frames_with_earlier_result"], 0);
}

TEST(OverlayRecording, RealTimeEveryFrameCarriesItsOwnLabel)
{
    // Paced at 30 fps the model (a few ms) infers every frame.
    constexpr uint64_t kFrames = 60;
    const Checked c = runAndCheck({}, 30, kFrames);
    EXPECT_GE(c.frames, kFrames * 9 / 10);
    EXPECT_EQ(c.earlier, c.summary["display"]["frames_with_earlier_result"].get<size_t>());
    EXPECT_EQ(c.own + c.earlier + c.waiting, c.frames);
}

TEST(OverlayRecording, RealTimeFasterThanTheModelMarksTheFramesItNeverInferred)
{
    // Paced at 1000 fps, faster than the model on OpenCV DNN (about 1.3 ms a frame with its
    // preprocessing; xnnpack's 0.5 ms can keep up): the live queue drops frames, and those the
    // view still records carry the previous result with a note saying whose it is.
    const Checked c = runAndCheck({}, 1000, 400, "opencv");
    EXPECT_GT(c.frames, 0u);
    EXPECT_EQ(c.earlier, c.summary["display"]["frames_with_earlier_result"].get<size_t>());
    EXPECT_EQ(c.own + c.earlier + c.waiting, c.frames);
    EXPECT_GT(c.summary["tasks"][0]["frames"]["dropped"].get<int>(), 0);
}

// The same checks on what a network client receives and decodes (H.264, so the reader's margins
// hold at the stream's bit rate too).
TEST(OverlayStream, RtpEveryFrameCarriesItsOwnLabel)
{
    if (!test::haveDecoder())
        GTEST_SKIP() << "no openh264dec/h264parse (gstreamer1.0-plugins-bad) to decode with";
    const int port = test::unusedLoopbackPort();
    ASSERT_GT(port, 0);
    test::Receiver receiver("udpsrc address=127.0.0.1 port=" + std::to_string(port) +
            " caps=\"application/x-rtp,media=video,clock-rate=90000,encoding-name=H264,"
            "payload=96\" ! " +
            test::kDecode,
        true);
    ASSERT_TRUE(receiver.ok()) << receiver.problem();
    test::TempDir dir;
    constexpr uint64_t kFrames = 90;
    const auto r = test::runJetagent(
        {"run", "-c", demoConfig(dir, 30), "--frames", std::to_string(kFrames), "--log-dir", "logs",
            "--output", "rtp://127.0.0.1:" + std::to_string(port)},
        dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("a=rtpmap:96 H264/90000"), std::string::npos) << "no SDP logged:\n"
                                                                       << r.err;
    std::this_thread::sleep_for(std::chrono::milliseconds(500)); // the last packets
    const Checked c = checkFrames(receiver.all(), test::onlyRunDirectory(dir / "logs"));
    // Loopback loses nothing; the view may skip a frame or two of a paced run under load.
    EXPECT_GE(c.frames, kFrames * 8 / 10);
    EXPECT_EQ(c.own + c.earlier + c.waiting, c.frames);
    const auto& stream = c.summary["display"]["stream"];
    EXPECT_EQ(stream["frames_sent"].get<size_t>() + stream["frames_dropped"].get<size_t>(),
        c.summary["display"]["frames_recorded"].get<size_t>());
    EXPECT_GE(stream["frames_sent"].get<size_t>(), c.frames);
    EXPECT_EQ(stream["address"], "rtp://127.0.0.1:" + std::to_string(port));
    // The SDP a player opens, beside the logs; the stream's counts logged once, at the end.
    const std::string sdp = test::readFile(test::onlyRunDirectory(dir / "logs") + "/stream.sdp");
    EXPECT_NE(sdp.find("m=video " + std::to_string(port) + " RTP/AVP 96"), std::string::npos)
        << sdp;
    EXPECT_NE(sdp.find("a=rtpmap:96 H264/90000"), std::string::npos) << sdp;
    const std::string streamed = "streamed ";
    const size_t once = r.err.find(streamed);
    ASSERT_NE(once, std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(streamed, once + 1), std::string::npos) << r.err;
}

TEST(OverlayStream, RtspEveryFrameCarriesItsOwnLabel)
{
    if (!test::haveDecoder())
        GTEST_SKIP() << "no openh264dec/h264parse (gstreamer1.0-plugins-bad) to decode with";
    const int port = test::unusedLoopbackPort();
    ASSERT_GT(port, 0);
    test::TempDir dir;
    const std::string url = "rtsp://127.0.0.1:" + std::to_string(port) + "/jetagent";
    // Ten seconds at 30 fps: the client joins once the server answers.
    const int pid = test::spawnJetagent(
        {"run", "-c", demoConfig(dir, 30), "--frames", "300", "--log-dir", "logs", "--output", url},
        dir.path());
    ASSERT_GT(pid, 0);
    std::vector<cv::Mat> frames;
    {
        // A client is replaced as soon as its pipeline fails (the server is not listening yet),
        // else after two seconds without a frame: under load an RTSP session's set-up and first
        // decoded frame can take longer than the 0.4 s the first version gave every attempt, and
        // an attempt torn down before its first frame never gets one.
        std::unique_ptr<test::Receiver> client;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while ((!client || client->frames() == 0) && std::chrono::steady_clock::now() < deadline) {
            client = std::make_unique<test::Receiver>(
                "rtspsrc location=" + url + " latency=0 protocols=tcp ! " + test::kDecode, true);
            const auto patience = std::chrono::steady_clock::now() + std::chrono::seconds(2);
            while (client->frames() == 0 && !client->failed() &&
                std::chrono::steady_clock::now() < patience)
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ASSERT_TRUE(client && client->frames() > 0) << "no frame from " << url;
        std::this_thread::sleep_for(std::chrono::seconds(3));
        frames = client->all();
    }
    EXPECT_EQ(test::waitExit(pid, 30000), 0) << test::readFile(dir / "spawn.err");
    const Checked c = checkFrames(frames, test::onlyRunDirectory(dir / "logs"));
    EXPECT_GE(c.frames, 60u); // three seconds and more at 30 fps
    EXPECT_EQ(c.own + c.earlier + c.waiting, c.frames);
    const auto& stream = c.summary["display"]["stream"];
    EXPECT_GT(stream["frames_unwatched"].get<size_t>(), 0u); // before the client came
    EXPECT_GE(stream["frames_sent"].get<size_t>(), c.frames);
}

} // namespace
} // namespace jetagent
