// zerohop-gst-baseline: the comparison point for `scripts/bench-e2e.py`.
//
// The same test-camera frames (picture, timecode, pacing) go through a plain GStreamer pipeline,
//   appsrc (YUYV) ! videoconvert ! x264enc (our settings) ! appsink
// and the access units go into the same WebRTC sender (StreamServer) serve uses, without the
// playout-delay extension (GStreamer's webrtcbin sends none). The convert+encode part and that extension
// differ, so the browser-measured latency compares our sender with what GStreamer gives a user.
//
// Usage: zerohop-gst-baseline [serve] --source test:1280x720@30 --listen 127.0.0.1:8090 [--bitrate 2500]
//          [--keyint 120] [--preset superfast]
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <signal.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "core/latency_stats.hpp"
#include "listen_address.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/source.hpp"
#include "zerohop/stream_server.hpp"

namespace {

std::atomic<bool> gStop{false};
void onSignal(int) { gStop = true; }

struct Options {
  std::string source = "test:1280x720@30";
  std::string host = "127.0.0.1";
  std::uint16_t port = 8090;
  unsigned bitrate = 2500;
  unsigned keyint = 120;
  std::string preset = "superfast";
};

// A whole decimal number in [lo, hi], or Error(kInvalidArgument) naming the option and the range.
unsigned parseCount(const std::string& option, const std::string& text, unsigned lo, unsigned hi) {
  unsigned v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) {
    throw zerohop::Error(zerohop::Errc::kInvalidArgument, option + " \"" + text + "\" is not a whole number from " +
                                                              std::to_string(lo) + " to " + std::to_string(hi));
  }
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  int i0 = 1;
  if (argc > 1 && std::string(argv[1]) == "serve") i0 = 2;  // same command line as `zerohop serve`
  for (int i = i0; i < argc; i += 2) {
    const std::string k = argv[i];
    if (i + 1 == argc) throw zerohop::Error(zerohop::Errc::kInvalidArgument, "option " + k + " needs a value");
    const std::string v = argv[i + 1];
    if (k == "--source") o.source = v;
    else if (k == "--listen") {
      const auto listen = zerohop::cli::parseListenAddress(v);
      o.host = listen.host;
      o.port = listen.port;
    } else if (k == "--bitrate") o.bitrate = parseCount(k, v, 100, 100000);
    else if (k == "--keyint") o.keyint = parseCount(k, v, 1, 10000);
    else if (k == "--preset") o.preset = v;
    else if (k == "--encoder") continue;  // accepted for command-line compatibility with serve: x264 only
    else throw zerohop::Error(zerohop::Errc::kInvalidArgument, "unknown option " + k);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    gst_init(nullptr, nullptr);
    auto source = zerohop::openSource(zerohop::parseSourceSpec(o.source));
    const auto info = source->info();
    const unsigned fps = static_cast<unsigned>(info.fps);
    // Same settings as zerohop's libx264 encoder: constrained baseline, zerolatency, CBR with a
    // one-frame VBV, 1 thread, veryfast, fixed keyframe interval.
    const std::string desc =
        "appsrc name=src is-live=true format=time do-timestamp=false ! videoconvert ! video/x-raw,format=I420 ! "
        "x264enc tune=zerolatency speed-preset=" + o.preset + " threads=1 bframes=0 pass=cbr bitrate=" +
        std::to_string(o.bitrate) + " vbv-buf-capacity=" + std::to_string(1000 / fps) +
        " key-int-max=" + std::to_string(o.keyint) +
        " ! video/x-h264,profile=constrained-baseline,stream-format=byte-stream,alignment=au ! "
        "appsink name=sink sync=false max-buffers=4 drop=false emit-signals=false";
    GError* err = nullptr;
    GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
    if (!pipeline) throw zerohop::Error(zerohop::Errc::kDevice, std::string("gst_parse_launch: ") + err->message);
    GstElement* appsrc = gst_bin_get_by_name(GST_BIN(pipeline), "src");
    GstElement* appsink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
    GstCaps* caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING,
                                        info.format == zerohop::PixelFormat::kUYVY ? "UYVY" : "YUY2", "width",
                                        G_TYPE_INT, static_cast<int>(info.width), "height", G_TYPE_INT,
                                        static_cast<int>(info.height), "framerate", GST_TYPE_FRACTION, fps, 1,
                                        nullptr);
    g_object_set(appsrc, "caps", caps, nullptr);
    gst_caps_unref(caps);

    zerohop::StreamConfig sc;
    sc.host = o.host;
    sc.port = o.port;
    // GStreamer's webrtcbin alone sends no playout-delay, and that extension decides how Chromium schedules
    // each frame's display (docs/benchmarks-latency.md): leave it out, as a plain GStreamer sender would.
    // abs-capture-time stays: it only carries the capture time the benchmark reads.
    sc.sendPlayoutDelay = false;
    zerohop::StreamServer server(sc);
    std::atomic<bool> keyframe{true};
    auto stream = server.unnamedStream();
    zerohop::SinkSetup setup;
    setup.requestKeyframe = [&] { keyframe = true; };
    stream->attach(setup);
    // The same per-stage figures serve reports, so the benchmark compares server-side time too.
    zerohop::LatencyStats stats;
    server.setStatsProvider([&] {
      const auto snap = stats.snapshot();
      auto pct = [](const zerohop::Percentiles& p) {
        return "{\"p50_ms\":" + std::to_string(p.p50Ms) + ",\"p99_ms\":" + std::to_string(p.p99Ms) + "}";
      };
      std::string stages;
      for (std::size_t i = 1; i < zerohop::kStageCount; ++i) {
        if (snap.stage[i].samples == 0) continue;
        if (!stages.empty()) stages += ",";
        stages += std::string("\"") + zerohop::stageName(static_cast<zerohop::Stage>(i)) + "\":" + pct(snap.stage[i]);
      }
      return "{\"viewers\":" + std::to_string(server.viewerCount()) + ",\"frames\":" + std::to_string(snap.frames) +
             ",\"fps\":" + std::to_string(snap.fps) + ",\"encoder\":\"GStreamer x264enc\",\"stages\":{" + stages +
             "},\"total\":" + pct(snap.total) + "}";
    });
    gst_element_set_state(pipeline, GST_STATE_PLAYING);

    std::mutex timesMutex;
    std::deque<zerohop::Frame> inflight;  // frames given to the encoder, oldest first
    const std::int64_t base = zerohop::monotonicNs();
    std::thread sinkThread([&] {
      while (!gStop) {
        GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(appsink), 100 * GST_MSECOND);
        if (!sample) continue;
        GstBuffer* buf = gst_sample_get_buffer(sample);
        GstMapInfo map;
        if (gst_buffer_map(buf, &map, GST_MAP_READ)) {
          auto unit = std::make_shared<zerohop::EncodedUnit>();
          unit->bytes.assign(map.data, map.data + map.size);
          unit->keyframe = !GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DELTA_UNIT);
          unit->width = info.width;
          unit->height = info.height;
          {
            // x264enc rewrites timestamps (it offsets them by 1000 h), so frames are matched by order:
            // with no B-frames and zerolatency it emits exactly one access unit per input, in order.
            std::lock_guard lock(timesMutex);
            if (!inflight.empty()) {
              const zerohop::Frame& in = inflight.front();
              unit->sequence = in.sequence;
              unit->wallClockMs = in.wallClockMs;
              unit->times = in.times;
              unit->ptsNs = in.captureNs();
              inflight.pop_front();
            }
          }
          unit->times.mark(zerohop::Stage::kEncode, zerohop::monotonicNs());
          gst_buffer_unmap(buf, &map);
          zerohop::StageTimes times = unit->times;
          stream->deliver(unit);
          times.mark(zerohop::Stage::kSend, zerohop::monotonicNs());
          stats.record(times);
        }
        gst_sample_unref(sample);
      }
    });

    signal(SIGINT, onSignal);
    signal(SIGTERM, onSignal);
    std::printf("open %s\n", server.url().c_str());
    std::fflush(stdout);
    while (!gStop) {
      auto lease = source->next(std::chrono::milliseconds(100));
      if (!lease) continue;
      const zerohop::Frame& f = lease->frame();
      GstBuffer* buf = gst_buffer_new_allocate(nullptr, f.bytesUsed, nullptr);
      gst_buffer_fill(buf, 0, f.data[0], f.bytesUsed);
      const GstClockTime pts = static_cast<GstClockTime>(f.captureNs() - base);
      GST_BUFFER_PTS(buf) = pts;
      GST_BUFFER_DURATION(buf) = GST_SECOND / fps;
      {
        std::lock_guard lock(timesMutex);
        inflight.push_back(f);
      }
      if (keyframe.exchange(false)) {
        GstPad* pad = gst_element_get_static_pad(appsink, "sink");
        gst_pad_push_event(pad, gst_video_event_new_upstream_force_key_unit(GST_CLOCK_TIME_NONE, TRUE, 0));
        gst_object_unref(pad);
      }
      gst_app_src_push_buffer(GST_APP_SRC(appsrc), buf);
    }
    sinkThread.join();
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(appsrc);
    gst_object_unref(appsink);
    gst_object_unref(pipeline);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zerohop-gst-baseline: error: %s\n", e.what());
    return 1;
  }
}
