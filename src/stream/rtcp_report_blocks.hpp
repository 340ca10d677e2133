#pragma once
// Every report block of a compound RTCP packet (RFC 3550 §6.4: SR and RR), whichever source each is
// about. GStreamer's rtpsession keeps only the last block a viewer sent about any of our sources, so a
// viewer whose reports list the RTX SSRC's block after the media SSRC's (aiortc does) was never heard
// about the media: a viewer behind 300 kbit/s got the full 2.5 Mbit/s. MediaReportTracker reads each
// received compound packet with this and keeps the media SSRC's block (docs/reliability.md, "Hostile peers").
// Pure logic on bytes: no GStreamer, so it runs (and is tested) anywhere.
// Thread-safety: reentrant.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zerohop::stream {

struct RtcpReportBlock {
  std::uint32_t reporter = 0;       ///< SSRC of the SR/RR's sender (the viewer)
  std::uint32_t source = 0;         ///< SSRC the block is about (ours: media or RTX)
  double fractionLost = 0;          ///< 0..1 over the report's interval
  std::uint32_t extHighestSeq = 0;  ///< extended highest sequence number received
  std::uint32_t lsr = 0, dlsr = 0;  ///< last SR (middle 32 bits of its NTP time), delay since it (1/65536 s)
};

/// The report blocks of every SR and RR in the compound packet `data` (decrypted), in order. Parsing stops
/// at the first packet whose header is not RTCP version 2 or whose length runs past the data; what was read
/// before it is kept. At most kMaxRtcpReportBlocks blocks (a packet holds up to 31).
std::vector<RtcpReportBlock> rtcpReportBlocks(const std::uint8_t* data, std::size_t size);

inline constexpr std::size_t kMaxRtcpReportBlocks = 64;

}  // namespace zerohop::stream
