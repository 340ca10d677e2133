#include "stream/viewer_feedback.hpp"

#include <vector>

namespace zerohop::stream {

void addSourceStats(FeedbackReading& reading, const RtpSourceStats& s, std::uint32_t mediaSsrc) {
  if (s.internal && s.ssrc == mediaSsrc && s.octetsSent) reading.octetsSent = *s.octetsSent;
  // The viewer's report block about our stream is kept on the viewer's source (the RTCP sender).
  if (!s.internal && s.haveReport && s.reportSsrc == mediaSsrc &&
      (!reading.report || s.extHighestSeq > reading.report->highestSeq)) {
    reading.report = FeedbackReading::ReceiverReport{s.fractionLost / 256.0, s.roundTrip * 1000.0 / 65536.0,
                                                     s.extHighestSeq};
  }
}

CongestionFeedback congestionFeedback(const FeedbackReading& now, const FeedbackReading& last,
                                      std::int64_t nowNs, bool nackNegotiated,
                                      std::uint64_t nacksAtLastReport) {
  CongestionFeedback f;
  f.nowNs = nowNs;
  const auto& t = now.transport;
  const bool newWindow =
      t && (!last.transport || t->packetsSent != last.transport->packetsSent ||
            t->packetsReceived != last.transport->packetsReceived ||
            t->sentKbps != last.transport->sentKbps || t->receivedKbps != last.transport->receivedKbps);
  const bool newReport = now.report && (!last.report || now.report->highestSeq != last.report->highestSeq);
  if (newReport && now.report->rttMs > 0) f.rttMs = now.report->rttMs;
  if (newWindow) {
    f.fresh = true;
    f.lossFraction = t->lossPercent / 100.0;
    f.lossFromTransportCc = true;
    if (t->sentKbps > 0 && t->receivedKbps > 0) {
      f.sendKbps = t->sentKbps;
      f.receiveKbps = t->receivedKbps;
    }
    f.deltaOfDeltaMs = t->avgDeltaOfDeltaMs;
  } else if (newReport && !t) {
    f.fresh = true;
    f.lossFraction = now.report->fractionLost;
    if (nackNegotiated) {
      const std::uint64_t expected = last.report && now.report->highestSeq > last.report->highestSeq
                                         ? now.report->highestSeq - last.report->highestSeq
                                         : 0;
      f.lossFraction =
          creditedReportLoss(now.report->fractionLost, now.nackRequests - nacksAtLastReport, expected);
    }
  }
  return f;
}

void MediaReportTracker::onCompoundRtcp(const std::uint8_t* data, std::size_t size) {
  const std::vector<RtcpReportBlock> blocks = rtcpReportBlocks(data, size);
  std::lock_guard lock(mutex_);
  for (const RtcpReportBlock& b : blocks) {
    if (b.source != mediaSsrc_) continue;  // the RTX SSRC's block, or about someone else
    if (!latest_ || b.extHighestSeq >= latest_->extHighestSeq) latest_ = b;
  }
}

std::optional<RtcpReportBlock> MediaReportTracker::latest() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

void MediaReportTracker::preferNewer(FeedbackReading& reading) const {
  std::lock_guard lock(mutex_);
  if (latest_ && (!reading.report || latest_->extHighestSeq > reading.report->highestSeq))
    reading.report = FeedbackReading::ReceiverReport{latest_->fractionLost, 0, latest_->extHighestSeq};
}

}  // namespace zerohop::stream
