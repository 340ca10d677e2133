#pragma once
// A recvonly GStreamer viewer (webrtcbin) offering H.264 and Opus, as a browser with a microphone-less
// page does, for tests of the sound track: it decodes the sound (opusdec, mono S16) and measures it (RMS,
// main frequency), parses the picture's access units, and counts RTP packets per track. Its audio section
// offers abs-capture-time (id kAudioAbsCaptureTimeId), whose values it keeps. With helpers that read the
// answer's sections. Thread-safety: test helper; counters are atomics or under its mutex.

#include <gst/gst.h>
#include <gst/rtp/gstrtpbuffer.h>
#define GST_USE_UNSTABLE_API
#include <gst/webrtc/webrtc.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "stream/rtp_extension_payloads.hpp"

namespace zerohop::loopback {

// A recvonly webrtcbin offering H.264 and Opus (video first, as browsers that add the video transceiver
// first do), decoding both; or, with offerVideo false, Opus alone (a page that asks for the sound only).
// offerPlayoutDelay: the video section offers the playout-delay extension, as browsers do.
class AudioVideoViewer {
 public:
  explicit AudioVideoViewer(bool offerVideo = true, bool offerPlayoutDelay = false) {
    pipeline_ = gst_pipeline_new("test-av-viewer");
    webrtc_ = gst_element_factory_make("webrtcbin", "recv");
    gst_bin_add(GST_BIN(pipeline_), webrtc_);
    gst_util_set_object_arg(G_OBJECT(webrtc_), "bundle-policy", "max-bundle");
    GstWebRTCICE* ice = nullptr;
    g_object_get(webrtc_, "ice-agent", &ice, nullptr);
    gboolean added = FALSE;
    g_signal_emit_by_name(ice, "add-local-ip-address", "127.0.0.1", &added);
    gst_object_unref(ice);
    for (const char* text :
         {"application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000,"
          "packetization-mode=(string)1,profile-level-id=(string)42e01f,rtcp-fb-nack-pli=(boolean)true",
          "application/"
          "x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000,encoding-params=(string)2,"
          "extmap-5=(string)http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time"}) {
      const bool video = std::string(text).find("media=video") != std::string::npos;
      if (!offerVideo && video) continue;
      std::string capsText = text;
      if (video && offerPlayoutDelay)
        capsText += ",extmap-3=(string)" + std::string(stream::kPlayoutDelayUri);
      GstCaps* caps = gst_caps_from_string(capsText.c_str());
      GstWebRTCRTPTransceiver* trans = nullptr;
      g_signal_emit_by_name(webrtc_, "add-transceiver", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_RECVONLY, caps, &trans);
      gst_caps_unref(caps);
      if (trans) gst_object_unref(trans);
    }
    ready_.store(true, std::memory_order_release);  // see self()
    g_signal_connect(webrtc_, "pad-added", G_CALLBACK(onPadAdded), this);
    gst_element_set_state(pipeline_, GST_STATE_PLAYING);
  }
  ~AudioVideoViewer() {
    gst_element_set_state(pipeline_, GST_STATE_NULL);
    { std::lock_guard lock(mutex_); }  // orders the probes' last run before the members go (as LoopbackViewer)
    gst_object_unref(pipeline_);
  }
  GstElement* webrtc() const { return webrtc_; }

  std::atomic<int> videoUnits{0}, videoKeyframes{0};  // H.264 access units h264parse made of what came
  std::atomic<int> audioPackets{0}, videoPackets{0};  // RTP packets out of webrtcbin, per track
  std::atomic<long> decodedSamples{0};
  static constexpr int kAudioAbsCaptureTimeId = 5;  // the audio section's a=extmap id for abs-capture-time
  /// The abs-capture-time of each audio packet that carried it (Unix ns), and the wall clock it came at.
  std::vector<std::pair<std::int64_t, std::int64_t>> audioCaptureTimes() {
    std::lock_guard lock(mutex_);
    return audioCaptureTimes_;
  }
  double rms() {
    std::lock_guard lock(mutex_);
    return squares_ > 0 && count_ > 0 ? std::sqrt(squares_ / static_cast<double>(count_)) : 0.0;
  }
  /// The decoded sound's main frequency (rising zero crossings a second of 48 kHz mono samples), past its
  /// first 200 ms (the decoder's start); 0 before any.
  double frequencyHz() {
    std::lock_guard lock(mutex_);
    return countedForFrequency_ > 0
               ? static_cast<double>(risingCrossings_) * 48'000.0 / static_cast<double>(countedForFrequency_)
               : 0.0;
  }

 private:
  // This viewer behind a callback on a GStreamer thread; the acquire makes the hand-off that GLib's
  // futex locks really order visible to ThreadSanitizer (as LoopbackViewer::self,
  // src/stream/glib_handoff.hpp).
  static AudioVideoViewer* self(gpointer data) {
    auto* viewer = static_cast<AudioVideoViewer*>(data);
    (void)viewer->ready_.load(std::memory_order_acquire);
    return viewer;
  }
  static void onPadAdded(GstElement*, GstPad* pad, gpointer data) {
    auto* self = AudioVideoViewer::self(data);
    if (GST_PAD_DIRECTION(pad) != GST_PAD_SRC) return;
    GstCaps* caps = gst_pad_get_current_caps(pad);
    if (!caps) caps = gst_pad_query_caps(pad, nullptr);
    const char* media = caps ? gst_structure_get_string(gst_caps_get_structure(caps, 0), "media") : nullptr;
    const bool audio = media && std::string(media) == "audio";
    if (caps) gst_caps_unref(caps);
    GstElement* bin = gst_parse_bin_from_description(
        audio ? "rtpopusdepay ! opusdec plc=true ! audioconvert ! audio/x-raw,format=S16LE,channels=1 ! fakesink name=out sync=false async=false"
              : "rtph264depay ! h264parse ! fakesink name=out sync=false async=false",
        TRUE, nullptr);
    gst_bin_add(GST_BIN(self->pipeline_), bin);
    gst_element_sync_state_with_parent(bin);
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, audio ? onAudioRtp : onVideoRtp, self, nullptr);
    GstPad* sink = gst_element_get_static_pad(bin, "sink");
    if (gst_pad_link(pad, sink) != GST_PAD_LINK_OK) ADD_FAILURE() << "gst_pad_link(webrtcbin src, decoder)";
    gst_object_unref(sink);
    GstElement* out = gst_bin_get_by_name(GST_BIN(bin), "out");
    GstPad* outPad = gst_element_get_static_pad(out, "sink");
    gst_pad_add_probe(outPad, GST_PAD_PROBE_TYPE_BUFFER, audio ? onPcm : onPicture, self, nullptr);
    gst_object_unref(outPad);
    gst_object_unref(out);
  }
  static GstPadProbeReturn onAudioRtp(GstPad*, GstPadProbeInfo* info, gpointer data) {
    auto* self = AudioVideoViewer::self(data);
    ++self->audioPackets;
    GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
    if (!gst_rtp_buffer_map(GST_PAD_PROBE_INFO_BUFFER(info), GST_MAP_READ, &rtp)) return GST_PAD_PROBE_OK;
    gpointer bytes = nullptr;
    guint size = 0;
    if (gst_rtp_buffer_get_extension_onebyte_header(&rtp, kAudioAbsCaptureTimeId, 0, &bytes, &size)) {
      if (auto a = stream::decodeAbsCaptureTime(static_cast<const std::uint8_t*>(bytes), size)) {
        const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
        std::lock_guard lock(self->mutex_);
        self->audioCaptureTimes_.emplace_back(stream::ntpToUnixNs(a->captureNtp), now);
      }
    }
    gst_rtp_buffer_unmap(&rtp);
    return GST_PAD_PROBE_OK;
  }
  static GstPadProbeReturn onVideoRtp(GstPad*, GstPadProbeInfo*, gpointer data) {
    ++AudioVideoViewer::self(data)->videoPackets;
    return GST_PAD_PROBE_OK;
  }
  static GstPadProbeReturn onPicture(GstPad*, GstPadProbeInfo* info, gpointer data) {
    auto* self = AudioVideoViewer::self(data);
    std::lock_guard lock(self->mutex_);
    ++self->videoUnits;
    if (!GST_BUFFER_FLAG_IS_SET(GST_PAD_PROBE_INFO_BUFFER(info), GST_BUFFER_FLAG_DELTA_UNIT)) ++self->videoKeyframes;
    return GST_PAD_PROBE_OK;
  }
  static GstPadProbeReturn onPcm(GstPad*, GstPadProbeInfo* info, gpointer data) {
    auto* self = AudioVideoViewer::self(data);
    GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
    GstMapInfo map;
    if (!gst_buffer_map(buffer, &map, GST_MAP_READ)) return GST_PAD_PROBE_OK;
    std::lock_guard lock(self->mutex_);
    const auto* s = reinterpret_cast<const std::int16_t*>(map.data);
    const std::size_t n = map.size / 2;
    for (std::size_t i = 0; i < n; ++i) {
      self->squares_ += static_cast<double>(s[i]) * s[i];
      if (self->count_ + i >= kFrequencySkip) {
        if (self->previous_ < 0 && s[i] >= 0) ++self->risingCrossings_;
        ++self->countedForFrequency_;
      }
      self->previous_ = s[i];
    }
    self->count_ += n;
    self->decodedSamples += static_cast<long>(n);
    gst_buffer_unmap(buffer, &map);
    return GST_PAD_PROBE_OK;
  }

  GstElement* pipeline_ = nullptr;
  GstElement* webrtc_ = nullptr;
  std::atomic<bool> ready_{false};  // set once the constructor's writes are done (see self())
  std::mutex mutex_;
  static constexpr std::size_t kFrequencySkip = 9'600;  // 200 ms at 48 kHz
  double squares_ = 0;
  std::size_t count_ = 0;
  std::int16_t previous_ = 0;
  std::size_t risingCrossings_ = 0, countedForFrequency_ = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>>
      audioCaptureTimes_;  // (abs-capture-time, arrival), Unix ns
};

// The stream ids of the answer's a=msid lines (a=msid:<stream> <track>, or a=ssrc:<n> msid:<stream> <track>).
inline std::set<std::string> msidStreams(const std::string& sdp) {
  std::set<std::string> out;
  for (const std::string key : {"a=msid:", " msid:"}) {
    for (std::size_t at = sdp.find(key); at != std::string::npos; at = sdp.find(key, at + 1)) {
      const std::size_t start = at + key.size();
      out.insert(sdp.substr(start, sdp.find_first_of(" \r\n", start) - start));
    }
  }
  return out;
}

// The m= line of the answer's `kind` section ("" when there is none).
inline std::string mLine(const std::string& sdp, const std::string& kind) {
  const std::size_t at = sdp.find("m=" + kind + " ");
  if (at == std::string::npos) return {};
  return sdp.substr(at, sdp.find_first_of("\r\n", at) - at);
}

}  // namespace zerohop::loopback
