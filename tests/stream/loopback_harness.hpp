#pragma once
// Test support for the loopback WebRTC tests: real H.264 test units, a GStreamer viewer (recvonly
// webrtcbin) that negotiates with a StreamServer over WHEP and counts what it receives, a publisher
// that feeds the server at 30 fps, and the fixture that wires them together.
// Thread-safety: test helpers; the viewer's counters are atomics read from the test thread.


#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/rtp/gstrtpbuffer.h>
#include <gst/sdp/sdp.h>
#define GST_USE_UNSTABLE_API
#include <gst/webrtc/webrtc.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "stream/rtp_extension_payloads.hpp"
#include "webrtcbin_sdp.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/stream_server.hpp"
#include "zerohop/webrtc_session.hpp"

namespace zerohop::loopback {

using namespace std::chrono_literals;

inline bool haveElements(std::initializer_list<const char*> names, std::string& missing) {
  for (const char* n : names) {
    GstElementFactory* f = gst_element_factory_find(n);
    if (!f) {
      missing = n;
      return false;
    }
    gst_object_unref(f);
  }
  return true;
}

/// A sink's setup whose keyframe requests (of every encode) all call `asked`.
inline SinkSetup keyframesTo(std::function<void()> asked) {
  SinkSetup setup;
  setup.requestKeyframe = std::move(asked);
  return setup;
}

// 320x240 (or `width` x `height`) Constrained Baseline AUs from GStreamer's own x264enc (or, with kVP8,
// VP8 frames from vp8enc); a keyframe every 30 frames.
inline std::vector<EncodedUnitPtr> encodeTestUnits(int frames, Codec codec = Codec::kH264, int width = 320,
                                                   int height = 240) {
  const std::string encoder =
      codec == Codec::kVP8
          ? "! vp8enc deadline=1 cpu-used=8 keyframe-max-dist=30 lag-in-frames=0 ! video/x-vp8 "
          : "! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=30 bframes=0 "
            "! video/x-h264,profile=constrained-baseline,stream-format=byte-stream,alignment=au ";
  const std::string desc =
      "videotestsrc pattern=ball num-buffers=" + std::to_string(frames) +
      " ! video/x-raw,format=I420,width=" + std::to_string(width) + ",height=" + std::to_string(height) +
      ",framerate=30/1 " + encoder + "! appsink name=out sync=false";
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
  if (!pipeline) {
    std::string what = err ? err->message : "?";
    g_clear_error(&err);
    throw std::runtime_error("gst_parse_launch: " + what);
  }
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  std::vector<EncodedUnitPtr> units;
  while (GstSample* sample = gst_app_sink_pull_sample(GST_APP_SINK(sink))) {
    GstBuffer* buf = gst_sample_get_buffer(sample);
    GstMapInfo map;
    if (gst_buffer_map(buf, &map, GST_MAP_READ)) {
      auto u = std::make_shared<EncodedUnit>();
      u->codec = codec;
      u->width = static_cast<std::uint32_t>(width);
      u->height = static_cast<std::uint32_t>(height);
      u->bytes.assign(map.data, map.data + map.size);
      u->keyframe = !GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DELTA_UNIT);
      u->sequence = units.size();
      units.push_back(std::move(u));
      gst_buffer_unmap(buf, &map);
    }
    gst_sample_unref(sample);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return units;
}

// What the RTP header extensions of the received packets said (ids as LoopbackViewer offered them).
struct ReceivedExtensions {
  static constexpr int kPlayoutDelayId = 3, kAbsCaptureTimeId = 7, kTwccId = 12;  // not Chromium's: ours must follow
  int packets = 0;
  std::vector<stream::PlayoutDelay> playoutDelays;
  std::vector<std::int64_t> captureUnixNs;      // abs-capture-time, one per packet that had it
  std::vector<std::uint32_t> captureRtpTimes;   // the RTP timestamp of those packets
  std::vector<std::int64_t> captureOffsets;     // their clock offsets (Q32.32)
  std::vector<std::uint16_t> twccSeqnums;
};

// A recvonly WebRTC peer that depayloads and parses what it receives and counts access units.
// `offerExtensions`: it also offers playout-delay, abs-capture-time and transport-wide-cc (ids in
// ReceivedExtensions) and reads them from every RTP packet it receives. `codec` kVP8: it offers VP8
// only (as Firefox ESR without OpenH264 offers no H.264), and decodes what it receives with vp8dec
// (decodedFrames, decodedWidth).
class LoopbackViewer {
 public:
  explicit LoopbackViewer(bool offerExtensions = false, Codec codec = Codec::kH264) : codec_(codec) {
    pipeline_ = gst_pipeline_new("test-viewer");
    webrtc_ = gst_element_factory_make("webrtcbin", "recv");
    gst_bin_add(GST_BIN(pipeline_), webrtc_);
    gst_util_set_object_arg(G_OBJECT(webrtc_), "bundle-policy", "max-bundle");
    GstWebRTCICE* ice = nullptr;
    g_object_get(webrtc_, "ice-agent", &ice, nullptr);
    gboolean added = FALSE;
    g_signal_emit_by_name(ice, "add-local-ip-address", "127.0.0.1", &added);
    gst_object_unref(ice);
    std::string capsText =
        codec == Codec::kVP8
            ? "application/"
              "x-rtp,media=video,encoding-name=VP8,payload=96,clock-rate=90000,rtcp-fb-nack-pli=(boolean)true"
            : "application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000,"
              "packetization-mode=(string)1,profile-level-id=(string)42e01f,rtcp-fb-nack-pli=(boolean)true";
    if (offerExtensions) {
      using R = ReceivedExtensions;
      capsText += ",rtcp-fb-transport-cc=(boolean)true,extmap-" + std::to_string(R::kPlayoutDelayId) + "=(string)" +
                  std::string(stream::kPlayoutDelayUri) + ",extmap-" + std::to_string(R::kAbsCaptureTimeId) +
                  "=(string)" + std::string(stream::kAbsCaptureTimeUri) + ",extmap-" + std::to_string(R::kTwccId) +
                  "=(string)" + std::string(stream::kTransportWideCcUri);
    }
    GstCaps* caps = gst_caps_from_string(capsText.c_str());
    GstWebRTCRTPTransceiver* trans = nullptr;
    g_signal_emit_by_name(webrtc_, "add-transceiver", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_RECVONLY, caps,
                          &trans);
    gst_caps_unref(caps);
    if (trans) gst_object_unref(trans);
    ready_.store(true, std::memory_order_release);  // see self()
    g_signal_connect(webrtc_, "pad-added", G_CALLBACK(onPadAdded), this);
    gst_element_set_state(pipeline_, GST_STATE_PLAYING);
  }
  ~LoopbackViewer() { close(); }

  /// Asks for a data channel before the offer, so the offer has an m=application section (as a viewer
  /// that tries to make the server open data channels). False when webrtcbin made none.
  bool addDataChannel() {
    GstWebRTCDataChannel* channel = nullptr;
    g_signal_emit_by_name(webrtc_, "create-data-channel", "probe", nullptr, &channel);
    channel_ = channel;  // our reference, released in close()
    return channel != nullptr;
  }
  /// The data channel's ready-state (addDataChannel()); CLOSED when there is none.
  GstWebRTCDataChannelState dataChannelState() const {
    GstWebRTCDataChannelState state = GST_WEBRTC_DATA_CHANNEL_STATE_CLOSED;
    if (channel_) g_object_get(channel_, "ready-state", &state, nullptr);
    return state;
  }

  std::string createOffer() { return webrtcbin_sdp::localOffer(webrtc_); }

  bool applyAnswer(const std::string& answer) { return webrtcbin_sdp::applyAnswer(webrtc_, answer); }

  /// Asks the sender for a keyframe the way a decoder does: an upstream GstForceKeyUnit event, which
  /// the receiving RTP session turns into RTCP PLI. False before media arrived.
  bool sendPictureLossIndication() {
    GstPad* pad = sinkPad_.load();
    if (!pad) return false;
    GstStructure* s =
        gst_structure_new("GstForceKeyUnit", "running-time", GST_TYPE_CLOCK_TIME, GST_CLOCK_TIME_NONE,
                          "all-headers", G_TYPE_BOOLEAN, TRUE, "count", G_TYPE_UINT, 0u, nullptr);
    return gst_pad_push_event(pad,
                              gst_event_new_custom(GST_EVENT_CUSTOM_UPSTREAM, s));  // upstream, to the peer
  }

  /// From now on, one RTP packet in `n` is lost before this viewer's RTP session sees it (its receiver
  /// reports and transport-cc feedback tell the sender); 0: none. False when webrtcbin's rtpbin has no
  /// receiving pad yet (call it once the answer is applied).
  bool loseOneIn(int n) {
    loseOneIn_.store(n);
    if (lossProbe_) return true;
    GstElement* rtpbin = gst_bin_get_by_name(GST_BIN(webrtc_), "rtpbin");
    if (!rtpbin) return false;
    GstPad* pad = gst_element_get_static_pad(rtpbin, "recv_rtp_sink_0");
    gst_object_unref(rtpbin);
    if (!pad) return false;
    gst_pad_add_probe(pad, static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST),
                      onIncomingRtp, this, nullptr);
    gst_object_unref(pad);
    lossProbe_ = true;
    return true;
  }

  /// Vanishes without DELETE: the pipeline stops, nothing is said to the server.
  void close() {
    if (GstPad* pad = sinkPad_.exchange(nullptr)) gst_object_unref(pad);
    if (!pipeline_) return;
    gst_element_set_state(pipeline_, GST_STATE_NULL);
    // The streaming threads are stopped now, but through GLib's futex locks, which ThreadSanitizer
    // cannot see: taking the probe's lock orders its last call before whatever frees this viewer.
    { std::lock_guard lock(probeMutex_); }
    if (channel_) gst_object_unref(std::exchange(channel_, nullptr));
    gst_object_unref(pipeline_);
    pipeline_ = nullptr;
  }

  /// Its webrtcbin (borrowed), for tests that reach into its transport.
  GstElement* webrtcbin() const { return webrtc_; }

  ReceivedExtensions extensions() {
    std::lock_guard lock(probeMutex_);
    return extensions_;
  }

  /// One unit as it left the depayloader (H.264: h264parse): when, and its picture width then.
  struct ReceivedUnit {
    std::chrono::steady_clock::time_point at;
    int width = 0;
  };
  /// Every unit received so far, in order.
  std::vector<ReceivedUnit> unitLog() {
    std::lock_guard lock(probeMutex_);
    return unitLog_;
  }

  std::atomic<int> receivedUnits{0};
  std::atomic<int> width{0};
  std::atomic<int> keyframes{0};
  std::atomic<bool> firstWasKeyframe{false};
  std::atomic<int> decodedFrames{0};  // kVP8: pictures vp8dec produced
  std::atomic<int> decodedWidth{0};
  std::string location;  // the WHEP session's Location, once connected
  std::vector<std::string> links;  // the Link headers of its 201
  std::string answerSdp;  // the WHEP answer it applied

 private:
  // This viewer behind a callback on a GStreamer thread; the acquire makes the hand-off that GLib's
  // futex locks really order visible to ThreadSanitizer (src/stream/glib_handoff.hpp).
  static LoopbackViewer* self(gpointer data) {
    auto* viewer = static_cast<LoopbackViewer*>(data);
    (void)viewer->ready_.load(std::memory_order_acquire);
    return viewer;
  }
  static void onPadAdded(GstElement*, GstPad* pad, gpointer data) {
    auto* self = LoopbackViewer::self(data);
    if (GST_PAD_DIRECTION(pad) != GST_PAD_SRC) return;
    const bool vp8 = self->codec_ == Codec::kVP8;
    GstElement* bin = gst_parse_bin_from_description(
        vp8 ? "rtpvp8depay ! identity name=fs ! vp8dec ! fakesink name=decoded sync=false"
            : "rtph264depay ! h264parse ! fakesink name=fs sync=false",
        TRUE, nullptr);
    gst_bin_add(GST_BIN(self->pipeline_), bin);
    gst_element_sync_state_with_parent(bin);
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, onRtp, self, nullptr);
    GstPad* sink = gst_element_get_static_pad(bin, "sink");
    const GstPadLinkReturn linked = gst_pad_link(pad, sink);
    if (linked != GST_PAD_LINK_OK) ADD_FAILURE() << "gst_pad_link(webrtcbin src, decoder) = " << linked;
    gst_object_unref(sink);
    GstElement* fs = gst_bin_get_by_name(GST_BIN(bin), "fs");
    GstPad* fsPad = gst_element_get_static_pad(fs, "sink");
    gst_pad_add_probe(fsPad, GST_PAD_PROBE_TYPE_BUFFER, onUnit, self, nullptr);
    self->sinkPad_.store(fsPad);  // keeps the reference; released in close()
    gst_object_unref(fs);
    if (GstElement* decoded = gst_bin_get_by_name(GST_BIN(bin), "decoded")) {
      GstPad* decodedPad = gst_element_get_static_pad(decoded, "sink");
      gst_pad_add_probe(decodedPad, GST_PAD_PROBE_TYPE_BUFFER, onDecoded, self, nullptr);
      gst_object_unref(decodedPad);
      gst_object_unref(decoded);
    }
  }
  static GstPadProbeReturn onUnit(GstPad* pad, GstPadProbeInfo* info, gpointer data) {
    auto* self = LoopbackViewer::self(data);
    std::lock_guard lock(self->probeMutex_);  // see close()
    if (GstCaps* caps = gst_pad_get_current_caps(pad)) {
      int w = 0;
      gst_structure_get_int(gst_caps_get_structure(caps, 0), "width", &w);
      self->width = w;
      gst_caps_unref(caps);
    }
    const bool key = !GST_BUFFER_FLAG_IS_SET(GST_PAD_PROBE_INFO_BUFFER(info), GST_BUFFER_FLAG_DELTA_UNIT);
    self->unitLog_.push_back({std::chrono::steady_clock::now(), self->width.load()});
    if (self->receivedUnits.fetch_add(1) == 0) self->firstWasKeyframe = key;
    if (key) ++self->keyframes;
    return GST_PAD_PROBE_OK;
  }

  static GstPadProbeReturn onDecoded(GstPad* pad, GstPadProbeInfo*, gpointer data) {
    auto* self = LoopbackViewer::self(data);
    std::lock_guard lock(self->probeMutex_);  // see close()
    if (GstCaps* caps = gst_pad_get_current_caps(pad)) {
      int w = 0;
      gst_structure_get_int(gst_caps_get_structure(caps, 0), "width", &w);
      self->decodedWidth = w;
      gst_caps_unref(caps);
    }
    ++self->decodedFrames;
    return GST_PAD_PROBE_OK;
  }

  static GstPadProbeReturn onRtp(GstPad*, GstPadProbeInfo* info, gpointer data) {
    auto* self = LoopbackViewer::self(data);
    GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
    if (!gst_rtp_buffer_map(GST_PAD_PROBE_INFO_BUFFER(info), GST_MAP_READ, &rtp)) return GST_PAD_PROBE_OK;
    std::lock_guard lock(self->probeMutex_);
    ReceivedExtensions& e = self->extensions_;
    ++e.packets;
    gpointer data8 = nullptr;
    guint size = 0;
    using R = ReceivedExtensions;
    if (gst_rtp_buffer_get_extension_onebyte_header(&rtp, R::kPlayoutDelayId, 0, &data8, &size)) {
      if (auto d = stream::decodePlayoutDelay(static_cast<const std::uint8_t*>(data8), size)) e.playoutDelays.push_back(*d);
    }
    if (gst_rtp_buffer_get_extension_onebyte_header(&rtp, R::kAbsCaptureTimeId, 0, &data8, &size)) {
      if (auto a = stream::decodeAbsCaptureTime(static_cast<const std::uint8_t*>(data8), size)) {
        e.captureUnixNs.push_back(stream::ntpToUnixNs(a->captureNtp));
        e.captureRtpTimes.push_back(gst_rtp_buffer_get_timestamp(&rtp));
        e.captureOffsets.push_back(a->clockOffsetQ32.value_or(-1));
      }
    }
    if (gst_rtp_buffer_get_extension_onebyte_header(&rtp, R::kTwccId, 0, &data8, &size) && size == 2) {
      const auto* b = static_cast<const std::uint8_t*>(data8);
      e.twccSeqnums.push_back(static_cast<std::uint16_t>((b[0] << 8) | b[1]));
    }
    gst_rtp_buffer_unmap(&rtp);
    return GST_PAD_PROBE_OK;
  }

  static GstPadProbeReturn onIncomingRtp(GstPad*, GstPadProbeInfo*, gpointer data) {
    auto* self = LoopbackViewer::self(data);
    const int n = self->loseOneIn_.load();
    if (n <= 0) return GST_PAD_PROBE_OK;
    return self->incoming_.fetch_add(1) % n == 0 ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK;
  }

  const Codec codec_;
  std::atomic<int> loseOneIn_{0};       // loseOneIn()
  std::atomic<unsigned> incoming_{0};   // RTP buffers (lists) seen by the loss probe
  bool lossProbe_ = false;              // the test thread's
  GstElement* pipeline_ = nullptr;
  GstElement* webrtc_ = nullptr;
  GstWebRTCDataChannel* channel_ = nullptr;  // addDataChannel()
  ReceivedExtensions extensions_;  // under probeMutex_
  std::vector<ReceivedUnit> unitLog_;  // under probeMutex_
  std::atomic<GstPad*> sinkPad_{nullptr};
  std::atomic<bool> ready_{false};
  std::mutex probeMutex_;
};

// Publishes `units` round-robin at 30 fps to `server`, jumping to the next keyframe when the encoder was
// asked for one (like the real encoder), while `more()` says so. `stamp`, when set, makes the unit that
// is published from the one that is next (e.g. a copy with a capture time).
class Publisher {
 public:
  // Feeds the server's unnamed stream. Its requester stays attached: the server (with every session
  // that may call it) goes first.
  Publisher(StreamServer& server, const std::vector<EncodedUnitPtr>& units)
      : stream_(server.unnamedStream()), units_(units) {
    stream_->attach(keyframesTo([this] {
      ++keyframeRequests;
      idrWanted_ = true;  // like the encoder: the next unit published is an IDR
    }));
  }
  template <typename More>
  void publishWhile(More more) {
    while (more()) {
      if (idrWanted_.exchange(false)) {
        do next_ = (next_ + 1) % units_.size();
        while (!units_[next_]->keyframe);
      }
      stream_->deliver(stamp ? stamp(units_[next_]) : units_[next_]);
      next_ = (next_ + 1) % units_.size();
      std::this_thread::sleep_for(33ms);
    }
  }
  std::atomic<int> keyframeRequests{0};
  std::function<EncodedUnitPtr(const EncodedUnitPtr&)> stamp;

 private:
  std::shared_ptr<WhepStream> stream_;
  const std::vector<EncodedUnitPtr>& units_;
  std::atomic<bool> idrWanted_{false};
  std::size_t next_ = 0;
};

/// The GStreamer element the loopback viewer needs that is not installed, or "".
inline std::string missingLoopbackElement() {
  gst_init(nullptr, nullptr);
  std::string missing;
  haveElements({"webrtcbin", "x264enc", "h264parse", "rtph264depay", "videotestsrc"}, missing);
  return missing;
}

/// WHEP from `viewer` to `server`: true when the server answered 201 and the viewer took the answer.
inline ::testing::AssertionResult connectOverWhep(LoopbackViewer& viewer, const StreamServer& server,
                                           const std::string& path = "/whep") {
  const std::string offer = viewer.createOffer();
  if (offer.find("m=video") == std::string::npos) return ::testing::AssertionFailure() << "offer: " << offer;
  httplib::Client cli("127.0.0.1", server.port());
  cli.set_read_timeout(10, 0);
  auto r = cli.Post(path, offer, "application/sdp");
  if (!r) return ::testing::AssertionFailure() << httplib::to_string(r.error());
  if (r->status != 201) return ::testing::AssertionFailure() << r->status << " " << r->body;
  if (!viewer.applyAnswer(r->body)) return ::testing::AssertionFailure() << "answer refused: " << r->body;
  viewer.location = r->get_header_value("Location");
  for (std::size_t i = 0; i < r->get_header_value_count("Link"); ++i) viewer.links.push_back(r->get_header_value("Link", i));
  viewer.answerSdp = r->body;
  return ::testing::AssertionSuccess();
}

// A StreamServer on loopback publishing 3 s of test units at 30 fps, and a GStreamer viewer that has
// negotiated with it over WHEP.
// A StreamServer on a free port with a Publisher of the 90 test units, and a LoopbackViewer connected
// to it over WHEP once the test calls start() with its StreamConfig (and whether the viewer offers the
// low-latency header extensions).
class LoopbackServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string missing = missingLoopbackElement(); !missing.empty())
      GTEST_SKIP() << "GStreamer element " << missing << " is not installed (scripts/install-deps.sh)";
    units_ = encodeTestUnits(90);
    ASSERT_EQ(units_.size(), 90u);
    ASSERT_TRUE(units_[0]->keyframe);
  }
  void start(StreamConfig config, bool offerExtensions = false, bool offerDataChannel = false) {
    config.port = 0;
    server_ = std::make_unique<StreamServer>(config);
    publisher_ = std::make_unique<Publisher>(*server_, units_);
    viewer_ = std::make_unique<LoopbackViewer>(offerExtensions);
    if (offerDataChannel) {
      ASSERT_TRUE(viewer_->addDataChannel());
    }
    ASSERT_TRUE(connectOverWhep(*viewer_, *server_));
  }
  // Publishes until the viewer received `units` units (at most 15 s); `out`: the header extensions of
  // the packets it received, more than `units` of them.
  void publishUntilReceived(int units, ReceivedExtensions& out) {
    const auto deadline = std::chrono::steady_clock::now() + 15s;
    publisher_->publishWhile(
        [&] { return viewer_->receivedUnits < units && std::chrono::steady_clock::now() < deadline; });
    ASSERT_GE(viewer_->receivedUnits.load(), units);
    out = viewer_->extensions();
    ASSERT_GT(out.packets, units);
  }
  // The server (and every session that may still call the keyframe handler) goes before the publisher.
  void TearDown() override {
    viewer_.reset();
    server_.reset();
  }

  std::vector<EncodedUnitPtr> units_;
  std::unique_ptr<StreamServer> server_;
  std::unique_ptr<Publisher> publisher_;
  std::unique_ptr<LoopbackViewer> viewer_;  // destroyed first
};

// The same, started with the default StreamConfig and a plain viewer before each test.
class LoopbackReceive : public LoopbackServerTest {
 protected:
  void SetUp() override {
    LoopbackServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    start(StreamConfig{});
  }
};

}  // namespace zerohop::loopback
