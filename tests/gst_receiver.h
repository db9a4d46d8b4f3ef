// A GStreamer client pipeline for the tests of the network video outputs: it receives, decodes
// and keeps frames (tests/stream_out_test.cpp, tests/overlay_e2e_test.cpp).
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <opencv2/core.hpp>

namespace jetagent::test {

// Depayloads and decodes H.264 RTP into BGR frames for "appsink name=sink"; every frame queued
// (a test counts and checks them all).
constexpr const char* kDecode =
    "rtph264depay ! h264parse ! openh264dec ! videoconvert ! video/x-raw,format=BGR ! "
    "appsink name=sink sync=false";

// True when the elements the receivers use are installed (gstreamer1.0-plugins-good and -bad
// with libopenh264).
inline bool haveDecoder()
{
    gst_init(nullptr, nullptr);
    for (const char* name : {"openh264dec", "h264parse", "rtspsrc", "udpsrc", "rtph264depay"}) {
        GstElementFactory* f = gst_element_factory_find(name);
        if (f == nullptr)
            return false;
        gst_object_unref(f);
    }
    return true;
}

// A GStreamer client: `pipeline` ends in "appsink name=sink"; counts the frames it decodes and
// keeps the last (or all).
class Receiver {
public:
    // `keepAll`: every decoded frame is kept (frames()), else the last only.
    explicit Receiver(const std::string& pipeline, bool keepAll = false) : keepAll_(keepAll)
    {
        gst_init(nullptr, nullptr);
        GError* error = nullptr;
        pipeline_ = gst_parse_launch(pipeline.c_str(), &error);
        if (error != nullptr) {
            problem_ = error->message;
            g_error_free(error);
        }
        if (pipeline_ == nullptr)
            return;
        GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline_), "sink");
        thread_ = std::thread([this, sink] {
            while (!stop_.load()) {
                GstSample* sample =
                    gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 100 * GST_MSECOND);
                if (sample == nullptr)
                    continue;
                GstCaps* caps = gst_sample_get_caps(sample);
                GstStructure* s = gst_caps_get_structure(caps, 0);
                int w = 0;
                int h = 0;
                gst_structure_get_int(s, "width", &w);
                gst_structure_get_int(s, "height", &h);
                GstBuffer* buffer = gst_sample_get_buffer(sample);
                GstMapInfo map;
                if (gst_buffer_map(buffer, &map, GST_MAP_READ)) {
                    // BGR rows padded to 4 bytes by videoconvert.
                    const size_t stride = (static_cast<size_t>(w) * 3 + 3) / 4 * 4;
                    cv::Mat view(h, w, CV_8UC3, map.data, stride);
                    std::lock_guard<std::mutex> lock(mutex_);
                    view.copyTo(last_);
                    if (keepAll_)
                        all_.push_back(last_.clone());
                    gst_buffer_unmap(buffer, &map);
                }
                frames_.fetch_add(1);
                gst_sample_unref(sample);
            }
            gst_object_unref(sink);
        });
        gst_element_set_state(pipeline_, GST_STATE_PLAYING);
    }
    ~Receiver()
    {
        stop_.store(true);
        if (thread_.joinable())
            thread_.join();
        if (pipeline_ != nullptr) {
            gst_element_set_state(pipeline_, GST_STATE_NULL);
            gst_object_unref(pipeline_);
        }
    }
    bool ok() const { return pipeline_ != nullptr && problem_.empty(); }
    // Whether the pipeline has posted an error since it started (an RTSP server that refused the
    // connection, say); once true, stays true.
    bool failed()
    {
        if (pipeline_ == nullptr || failed_)
            return true;
        GstBus* bus = gst_element_get_bus(pipeline_);
        GstMessage* error = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
        gst_object_unref(bus);
        if (error != nullptr) {
            failed_ = true;
            gst_message_unref(error);
        }
        return failed_;
    }
    const std::string& problem() const { return problem_; }
    int frames() const { return frames_.load(); }
    std::vector<cv::Mat> all()
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return all_;
    }
    cv::Mat last()
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return last_.clone();
    }

private:
    GstElement* pipeline_ = nullptr;
    std::string problem_;
    std::thread thread_;
    std::atomic<bool> stop_ {false};
    std::atomic<int> frames_ {0};
    std::mutex mutex_;
    cv::Mat last_;
    bool keepAll_ = false;
    bool failed_ = false;
    std::vector<cv::Mat> all_;
};

} // namespace jetagent::test
