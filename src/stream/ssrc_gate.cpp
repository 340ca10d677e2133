#include "stream/ssrc_gate.hpp"

#include <algorithm>

namespace zerohop::stream {
namespace {

std::uint32_t read32(const std::uint8_t* p) {
  return (static_cast<std::uint32_t>(p[0]) << 24) | (static_cast<std::uint32_t>(p[1]) << 16) |
         (static_cast<std::uint32_t>(p[2]) << 8) | p[3];
}

constexpr std::size_t kRtpHeader = 12;  // RFC 3550 §5.1, before CSRCs and extensions
constexpr std::size_t kRtcpHeader = 8;  // RFC 3550 §6.4: V/P/count, type, length, sender SSRC

}  // namespace

PacketClass classifyPacket(const std::uint8_t* data, std::size_t size) {
  if (!data || size == 0) return {};
  const std::uint8_t first = data[0];
  if (first <= 3) return {PacketKind::kStun, 0};
  if (first >= 20 && first <= 63) return {PacketKind::kDtls, 0};
  if (first < 128 || first > 191 || size < 2) return {};
  if (data[1] >= 192 && data[1] <= 223) {
    if (size < kRtcpHeader) return {};
    return {PacketKind::kRtcp, read32(data + 4)};
  }
  if (size < kRtpHeader) return {};
  return {PacketKind::kRtp, read32(data + 8)};
}

bool SsrcGate::admit(const std::uint8_t* data, std::size_t size) {
  const PacketClass c = classifyPacket(data, size);
  bool pass = false;
  switch (c.kind) {
    case PacketKind::kStun:
    case PacketKind::kDtls:
      pass = true;
      break;
    case PacketKind::kOther:
      // Too short to be the RTP or RTCP its first byte says it is; anything else passes (dtlssrtpdemux
      // drops what is neither DTLS nor SRTP).
      pass = !(size >= 1 && data[0] >= 128 && data[0] <= 191);
      break;
    case PacketKind::kRtp:
      pass = false;  // serve only sends media
      break;
    case PacketKind::kRtcp: {
      std::lock_guard lock(mutex_);
      const auto end = senders_.begin() + static_cast<std::ptrdiff_t>(senderCount_);
      if (std::find(senders_.begin(), end, c.ssrc) != end) {
        pass = true;
      } else if (senderCount_ < kMaxRtcpSenders) {
        senders_[senderCount_++] = c.ssrc;
        pass = true;
      }
      break;
    }
  }
  if (!pass) dropped_.fetch_add(1, std::memory_order_relaxed);
  return pass;
}

std::vector<std::uint32_t> SsrcGate::rtcpSenders() const {
  std::lock_guard lock(mutex_);
  return {senders_.begin(), senders_.begin() + static_cast<std::ptrdiff_t>(senderCount_)};
}

}  // namespace zerohop::stream
