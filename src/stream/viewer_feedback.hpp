#pragma once
// What a viewer says back about our stream, as congestion control reads it: its last receiver report
// (RFC 3550 report block), the last transport-wide congestion control window (transport-cc), what we
// have sent, how many packets it asked to be resent. GStreamer's rtpsession gathers most of it
// (rtp_session_feedback.hpp reads it out); this file is the part that decides, on plain values:
//   - addSourceStats: one rtpsession source's numbers folded into a reading (ours counts what we sent;
//     the viewer's carries its last report block about one of our sources);
//   - MediaReportTracker: every report block of the viewer's compound RTCP packets, keeping the newest
//     about our media SSRC (rtpsession keeps only its last block about any of our sources, which may be
//     the RTX SSRC's: rtcp_report_blocks.hpp), and the newer of the two reports;
//   - congestionFeedback: what is new between two readings, as the viewer's BitrateController takes it.
// Pure: no GStreamer. Thread-safety: FeedbackReading and addSourceStats reentrant; MediaReportTracker
// thread-safe.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>

#include "stream/bitrate_controller.hpp"
#include "stream/rtcp_report_blocks.hpp"

namespace zerohop::stream {

/// Everything congestion control reads about one viewer at one moment.
struct FeedbackReading {
  struct ReceiverReport {
    double fractionLost = 0;       ///< 0..1, over the report's interval
    double rttMs = 0;              ///< from LSR/DLSR; 0 when the report had no LSR yet
    std::uint32_t highestSeq = 0;  ///< extended highest sequence received: changes with each new report
  };
  struct TransportWindow {
    unsigned packetsSent = 0, packetsReceived = 0;
    double lossPercent = 0;
    double sentKbps = 0, receivedKbps = 0;  ///< 0 when GStreamer did not compute them
    double avgDeltaOfDeltaMs = 0;  ///< mean (arrival gap - send gap) of the window's packets: > 0, a queue grows
  };
  std::optional<ReceiverReport> report;
  std::optional<TransportWindow> transport;
  std::uint64_t octetsSent = 0;    ///< RTP payload bytes of our media SSRC so far (no RTX)
  std::uint64_t nackRequests = 0;  ///< packets the viewer asked to be resent so far (RTCP NACK, repeats counted)
};

/// One source of rtpsession's "source-stats" (rtpsource.c's field names in the comments).
struct RtpSourceStats {
  std::uint32_t ssrc = 0;                   ///< "ssrc"
  bool internal = false;                    ///< "internal": one of ours (we send from it)
  std::optional<std::uint64_t> octetsSent;  ///< "octets-sent"
  bool haveReport = false;                  ///< "have-rb": the block below is filled in
  std::uint32_t reportSsrc = 0;             ///< "rb-ssrc": the source the block is about
  std::uint32_t fractionLost = 0;           ///< "rb-fractionlost", 1/256 units
  std::uint32_t roundTrip = 0;              ///< "rb-round-trip", 1/65536 s
  std::uint32_t extHighestSeq = 0;          ///< "rb-exthighestseq"
};

/// Folds `source` into `reading`: our media source's octets sent, and a viewer source's report block about
/// `mediaSsrc` when it is newer (higher extended sequence) than the one already there.
void addSourceStats(FeedbackReading& reading, const RtpSourceStats& source, std::uint32_t mediaSsrc);

/// What is new in `now` against `last` (the previous reading of the same viewer): a transport-cc window that
/// changed, a receiver report with a new highest sequence number (the RTT only from a new one: an old
/// report's says nothing about the queue now). Loss comes from transport-cc when it has news (every ~60 ms
/// from Chromium), else from the receiver report (about once a second), and never from a report once a
/// transport-cc window came (a viewer's reports cannot claim loss its acknowledgements contradict). A viewer
/// that negotiated NACK has its reports' loss checked against its NACKs (creditedReportLoss):
/// `nacksAtLastReport`, its NACK count when the previous report came. transport-cc's loss, rates and delay
/// are taken as the viewer's acknowledgements tell (docs/reliability.md, "Hostile peers"). Pure.
CongestionFeedback congestionFeedback(const FeedbackReading& now, const FeedbackReading& last,
                                      std::int64_t nowNs, bool nackNegotiated,
                                      std::uint64_t nacksAtLastReport);

class MediaReportTracker {
 public:
  explicit MediaReportTracker(std::uint32_t mediaSsrc) : mediaSsrc_(mediaSsrc) {}

  /// One compound RTCP packet from the viewer (decrypted). Blocks about other sources are ignored; an
  /// older block about ours (lower extended sequence) does not replace a newer one.
  void onCompoundRtcp(const std::uint8_t* data, std::size_t size);
  /// The viewer's latest block about our media SSRC; nullopt before one came.
  std::optional<RtcpReportBlock> latest() const;
  /// `reading.report` replaced by the block read from the packets when that is newer (without an RTT:
  /// LSR/DLSR are rtpsession's to turn into one).
  void preferNewer(FeedbackReading& reading) const;

 private:
  const std::uint32_t mediaSsrc_;
  mutable std::mutex mutex_;
  std::optional<RtcpReportBlock> latest_;
};

}  // namespace zerohop::stream
