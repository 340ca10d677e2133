// zerohop-whep-receive: an independent WHEP viewer that proves video arrives, for end-to-end checks
// (scripts/gpu-serve-check.sh runs it against `zerohop serve` from the bundle).
//
// It negotiates a recvonly H.264 session (--codec vp8: VP8 only, as Firefox ESR offers) with a WHEP
// endpoint using GStreamer's webrtcbin (not zerohop's stream code), depayloads and parses the access
// units (rtph264depay ! h264parse ! appsink; rtpvp8depay ! appsink), decodes them with libavcodec, and reads the pixel timecode (include/zerohop/timecode.hpp) from each
// picture: capture -> decoded latency is CLOCK_REALTIME now minus the capture time the camera drew
// into the frame, so it is meaningful when sender and receiver share a clock (the same machine).
//
// --seconds S receives for S seconds (or until SIGINT/SIGTERM) instead of up to --frames pictures;
// --units-log FILE writes one CSV row per access unit received (its arrival time, size, whether it is a
// keyframe). --nack offers generic NACK as browsers do. --claim-loss, --report-rate, --pli-rate and
// --junk-rate make it a hostile viewer (issue 33; hostile_viewer.hpp): its receiver reports claim that
// loss (its own, and that many more a second), it sends that many PLIs a second (each with a report
// claiming the loss), and that many junk RTP packets with a fresh SSRC each, from its own validated
// transport.
//
// Prints one JSON object on stdout:
//   {"frames_decoded", "timecodes_read", "timecodes_unreadable", "width", "height", "first_frame_ms"
//    (POST -> first decoded picture), "seq_first", "seq_last", "seq_missing" (gaps in the timecode
//    sequence), "latency_ms": {"p50", "p99", "max", "min"}, "jitter_buffer_ms", "units", "bytes",
//    "keyframes" (access units received), "hostile" (null, or what it did: hostile_viewer.hpp), "error"}
// Exit status: 0 when --frames pictures were decoded and every one carried a readable timecode (with
// --seconds: when any picture was decoded), and a hostile plan ran; 1 otherwise (with "error" saying
// what fell short); 2 on bad arguments.
// Thread-safety: one main thread; the GStreamer callbacks only link pads and add probes (the hostile
// viewer's probes and attack thread share atomics).

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/sdp/sdp.h>
#define GST_USE_UNSTABLE_API
#include <gst/webrtc/webrtc.h>
#include <httplib.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
}

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hostile_viewer.hpp"
#include "whep_viewer_kit.hpp"
#include "zerohop/frame.hpp"
#include "zerohop/timecode.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using namespace zerohop::whep_viewer;

struct Options {
  std::string url;             // http://HOST:PORT/whep
  int frames = 150;            // decoded pictures wanted
  double timeoutSeconds = 30;  // from the POST
  std::string iceAddress = "127.0.0.1";
  int jitterBufferMs = 0;  // webrtcbin's rtpjitterbuffer latency
  std::string framesLog;   // optional: one CSV row per decoded picture
  bool vp8 = false;        // --codec vp8: offer VP8 only
  double seconds = 0;      // --seconds: receive this long (0: until --frames pictures)
  std::string unitsLog;    // optional: one CSV row per access unit received
  bool nack = false;       // --nack: offer generic NACK (a=rtcp-fb:96 nack), as browsers do
  zerohop::test::HostilePlan hostile;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "%s\nusage: zerohop-whep-receive URL [--frames N] [--timeout S] [--ice-address IP] "
               "[--jitter-buffer-ms MS] [--frames-log FILE] [--codec h264|vp8] [--seconds S] [--units-log FILE] "
               "[--nack] [--claim-loss PERCENT] [--report-rate N] [--pli-rate N] [--junk-rate N]\n",
               why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value for " + a).c_str());
      return argv[++i];
    };
    if (a == "--frames")
      o.frames = std::atoi(value().c_str());
    else if (a == "--timeout")
      o.timeoutSeconds = std::atof(value().c_str());
    else if (a == "--ice-address")
      o.iceAddress = value();
    else if (a == "--jitter-buffer-ms")
      o.jitterBufferMs = std::atoi(value().c_str());
    else if (a == "--frames-log")
      o.framesLog = value();
    else if (a == "--codec") {
      const std::string c = value();
      if (c != "h264" && c != "vp8") usage("--codec takes h264 or vp8");
      o.vp8 = c == "vp8";
    }
    else if (a == "--seconds")
      o.seconds = std::atof(value().c_str());
    else if (a == "--units-log")
      o.unitsLog = value();
    else if (a == "--nack")
      o.nack = true;
    else if (a == "--claim-loss")
      o.hostile.claimLossPercent = std::atoi(value().c_str());
    else if (a == "--report-rate")
      o.hostile.reportsPerSecond = std::atoi(value().c_str());
    else if (a == "--pli-rate")
      o.hostile.plisPerSecond = std::atoi(value().c_str());
    else if (a == "--junk-rate")
      o.hostile.junkPerSecond = std::atoi(value().c_str());
    else if (a.rfind("--", 0) == 0)
      usage(("unknown option " + a).c_str());
    else
      o.url = a;
  }
  if (o.url.rfind("http://", 0) != 0) usage("URL must be http://HOST:PORT/PATH");
  if (o.frames <= 0) usage("--frames must be > 0");
  if (o.seconds < 0) usage("--seconds must be >= 0");
  if (o.hostile.claimLossPercent < 0 || o.hostile.claimLossPercent > 100) usage("--claim-loss takes 0..100");
  if (o.hostile.plisPerSecond < 0 || o.hostile.junkPerSecond < 0 || o.hostile.reportsPerSecond < 0)
    usage("--report-rate, --pli-rate and --junk-rate must be >= 0");
  if (o.seconds > 0) {
    o.frames = std::numeric_limits<int>::max();
    o.timeoutSeconds = o.seconds;
  }
  return o;
}

// SIGINT/SIGTERM: stop receiving, end the session and print what was received (--seconds is then a bound).
volatile std::sig_atomic_t stopRequested = 0;
void onStopSignal(int) {
  stopRequested = 1;
}

std::int64_t realtimeMs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// What webrtcbin's pad-added callbacks link to: the appsink, and the hostile viewer that reads the media
// SSRC from the pad (null: an honest viewer).
struct PadContext {
  GstElement* sink = nullptr;
  zerohop::test::HostileViewer* hostile = nullptr;
};

// webrtcbin's pad-added for VP8: depayload into frames, hand them to the appsink.
void onVp8PadAdded(GstElement*, GstPad* pad, gpointer data) {
  if (GST_PAD_DIRECTION(pad) != GST_PAD_SRC) return;
  auto* context = static_cast<PadContext*>(data);
  if (context->hostile) context->hostile->watchMedia(pad);
  GstElement* sink = context->sink;
  GstElement* pipeline = GST_ELEMENT(gst_element_get_parent(sink));
  GstElement* depay = gst_element_factory_make("rtpvp8depay", nullptr);
  gst_bin_add(GST_BIN(pipeline), depay);
  if (!gst_element_link(depay, sink)) std::fprintf(stderr, "zerohop-whep-receive: linking rtpvp8depay ! appsink failed\n");
  gst_element_sync_state_with_parent(depay);
  GstPad* depaySink = gst_element_get_static_pad(depay, "sink");
  if (gst_pad_link(pad, depaySink) != GST_PAD_LINK_OK)
    std::fprintf(stderr, "zerohop-whep-receive: linking webrtcbin's pad to rtpvp8depay failed\n");
  gst_object_unref(depaySink);
  gst_object_unref(pipeline);
}

// webrtcbin's pad-added: depayload, parse into byte-stream access units, hand them to the appsink.
void onPadAdded(GstElement*, GstPad* pad, gpointer data) {
  if (GST_PAD_DIRECTION(pad) != GST_PAD_SRC) return;
  auto* context = static_cast<PadContext*>(data);
  if (context->hostile) context->hostile->watchMedia(pad);
  GstElement* sink = context->sink;
  GstElement* pipeline = GST_ELEMENT(gst_element_get_parent(sink));
  GstElement* depay = gst_element_factory_make("rtph264depay", nullptr);
  GstElement* parse = gst_element_factory_make("h264parse", nullptr);
  gst_bin_add_many(GST_BIN(pipeline), depay, parse, nullptr);
  GstCaps* caps = gst_caps_from_string("video/x-h264,stream-format=byte-stream,alignment=au");
  if (!gst_element_link(depay, parse) || !gst_element_link_filtered(parse, sink, caps))
    std::fprintf(stderr, "zerohop-whep-receive: linking rtph264depay ! h264parse ! appsink failed\n");
  gst_caps_unref(caps);
  gst_element_sync_state_with_parent(depay);
  gst_element_sync_state_with_parent(parse);
  GstPad* depaySink = gst_element_get_static_pad(depay, "sink");
  if (gst_pad_link(pad, depaySink) != GST_PAD_LINK_OK)
    std::fprintf(stderr, "zerohop-whep-receive: linking webrtcbin's pad to rtph264depay failed\n");
  gst_object_unref(depaySink);
  gst_object_unref(pipeline);
}

struct Result {
  int decoded = 0;
  int timecodes = 0;
  int width = 0;
  int height = 0;
  double firstFrameMs = -1;
  std::optional<std::uint32_t> seqFirst;
  std::uint32_t seqLast = 0;
  std::uint64_t seqMissing = 0;
  std::vector<double> latencyMs;
  int unreadable = 0;                        // decoded pictures without a readable timecode
  long units = 0, bytes = 0, keyframes = 0;  // access units received
  std::string hostile = "null";              // the hostile viewer's summary (JSON)
  std::string error;
};

void printResult(const Result& r, const Options& o) {
  std::printf(
      "{\"frames_decoded\": %d, \"timecodes_read\": %d, \"timecodes_unreadable\": %d, \"width\": %d, "
      "\"height\": %d, \"first_frame_ms\": %.1f, \"seq_first\": %lld, \"seq_last\": %u, \"seq_missing\": %llu, "
      "\"latency_ms\": {\"p50\": %.1f, \"p99\": %.1f, \"min\": %.1f, \"max\": %.1f}, "
      "\"jitter_buffer_ms\": %d, \"units\": %ld, \"bytes\": %ld, \"keyframes\": %ld, \"hostile\": %s, "
      "\"error\": \"%s\"}\n",
      r.decoded, r.timecodes, r.unreadable, r.width, r.height, r.firstFrameMs,
      r.seqFirst ? static_cast<long long>(*r.seqFirst) : -1LL, r.seqLast,
      static_cast<unsigned long long>(r.seqMissing), percentile(r.latencyMs, 50), percentile(r.latencyMs, 99),
      percentile(r.latencyMs, 0), percentile(r.latencyMs, 100), o.jitterBufferMs, r.units, r.bytes, r.keyframes,
      r.hostile.c_str(), jsonEscape(r.error).c_str());
  std::fflush(stdout);
}

// Whether the access unit is a keyframe: an IDR slice (NAL type 5) in H.264's byte stream, or a VP8
// key frame (the frame tag's bit 0 clear).
bool isKeyframe(const std::uint8_t* data, std::size_t size, bool vp8) {
  if (vp8) return size > 0 && (data[0] & 1) == 0;
  for (std::size_t i = 0; i + 3 < size; ++i) {
    if (data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1 && (data[i + 3] & 0x1f) == 5) return true;
  }
  return false;
}

int run(const Options& o) {
  Result r;
  for (const char* name : {"webrtcbin", o.vp8 ? "rtpvp8depay" : "rtph264depay", "h264parse", "appsink"}) {
    GstElementFactory* f = gst_element_factory_find(name);
    if (!f) {
      r.error = std::string("GStreamer element ") + name + " not found";
      printResult(r, o);
      return 1;
    }
    gst_object_unref(f);
  }
  VideoDecoder decoder(o.vp8 ? AV_CODEC_ID_VP8 : AV_CODEC_ID_H264);
  ElementPtr pipeline(gst_pipeline_new("whep-receive"));
  GstElement* webrtc = gst_element_factory_make("webrtcbin", "recv");
  GstElement* sink = gst_element_factory_make("appsink", "units");
  g_object_set(sink, "sync", FALSE, "max-buffers", 300u, "drop", FALSE, nullptr);
  gst_bin_add_many(GST_BIN(pipeline.get()), webrtc, sink, nullptr);
  gst_util_set_object_arg(G_OBJECT(webrtc), "bundle-policy", "max-bundle");
  g_object_set(webrtc, "latency", static_cast<guint>(o.jitterBufferMs), nullptr);
  GstWebRTCICE* ice = nullptr;
  g_object_get(webrtc, "ice-agent", &ice, nullptr);
  if (ice) {
    gboolean added = FALSE;
    g_signal_emit_by_name(ice, "add-local-ip-address", o.iceAddress.c_str(), &added);
    if (!added)
      std::fprintf(stderr, "zerohop-whep-receive: could not add %s to the ICE agent\n", o.iceAddress.c_str());
    gst_object_unref(ice);
  }
  GstCaps* caps = gst_caps_from_string(
      o.vp8 ? "application/x-rtp,media=video,encoding-name=VP8,payload=96,clock-rate=90000,rtcp-fb-nack-pli=(boolean)true"
            : "application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000,"
              "packetization-mode=(string)1,profile-level-id=(string)42e01f,rtcp-fb-nack-pli=(boolean)true");
  if (o.nack) gst_caps_set_simple(caps, "rtcp-fb-nack", G_TYPE_BOOLEAN, TRUE, nullptr);
  GstWebRTCRTPTransceiver* trans = nullptr;
  g_signal_emit_by_name(webrtc, "add-transceiver", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_RECVONLY, caps,
                        &trans);
  gst_caps_unref(caps);
  if (trans) gst_object_unref(trans);
  std::unique_ptr<zerohop::test::HostileViewer> hostile;
  if (o.hostile.any()) hostile = std::make_unique<zerohop::test::HostileViewer>(o.hostile);
  PadContext padContext{sink, hostile.get()};
  g_signal_connect(webrtc, "pad-added", G_CALLBACK(o.vp8 ? onVp8PadAdded : onPadAdded), &padContext);
  gst_element_set_state(pipeline.get(), GST_STATE_PLAYING);

  const std::string offer = localOffer(webrtc);
  const HttpUrl url = splitUrl(o.url);
  httplib::Client http(url.host, url.port);
  http.set_read_timeout(10, 0);
  std::string resource;
  const auto posted = Clock::now();
  const auto deadline =
      posted + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.timeoutSeconds));
  if (offer.find("m=video") == std::string::npos) {
    r.error = "webrtcbin made no video offer";
  } else if (auto res = http.Post(url.path, offer, "application/sdp"); !res) {
    r.error = "POST " + o.url + ": " + httplib::to_string(res.error());
  } else if (res->status != 201) {
    r.error = "POST " + o.url + ": HTTP " + std::to_string(res->status) + " " + res->body.substr(0, 200);
  } else if (!applyAnswer(webrtc, res->body)) {
    r.error = "webrtcbin refused the answer";
  } else {
    resource = res->get_header_value("Location");
    if (hostile) {
      if (std::string missing = hostile->attach(webrtc); !missing.empty()) r.error = "hostile viewer: " + missing;
    }
  }

  std::ofstream log;
  if (!o.framesLog.empty()) {
    log.open(o.framesLog);
    log << "picture,sequence,capture_wall_ms,decoded_wall_ms,latency_ms\n";
  }
  std::ofstream unitsLog;
  if (!o.unitsLog.empty()) {
    unitsLog.open(o.unitsLog);
    unitsLog << "received_wall_ms,bytes,keyframe\n";
  }
  std::optional<std::uint32_t> seqPrev;
  while (r.error.empty() && r.decoded < o.frames && Clock::now() < deadline && !stopRequested) {
    GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 100 * GST_MSECOND);
    if (!sample) {
      if (std::string e = busError(pipeline.get()); !e.empty()) r.error = "pipeline error from " + e;
      continue;
    }
    GstBuffer* buf = gst_sample_get_buffer(sample);
    GstMapInfo map;
    if (buf && gst_buffer_map(buf, &map, GST_MAP_READ)) {
      const bool key = isKeyframe(map.data, map.size, o.vp8);
      ++r.units;
      r.bytes += static_cast<long>(map.size);
      r.keyframes += key ? 1 : 0;
      if (unitsLog)  // flushed: the test reads it while it runs
        unitsLog << realtimeMs() << ',' << map.size << ',' << (key ? 1 : 0) << '\n' << std::flush;
      const std::string err = decoder.decode(map.data, map.size, [&](const AVFrame& f) {
        const std::int64_t now = realtimeMs();
        if (r.decoded++ == 0)
          r.firstFrameMs = std::chrono::duration<double, std::milli>(Clock::now() - posted).count();
        r.width = f.width;
        r.height = f.height;
        zerohop::Frame frame;
        frame.format = zerohop::PixelFormat::kI420;  // yuv420p / yuvj420p: the planes of I420
        frame.width = static_cast<std::uint32_t>(f.width);
        frame.height = static_cast<std::uint32_t>(f.height);
        frame.planeCount = 3;
        for (int i = 0; i < 3; ++i) {
          frame.data[i] = f.data[i];
          frame.pitch[i] = static_cast<std::uint32_t>(f.linesize[i]);
        }
        const auto tc = (f.format == AV_PIX_FMT_YUV420P || f.format == AV_PIX_FMT_YUVJ420P)
                            ? zerohop::readTimecode(frame)
                            : std::nullopt;
        if (!tc) {
          ++r.unreadable;
          return;
        }
        ++r.timecodes;
        // The timecode carries milliseconds modulo 2^44 (about 557 years): unwrap against now.
        const std::int64_t sent = static_cast<std::int64_t>(tc->wallClockMs);
        const std::int64_t latency = static_cast<std::int64_t>(
            (static_cast<std::uint64_t>(now) - static_cast<std::uint64_t>(sent)) & zerohop::kTimecodeMsMask);
        const double ms =
            latency > static_cast<std::int64_t>(zerohop::kTimecodeMsMask / 2)
                ? static_cast<double>(latency - static_cast<std::int64_t>(zerohop::kTimecodeMsMask) - 1)
                : static_cast<double>(latency);
        r.latencyMs.push_back(ms);
        if (!r.seqFirst) r.seqFirst = tc->sequence;
        if (seqPrev) {
          const std::uint32_t step = (tc->sequence - *seqPrev) & zerohop::kTimecodeSeqMask;
          if (step > 1 && step < zerohop::kTimecodeSeqMask / 2) r.seqMissing += step - 1;
        }
        seqPrev = tc->sequence;
        r.seqLast = tc->sequence;
        if (log) log << r.decoded << ',' << tc->sequence << ',' << sent << ',' << now << ',' << ms << '\n';
      });
      if (!err.empty()) std::fprintf(stderr, "zerohop-whep-receive: %s\n", err.c_str());
      gst_buffer_unmap(buf, &map);
    }
    gst_sample_unref(sample);
  }
  if (hostile) {
    hostile->stop();  // before the session ends: its thread chains into webrtcbin's pads
    r.hostile = hostile->json();
    if (r.error.empty() && !hostile->error().empty()) r.error = "hostile viewer: " + hostile->error();
  }
  if (!resource.empty()) {
    // End the session the WHEP way; a server that does not answer still gets reaped by RTCP timeout.
    if (resource.rfind("http", 0) != 0 && !resource.empty() && resource[0] != '/') resource = "/" + resource;
    if (resource.rfind("http://", 0) == 0) resource = splitUrl(resource).path;
    (void)http.Delete(resource);
  }
  gst_element_set_state(pipeline.get(), GST_STATE_NULL);

  if (r.error.empty()) {
    if (o.seconds > 0 && r.decoded == 0)
      r.error = "decoded no picture in " + std::to_string(o.seconds) + " s";
    else if (o.seconds == 0 && r.decoded < o.frames)
      r.error = "decoded " + std::to_string(r.decoded) + " of " + std::to_string(o.frames) + " pictures in " +
                std::to_string(o.timeoutSeconds) + " s";
    else if (o.seconds == 0 && r.unreadable > 0)
      r.error = std::to_string(r.unreadable) + " decoded pictures carried no readable timecode";
  }
  printResult(r, o);
  return r.error.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  gst_init(nullptr, nullptr);
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zerohop-whep-receive: %s\n", e.what());
    return 1;
  }
}
