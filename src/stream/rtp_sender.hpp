#pragma once
// RtpSender: the one encoded stream as plain RTP H.264 over UDP, with RTCP both ways, for an SFU
// that ingests RTP (a Janus streaming-plugin RTP mountpoint, `serve --janus`), and the sound beside it
// when the receiver takes it (RtpTarget::audioPort).
//
//   pictures: appsrc -> rtph264pay -> rtpbin's RTP session 0 -> udpsink HOST:rtpPort
//             its RTCP (sender reports) -> udpsink HOST:rtcpPort, sent from the local RTCP socket;
//             udpsrc on that same socket -> rtpbin: the receiver's RTCP (RR, PLI, FIR)
//   sound, when the target has an audio port: appsrc -> rtpopuspay -> rtpbin's RTP session 1 ->
//             udpsink HOST:audioPort; its sender reports -> udpsink HOST:audioRtcpPort
// Both sessions are stamped from the one capture clock (the pipeline runs on CLOCK_MONOTONIC and each
// unit's ptsNs), so their sender reports let a receiver lip-sync them.
// RTCP leaves from the socket it is received on, so Janus (which answers to wherever RTCP came from)
// sends its PLI/FIR back to us; rtpbin turns them into an upstream GstForceKeyUnit event, caught on
// the appsrc pad and passed to the keyframe handler. UDP has no session: the sender keeps sending
// whether or not the receiver is up, and a restarted receiver gets the stream back at the next
// keyframe (it asks for one).
// Overflow policy: as a WHEP viewer, nothing until a keyframe; more than kMaxQueuedUnits waiting in
// the appsrc drops units until the next keyframe and asks for one.
// Thread-safety: thread-safe (push() from any thread). The destructor stops the pipeline; it must not
// run on one of its GStreamer threads.

#include <gst/gst.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "stream/gst_handles.hpp"
#include "stream/janus_target.hpp"
#include "stream/rtp_appsrc_feed.hpp"
#include "zerohop/encoded_unit.hpp"

namespace zerohop::stream {

class RtpSender {
 public:
  static constexpr unsigned kMaxQueuedUnits = 8;

  /// Builds the pipeline and brings it to PLAYING. Throws Error(kUnavailable) when an element is
  /// missing or the pipeline does not start, Error(kInvalidArgument) when the host does not resolve.
  RtpSender(RtpTarget target, std::function<void()> onKeyframeRequest);
  ~RtpSender();
  RtpSender(const RtpSender&) = delete;
  RtpSender& operator=(const RtpSender&) = delete;

  void push(const EncodedUnitPtr& unit);
  /// One Opus packet (ptsNs on the pictures' clock) to the audio port; ignored without one.
  void pushAudio(const EncodedUnitPtr& opusPacket);
  bool takesSound() const noexcept { return soundFeed_ != nullptr; }

  /// PLI/FIR (and "fell behind") keyframe requests so far.
  std::uint64_t keyframeRequests() const;
  /// The local UDP port RTCP is sent from and received on.
  std::uint16_t rtcpLocalPort() const { return rtcpLocalPort_; }

 private:
  static constexpr unsigned kMaxQueuedSound = 50;  // 500 ms of 10 ms packets, a second of 20 ms
  static GstPadProbeReturn onUpstreamEvent(GstPad* pad, GstPadProbeInfo* info, gpointer self);
  void addSound(GstElement* pipeline, GstElement* rtpbin, const std::string& address);
  void requestKeyframe();

  const RtpTarget target_;
  const std::function<void()> onKeyframeRequest_;
  GstPtr<GstElement> pipeline_;
  GstElement* appsrc_ = nullptr;  // borrowed from pipeline_
  std::unique_ptr<AppsrcFeed> feed_;
  std::unique_ptr<AppsrcFeed> soundFeed_;  // null without an audio port
  std::uint16_t rtcpLocalPort_ = 0;
  std::atomic<std::uint64_t> keyframeRequests_{0};
};

}  // namespace zerohop::stream
