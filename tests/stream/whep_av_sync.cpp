// zerohop-av-sync-receive: a WHEP viewer that measures audio against video (issue 35) from what it
// decodes, for `zerohop serve --source test:... --audio test`.
//
// The test camera paints its A/V marker block white in the frame exposed over each full second of the
// capture clock (src/core/av_marker_picture.hpp) and the test tone clicks at that same instant
// (src/audio/tone_source.hpp). This viewer offers H.264 and Opus to a WHEP endpoint with GStreamer's
// webrtcbin (not zerohop's stream code), decodes both (libavcodec for the picture, opusdec for the
// sound) and notes each marker frame's and each click's presentation time: the buffer PTS webrtcbin's
// rtpbin gives, in running time of the receiving pipeline, once it has lip-synced the two streams from
// their RTCP sender reports (RTP timestamps mapped to one NTP clock, rtcp-sync "always"), as a player
// renders them. A click is the first decoded sample above half of full scale (the tone's sine stays
// under a quarter); a marker frame the first whose block's mean luma crosses the middle. Each marker is
// paired with the click nearest it (within 400 ms); offset = click - marker (positive: audio late).
// Only events after webrtcbin reported a sender report for both streams (getStats remote-outbound-rtp)
// count; earlier ones are reported as "before_sync".
//
// The camera's own part: a frame's capture time is the end of its exposure, so the marker frame is
// stamped "exposure_phase_ms" (0 to one frame period, fixed for a run) after the marker instant, read
// from the frame's pixel timecode (sender and receiver share the machine's clocks); "offset_less_phase_ms"
// (offset + phase) is what the rest (encoders, RTP/RTCP, rtpbin) adds, 0 when they are exact.
//
// Prints one JSON object on stdout:
//   {"markers", "clicks", "matched", "before_sync", "offset_ms": {"p50", "p90", "min", "max"},
//    "abs_offset_ms": {"p50", "p90"}, "offsets_ms": [...], "exposure_phase_ms": {"p50"},
//    "offset_less_phase_ms": {"p50", "p90"}, "jitter_buffer_ms", "error"}
// Exit status: 0 when --markers pairs were matched; 1 otherwise ("error" says what fell short); 2 on
// bad arguments.
// Thread-safety: one main thread; the GStreamer callback only links pads.

#include <gst/app/gstappsink.h>
#include <httplib.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>

#include "core/av_marker_picture.hpp"
#include "whep_viewer_kit.hpp"
#include "zerohop/frame.hpp"
#include "zerohop/timecode.hpp"

namespace {

using namespace std::chrono_literals;
using namespace zerohop::whep_viewer;
using Clock = std::chrono::steady_clock;

constexpr int kSampleRate = 48'000;
constexpr std::int16_t kClickLevel = 16'000;         // half of full scale: the click is 32000, the sine 8200
constexpr std::int64_t kRefractoryNs = 300'000'000;  // one click (2 ms) is one event; clicks are 1 s apart
constexpr std::int64_t kPairWindowNs = 400'000'000;

struct Options {
  std::string url;  // http://HOST:PORT/whep
  int markers = 5;  // marker/click pairs wanted after sync
  double timeoutSeconds = 30;
  std::string iceAddress = "127.0.0.1";
  int jitterBufferMs = 200;  // webrtcbin's default, as a player would run it
  std::string eventsLog;     // optional: one CSV row per marker and click
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "%s\nusage: zerohop-av-sync-receive URL [--markers N] [--timeout S] [--ice-address IP] "
               "[--jitter-buffer-ms MS] [--events-log FILE]\n",
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
    if (a == "--markers")
      o.markers = std::atoi(value().c_str());
    else if (a == "--timeout")
      o.timeoutSeconds = std::atof(value().c_str());
    else if (a == "--ice-address")
      o.iceAddress = value();
    else if (a == "--jitter-buffer-ms")
      o.jitterBufferMs = std::atoi(value().c_str());
    else if (a == "--events-log")
      o.eventsLog = value();
    else if (a.rfind("--", 0) == 0)
      usage(("unknown option " + a).c_str());
    else
      o.url = a;
  }
  if (o.url.rfind("http://", 0) != 0) usage("URL must be http://HOST:PORT/PATH");
  if (o.markers <= 0) usage("--markers must be > 0");
  return o;
}

struct Sinks {
  GstElement* video = nullptr;
  GstElement* audio = nullptr;
};

// webrtcbin's pad-added: the video pad to rtph264depay ! h264parse ! appsink (byte-stream access units),
// the audio pad to rtpopusdepay ! opusdec ! audioconvert ! appsink (S16 mono, 48 kHz).
void onPadAdded(GstElement*, GstPad* pad, gpointer data) {
  if (GST_PAD_DIRECTION(pad) != GST_PAD_SRC) return;
  const auto* sinks = static_cast<const Sinks*>(data);
  GstCaps* caps = gst_pad_get_current_caps(pad);
  if (!caps) caps = gst_pad_query_caps(pad, nullptr);
  const char* media = caps ? gst_structure_get_string(gst_caps_get_structure(caps, 0), "media") : nullptr;
  const bool audio = media && std::string(media) == "audio";
  if (caps) gst_caps_unref(caps);
  GstElement* sink = audio ? sinks->audio : sinks->video;
  GstElement* pipeline = GST_ELEMENT(gst_element_get_parent(sink));
  GstElement* chain = gst_parse_bin_from_description(
      audio ? "rtpopusdepay ! opusdec plc=true ! audioconvert ! audioresample ! "
              "audio/x-raw,format=S16LE,channels=1,rate=48000"
            : "rtph264depay ! h264parse",
      TRUE, nullptr);
  gst_bin_add(GST_BIN(pipeline), chain);
  if (!gst_element_link(chain, sink))
    std::fprintf(stderr, "zerohop-av-sync-receive: linking the %s chain failed\n", media);
  gst_element_sync_state_with_parent(chain);
  GstPad* chainSink = gst_element_get_static_pad(chain, "sink");
  if (gst_pad_link(pad, chainSink) != GST_PAD_LINK_OK)
    std::fprintf(stderr, "zerohop-av-sync-receive: linking webrtcbin's %s pad failed\n", media ? media : "?");
  gst_object_unref(chainSink);
  gst_object_unref(pipeline);
}

// How many streams webrtcbin holds an RTCP sender report for (getStats' remote-outbound-rtp entries).
int streamsWithSenderReport(GstElement* webrtc) {
  GstPromise* p = gst_promise_new();
  g_signal_emit_by_name(webrtc, "get-stats", nullptr, p);
  int n = 0;
  if (gst_promise_wait(p) == GST_PROMISE_RESULT_REPLIED) {
    if (const GstStructure* stats = gst_promise_get_reply(p)) {
      gst_structure_foreach(
          stats,
          [](GQuark, const GValue* v, gpointer count) -> gboolean {
            if (!GST_VALUE_HOLDS_STRUCTURE(v)) return TRUE;
            GstWebRTCStatsType type{};
            if (gst_structure_get_enum(gst_value_get_structure(v), "type", GST_TYPE_WEBRTC_STATS_TYPE,
                                       reinterpret_cast<gint*>(&type)) &&
                type == GST_WEBRTC_STATS_REMOTE_OUTBOUND_RTP)
              ++*static_cast<int*>(count);
            return TRUE;
          },
          &n);
    }
  }
  gst_promise_unref(p);
  return n;
}

// The pipeline's running time now (the timeline buffer PTS are in).
std::int64_t runningTimeNs(GstElement* pipeline) {
  GstClock* clock = gst_element_get_clock(pipeline);
  if (!clock) return -1;
  const GstClockTime now = gst_clock_get_time(clock);
  gst_object_unref(clock);
  return static_cast<std::int64_t>(now - gst_element_get_base_time(pipeline));
}

struct Result {
  std::vector<std::int64_t> markersNs;  // marker frames' PTS, after sync
  std::vector<double> phasesMs;  // each marker frame's capture time after its marker instant (NaN: unread)
  std::vector<std::int64_t> clicksNs;  // clicks' PTS, after sync
  int beforeSync = 0;
  std::vector<double> offsetsMs;
  std::vector<double> senderMs;  // offset + phase: what the sending and the receiving side add
  std::string error;
};

void printResult(const Result& r, const Options& o) {
  std::vector<double> abs;
  for (double v : r.offsetsMs) abs.push_back(std::fabs(v));
  std::vector<double> phases;
  for (double v : r.phasesMs)
    if (!std::isnan(v)) phases.push_back(v);
  std::string list;
  for (double v : r.offsetsMs) {
    char text[32];
    std::snprintf(text, sizeof text, "%s%.1f", list.empty() ? "" : ", ", v);
    list += text;
  }
  std::printf(
      "{\"markers\": %zu, \"clicks\": %zu, \"matched\": %zu, \"before_sync\": %d, "
      "\"offset_ms\": {\"p50\": %.1f, \"p90\": %.1f, \"min\": %.1f, \"max\": %.1f}, "
      "\"abs_offset_ms\": {\"p50\": %.1f, \"p90\": %.1f}, \"offsets_ms\": [%s], "
      "\"exposure_phase_ms\": {\"p50\": %.1f}, \"offset_less_phase_ms\": {\"p50\": %.1f, \"p90\": %.1f}, "
      "\"jitter_buffer_ms\": %d, \"error\": \"%s\"}\n",
      r.markersNs.size(), r.clicksNs.size(), r.offsetsMs.size(), r.beforeSync, percentile(r.offsetsMs, 50),
      percentile(r.offsetsMs, 90), percentile(r.offsetsMs, 0), percentile(r.offsetsMs, 100),
      percentile(abs, 50), percentile(abs, 90), list.c_str(), percentile(phases, 50),
      percentile(r.senderMs, 50), percentile(r.senderMs, 90), o.jitterBufferMs, jsonEscape(r.error).c_str());
  std::fflush(stdout);
}

// Pairs each marker with the nearest click within kPairWindowNs: (marker index, click - marker in ms).
std::vector<std::pair<std::size_t, double>> pairOffsets(const std::vector<std::int64_t>& markers,
                                                        const std::vector<std::int64_t>& clicks) {
  std::vector<std::pair<std::size_t, double>> out;
  for (std::size_t i = 0; i < markers.size(); ++i) {
    const std::int64_t m = markers[i];
    std::optional<std::int64_t> best;
    for (std::int64_t c : clicks)
      if (std::llabs(c - m) < kPairWindowNs && (!best || std::llabs(c - m) < std::llabs(*best - m))) best = c;
    if (best) out.emplace_back(i, static_cast<double>(*best - m) / 1e6);
  }
  return out;
}

// CLOCK_MONOTONIC minus CLOCK_REALTIME now, ns: the sender's capture clock from the timecode's wall
// clock, meaningful because sender and receiver share the machine.
std::int64_t monotonicMinusRealtimeNs() {
  timespec mono{}, real{};
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  return (static_cast<std::int64_t>(mono.tv_sec) - real.tv_sec) * 1'000'000'000 +
         (mono.tv_nsec - real.tv_nsec);
}

int run(const Options& o) {
  Result r;
  for (const char* name : {"webrtcbin", "rtph264depay", "h264parse", "rtpopusdepay", "opusdec",
                           "audioconvert", "audioresample", "appsink"}) {
    GstElementFactory* f = gst_element_factory_find(name);
    if (!f) {
      r.error = std::string("GStreamer element ") + name + " not found (scripts/install-deps.sh)";
      printResult(r, o);
      return 1;
    }
    gst_object_unref(f);
  }
  VideoDecoder decoder(AV_CODEC_ID_H264);
  ElementPtr pipeline(gst_pipeline_new("av-sync-receive"));
  GstElement* webrtc = gst_element_factory_make("webrtcbin", "recv");
  Sinks sinks{gst_element_factory_make("appsink", "video"), gst_element_factory_make("appsink", "audio")};
  for (GstElement* s : {sinks.video, sinks.audio})
    g_object_set(s, "sync", FALSE, "async", FALSE, "max-buffers", 500u, "drop", FALSE, nullptr);
  GstCaps* units = gst_caps_from_string("video/x-h264,stream-format=byte-stream,alignment=au");
  g_object_set(sinks.video, "caps", units, nullptr);  // h264parse makes byte-stream access units
  gst_caps_unref(units);
  gst_bin_add_many(GST_BIN(pipeline.get()), webrtc, sinks.video, sinks.audio, nullptr);
  gst_util_set_object_arg(G_OBJECT(webrtc), "bundle-policy", "max-bundle");
  g_object_set(webrtc, "latency", static_cast<guint>(o.jitterBufferMs), nullptr);
  GstWebRTCICE* ice = nullptr;
  g_object_get(webrtc, "ice-agent", &ice, nullptr);
  if (ice) {
    gboolean added = FALSE;
    g_signal_emit_by_name(ice, "add-local-ip-address", o.iceAddress.c_str(), &added);
    gst_object_unref(ice);
  }
  for (const char* text :
       {"application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000,"
        "packetization-mode=(string)1,profile-level-id=(string)42e01f,rtcp-fb-nack-pli=(boolean)true",
        "application/"
        "x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000,encoding-params=(string)2"}) {
    GstCaps* caps = gst_caps_from_string(text);
    GstWebRTCRTPTransceiver* trans = nullptr;
    g_signal_emit_by_name(webrtc, "add-transceiver", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_RECVONLY, caps,
                          &trans);
    gst_caps_unref(caps);
    if (trans) gst_object_unref(trans);
  }
  g_signal_connect(webrtc, "pad-added", G_CALLBACK(onPadAdded), &sinks);
  gst_element_set_state(pipeline.get(), GST_STATE_PLAYING);

  const std::string offer = localOffer(webrtc);
  const HttpUrl url = splitUrl(o.url);
  httplib::Client http(url.host, url.port);
  http.set_read_timeout(10, 0);
  std::string resource;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(o.timeoutSeconds));
  if (offer.find("m=video") == std::string::npos || offer.find("m=audio") == std::string::npos) {
    r.error = "webrtcbin made no offer with video and audio";
  } else if (auto res = http.Post(url.path, offer, "application/sdp"); !res) {
    r.error = "POST " + o.url + ": " + httplib::to_string(res.error());
  } else if (res->status != 201) {
    r.error = "POST " + o.url + ": HTTP " + std::to_string(res->status) + " " + res->body.substr(0, 200);
  } else if (res->body.find("OPUS/48000") == std::string::npos) {
    r.error = "the answer has no Opus audio (is serve running with --audio test?)";
  } else if (!applyAnswer(webrtc, res->body)) {
    r.error = "webrtcbin refused the answer";
  } else {
    resource = res->get_header_value("Location");
  }

  std::ofstream log;
  if (!o.eventsLog.empty()) {
    log.open(o.eventsLog);
    log << "kind,pts_ns,synced,value\n";
  }
  std::optional<std::int64_t> syncedFromNs;  // running time once both streams had a sender report
  auto nextStatsPoll = Clock::now();
  bool markerShown = true;  // the first frame shown is not a marker's start
  std::int64_t lastClickNs = -kRefractoryNs;
  int wrongFormat = 0, decodeErrors = 0;
  while (r.error.empty() && Clock::now() < deadline &&
         pairOffsets(r.markersNs, r.clicksNs).size() < static_cast<std::size_t>(o.markers)) {
    if (!syncedFromNs && Clock::now() >= nextStatsPoll) {
      if (streamsWithSenderReport(webrtc) >= 2) syncedFromNs = runningTimeNs(pipeline.get());
      nextStatsPoll = Clock::now() + 100ms;
    }
    const auto note = [&](const char* kind, std::int64_t pts, double value) {
      const bool synced = syncedFromNs && pts >= *syncedFromNs;
      if (!synced) ++r.beforeSync;
      if (log) log << kind << ',' << pts << ',' << synced << ',' << value << '\n';
      return synced;
    };
    bool pulled = false;
    if (GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sinks.video), 5 * GST_MSECOND)) {
      pulled = true;
      GstBuffer* buf = gst_sample_get_buffer(sample);
      GstMapInfo map;
      if (buf && GST_BUFFER_PTS_IS_VALID(buf) && gst_buffer_map(buf, &map, GST_MAP_READ)) {
        const std::string err = decoder.decode(
            map.data, map.size,
            [&](const AVFrame& f) {
              if (f.format != AV_PIX_FMT_YUV420P && f.format != AV_PIX_FMT_YUVJ420P) {
                ++wrongFormat;
                return;
              }
              zerohop::Frame frame;
              frame.format = zerohop::PixelFormat::kI420;
              frame.width = static_cast<std::uint32_t>(f.width);
              frame.height = static_cast<std::uint32_t>(f.height);
              frame.planeCount = 3;
              for (int i = 0; i < 3; ++i) {
                frame.data[i] = f.data[i];
                frame.pitch[i] = static_cast<std::uint32_t>(f.linesize[i]);
              }
              const auto luma = zerohop::avMarkerLuma(frame);
              if (!luma) return;
              const bool shown = *luma > zerohop::kAvMarkerLumaThreshold;
              if (shown && !markerShown && note("marker", f.pts, *luma)) {
                r.markersNs.push_back(f.pts);
                // The frame was captured (its exposure ended) this long after the marker instant, the
                // nearest whole second of the capture clock: the camera's part of click - marker.
                double phase = std::nan("");
                if (const auto tc = zerohop::readTimecode(frame)) {
                  const std::int64_t captureNs =
                      static_cast<std::int64_t>(tc->wallClockMs) * 1'000'000 + monotonicMinusRealtimeNs();
                  const std::int64_t markerNs = (captureNs + 500'000'000) / 1'000'000'000 * 1'000'000'000;
                  phase = static_cast<double>(captureNs - markerNs) / 1e6;
                }
                r.phasesMs.push_back(phase);
              }
              markerShown = shown;
            },
            static_cast<std::int64_t>(GST_BUFFER_PTS(buf)));
        if (!err.empty() && ++decodeErrors <= 3)
          std::fprintf(stderr, "zerohop-av-sync-receive: %s\n", err.c_str());
        gst_buffer_unmap(buf, &map);
      }
      gst_sample_unref(sample);
    }
    if (GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sinks.audio), 5 * GST_MSECOND)) {
      pulled = true;
      GstBuffer* buf = gst_sample_get_buffer(sample);
      GstMapInfo map;
      if (buf && GST_BUFFER_PTS_IS_VALID(buf) && gst_buffer_map(buf, &map, GST_MAP_READ)) {
        const auto* s = reinterpret_cast<const std::int16_t*>(map.data);
        const auto pts = static_cast<std::int64_t>(GST_BUFFER_PTS(buf));
        for (std::size_t i = 0; i < map.size / 2; ++i) {
          if (std::abs(s[i]) < kClickLevel) continue;
          const std::int64_t at = pts + static_cast<std::int64_t>(i) * 1'000'000'000 / kSampleRate;
          if (at - lastClickNs < kRefractoryNs) continue;
          lastClickNs = at;
          if (note("click", at, s[i])) r.clicksNs.push_back(at);
        }
        gst_buffer_unmap(buf, &map);
      }
      gst_sample_unref(sample);
    }
    if (!pulled) {
      if (std::string e = busError(pipeline.get()); !e.empty()) r.error = "pipeline error from " + e;
    }
  }
  if (!resource.empty()) {
    if (resource.rfind("http://", 0) == 0) resource = splitUrl(resource).path;
    if (!resource.empty() && resource[0] != '/') resource = "/" + resource;
    (void)http.Delete(resource);
  }
  gst_element_set_state(pipeline.get(), GST_STATE_NULL);

  for (const auto& [marker, offset] : pairOffsets(r.markersNs, r.clicksNs)) {
    r.offsetsMs.push_back(offset);
    if (!std::isnan(r.phasesMs[marker])) r.senderMs.push_back(offset + r.phasesMs[marker]);
  }
  if (r.error.empty() && r.offsetsMs.size() < static_cast<std::size_t>(o.markers)) {
    r.error = "matched " + std::to_string(r.offsetsMs.size()) + " of " + std::to_string(o.markers) +
              " marker/click pairs in " + std::to_string(o.timeoutSeconds) + " s (" +
              std::to_string(r.markersNs.size()) + " marker frames, " + std::to_string(r.clicksNs.size()) +
              " clicks after sync" + (syncedFromNs ? "" : "; no sender report for both streams") +
              (wrongFormat ? "; pictures not yuv420p" : "") + ")";
  }
  printResult(r, o);
  return r.error.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  gst_init(nullptr, nullptr);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zerohop-av-sync-receive: %s\n", e.what());
    return 1;
  }
}
