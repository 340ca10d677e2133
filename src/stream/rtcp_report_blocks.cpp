#include "stream/rtcp_report_blocks.hpp"

namespace zerohop::stream {
namespace {

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

constexpr std::uint8_t kSenderReport = 200, kReceiverReport = 201;
constexpr std::size_t kSenderInfoBytes = 20;  // NTP (8), RTP timestamp, packet and octet counts
constexpr std::size_t kBlockBytes = 24;

}  // namespace

std::vector<RtcpReportBlock> rtcpReportBlocks(const std::uint8_t* data, std::size_t size) {
  std::vector<RtcpReportBlock> out;
  std::size_t pos = 0;
  while (data && pos + 4 <= size && out.size() < kMaxRtcpReportBlocks) {
    const std::uint8_t* p = data + pos;
    if ((p[0] >> 6) != 2) break;
    const std::size_t length = (std::size_t{p[2]} << 8 | p[3]) * 4 + 4;
    if (pos + length > size) break;
    const unsigned count = p[0] & 0x1f;
    const std::uint8_t type = p[1];
    if ((type == kSenderReport || type == kReceiverReport) && length >= 8) {
      const std::uint32_t reporter = be32(p + 4);
      std::size_t at = 8 + (type == kSenderReport ? kSenderInfoBytes : 0);
      for (unsigned i = 0; i < count && at + kBlockBytes <= length && out.size() < kMaxRtcpReportBlocks; ++i) {
        const std::uint8_t* b = p + at;
        RtcpReportBlock r;
        r.reporter = reporter;
        r.source = be32(b);
        r.fractionLost = b[4] / 256.0;
        r.extHighestSeq = be32(b + 8);
        r.lsr = be32(b + 16);
        r.dlsr = be32(b + 20);
        out.push_back(r);
        at += kBlockBytes;
      }
    }
    pos += length;
  }
  return out;
}

}  // namespace zerohop::stream
