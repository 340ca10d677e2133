#include "stream/retransmission_budget.hpp"

#include <algorithm>

namespace zerohop::stream {

bool isVp8KeyframeStart(const std::uint8_t* p, std::size_t size) {
  // RFC 7741 §4.2: X R N S R PID(3), then with X: I L T K RSV(4); I: a 7- or 15-bit PictureID (M bit);
  // L: TL0PICIDX; T or K: TID/Y/KEYIDX. §4.3: the VP8 payload header's first byte has P (bit 0) = 0
  // for a keyframe; it is there only in the first packet of partition 0.
  if (!p || size < 2) return false;
  const std::uint8_t first = p[0];
  if ((first & 0x10) == 0 || (first & 0x07) != 0) return false;  // not the start of partition 0
  std::size_t at = 1;
  if (first & 0x80) {
    if (at >= size) return false;
    const std::uint8_t ext = p[at++];
    if (ext & 0x80) {  // PictureID
      if (at >= size) return false;
      at += (p[at] & 0x80) ? 2 : 1;
    }
    if (ext & 0x40) ++at;  // TL0PICIDX
    if (ext & 0x30) ++at;  // TID/Y/KEYIDX
  }
  return at < size && (p[at] & 0x01) == 0;
}

void RetransmissionBudget::onSent(std::uint16_t seq, std::size_t bytes, std::int64_t, bool keyframeStart) {
  history_[seq % kHistory] = Packet{true, seq, static_cast<std::uint32_t>(bytes), 0};
  if (keyframeStart) {
    sawKeyframe_ = true;
    ++keyframes_;
    keyframeSeq_ = seq;
  }
}

void RetransmissionBudget::setPath(std::uint32_t estimateKbps, double rttMs) {
  estimateKbps_ = estimateKbps;
  rttMs_ = rttMs;
}

std::uint32_t RetransmissionBudget::allow(std::uint16_t seq, std::int64_t nowNs) {
  while (!recent_.empty() && nowNs - recent_.front().first >= kWindowNs) {
    recentBytes_ -= recent_.front().second;
    recent_.pop_front();
  }
  Packet& p = history_[seq % kHistory];
  const std::int64_t interval =
      std::max(kMinRttNs, static_cast<std::int64_t>(std::clamp(rttMs_, 0.0, 1000.0) * 1e6)) / 10 * 9;
  // Bytes the window may hold: kShare of the estimate over kWindowNs (kb/s x ns / 8e6 = bytes).
  const double budget = kShare * estimateKbps_ * static_cast<double>(kWindowNs) / 8e6;
  // Before the last keyframe (sequence numbers wrap: the signed distance).
  const bool beforeKeyframe = sawKeyframe_ && static_cast<std::int16_t>(static_cast<std::uint16_t>(seq - keyframeSeq_)) < 0;
  const bool ok = p.known && p.seq == seq && !beforeKeyframe && (p.lastResentNs == 0 || nowNs - p.lastResentNs >= interval) &&
                  (estimateKbps_ == 0 || static_cast<double>(recentBytes_ + p.bytes) <= budget);
  if (!ok) {
    ++refused_;
    return 0;
  }
  const bool shortTrip = rttMs_ > 0 && rttMs_ * 1e6 < static_cast<double>(kTwiceBelowRttNs);
  const std::uint32_t copies =
      shortTrip && (estimateKbps_ == 0 || static_cast<double>(recentBytes_ + 2ull * p.bytes) <= budget) ? 2
                                                                                                        : 1;
  p.lastResentNs = nowNs;
  recent_.emplace_back(nowNs, copies * p.bytes);
  recentBytes_ += copies * p.bytes;
  ++allowed_;
  allowedBytes_ += copies * p.bytes;
  if (copies == 2) ++twice_;
  return copies;
}

}  // namespace zerohop::stream
