#pragma once
// What a hostile WebRTC viewer does to the sender from its own validated transport (issue 33), for the
// end-to-end tests that run `zerohop serve` as its own process (hostile_viewer_test.py through
// zerohop-whep-receive). Attached to a receiving webrtcbin once its answer is applied, it
//   - claims loss: every report block of the receiver's own RTCP says `claimLossPercent` lost (a probe
//     rewrites the fraction-lost byte before the SRTP encoder), and so does each RR it adds (below: with
//     the highest sequence number received so far, so each is news), while its jitter buffer NACKs nothing;
//     `reportsPerSecond` more RRs (GStreamer's own come 2.5-7.5 s apart; Chromium's about 1 s);
//   - floods keyframe requests: `plisPerSecond` compound RTCP packets (an RR and a PLI about the media
//     SSRC, from the receiver's own RTCP SSRC), encrypted and sent like its own RTCP;
//   - floods junk: `junkPerSecond` 22-byte SRTP-looking RTP packets with a fresh random SSRC each, chained
//     into its nicesink (after the SRTP encoder), so they leave from its validated address.
// The packet builders are plain functions on bytes (no GStreamer).
// Thread-safety: HostileViewer is thread-bound to the thread that attaches and stops it; its probe and
// attack thread share only atomics.

#include <gst/gst.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace zerohop::test {

/// Sets the fraction-lost byte of every report block in the compound RTCP packet `data` (SR and RR) to
/// `percent` (0..100, as 1/256 units); returns how many blocks it rewrote. A malformed packet is left
/// as far as it could be walked.
int claimLossInReports(std::uint8_t* data, std::size_t size, int percent);

/// What the RR of a made-up compound packet says about the media source (RFC 3550 report block).
struct ClaimedReport {
  std::uint32_t mediaSsrc = 0;
  int lossPercent = 0;  ///< fraction lost, 0..100
  std::uint32_t cumulativeLost = 0;
  std::uint32_t extHighestSeq = 0;
};

/// A compound RTCP packet from `senderSsrc`: an RR with one report block (`report`; none when `report` is
/// null), then, with `pli`, a PLI (RFC 4585) about the report's media SSRC (`pliMediaSsrc`).
std::vector<std::uint8_t> compoundRtcp(std::uint32_t senderSsrc, const ClaimedReport* report, bool pli,
                                       std::uint32_t pliMediaSsrc);

/// A 22-byte SRTP-looking RTP packet: header with payload type 96 and sequence number `seq`, then a fresh
/// random timestamp, SSRC and 10 bytes of "ciphertext" from `random`.
std::array<std::uint8_t, 22> junkRtpPacket(std::uint16_t seq, std::mt19937& random);

/// The sink pad of the nicesink inside `webrtcbin` (a reference), or null: the last element before the
/// socket, after the SRTP encoder, so what is chained into it leaves from the viewer's validated address.
GstPad* niceSinkPad(GstElement* webrtcbin);

/// What the hostile viewer does, per second (0: not that attack).
struct HostilePlan {
  int claimLossPercent = 0;
  int reportsPerSecond = 0;  // RRs claiming the loss, beyond the receiver's own (with claimLossPercent)
  int plisPerSecond = 0;
  int junkPerSecond = 0;
  bool any() const { return claimLossPercent > 0 || plisPerSecond > 0 || junkPerSecond > 0; }
};

class HostileViewer {
 public:
  explicit HostileViewer(HostilePlan plan) : plan_(plan) {}
  ~HostileViewer() { stop(); }
  HostileViewer(const HostileViewer&) = delete;
  HostileViewer& operator=(const HostileViewer&) = delete;

  /// Finds webrtcbin's RTCP send pad and nicesink (waits up to 5 s for them) and starts the attack thread,
  /// which begins once the receiver's RTCP went out and an RTP packet told the media SSRC.
  /// Returns "" or what is missing.
  std::string attach(GstElement* webrtcbin);
  /// Call from webrtcbin's pad-added for each RTP source pad: reads the media SSRC from it.
  void watchMedia(GstPad* rtpSrcPad);
  /// Ends the attack thread (joined) and removes the probe. Idempotent.
  void stop();

  /// The summary as a JSON object (after stop()).
  std::string json() const;
  /// Why the attack did not run or stopped early, or "" (after stop()).
  const std::string& error() const { return error_; }

 private:
  static GstPadProbeReturn onOwnRtcp(GstPad*, GstPadProbeInfo* info, gpointer data);
  static GstPadProbeReturn onMediaRtp(GstPad*, GstPadProbeInfo* info, gpointer data);
  void attack();

  const HostilePlan plan_;
  GstPad* rtcpSrc_ = nullptr;  // rtpbin's send_rtcp_src_0 (a reference): the probe that rewrites reports
  gulong rtcpProbe_ = 0;
  GstPad* rtcpPeer_ = nullptr;  // what it links to (before the SRTP encoder): PLIs are chained here
  GstPad* niceSink_ = nullptr;  // nicesink's sink pad (after the SRTP encoder): junk is chained here
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint32_t> ownSsrc_{0};        // the receiver's RTCP sender SSRC, from its latest packet
  std::atomic<std::uint32_t> mediaSsrc_{0};      // from the first RTP packet received
  std::atomic<std::uint32_t> extHighestSeq_{0};  // of the media RTP received (cycles << 16 | seq)
  std::atomic<std::uint32_t> mediaPackets_{0};
  std::atomic<long> reportsRewritten_{0};
  std::atomic<long> rtcpSeen_{0};
  long plisSent_ = 0, reportsSent_ = 0, junkSent_ = 0;  // the attack thread's; read after stop()
  std::int64_t startedMs_ = 0, endedMs_ = 0;            // CLOCK_REALTIME ms; the attack thread's
  std::string error_;                                   // the attack thread's
};

}  // namespace zerohop::test
