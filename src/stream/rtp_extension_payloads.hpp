#pragma once
// The payloads of the RTP header extensions (RFC 8285) the WebRTC sender writes for low latency, as
// bytes: pure logic, no GStreamer, so the formats are checked against their specs anywhere.
//
//   playout-delay (http://www.webrtc.org/experiments/rtp-hdrext/playout-delay), 3 bytes:
//     | MIN delay (12 bits) | MAX delay (12 bits) |  big-endian, units of 10 ms (0..40950 ms).
//     MIN = MAX = 0 asks the receiver to render each frame as soon as it is decoded.
//   abs-capture-time (http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time), 8 or 16 bytes:
//     | absolute capture timestamp (64 bits, UQ32.32 NTP: seconds since 1900-01-01) |
//     | [estimated capture clock offset (64 bits, signed Q32.32 seconds)] |
//     The timestamp is on the clock of the RTCP sender reports (CLOCK_REALTIME here).
//   transport-wide-cc: written by GStreamer's own rtphdrexttwcc (2 bytes, a sequence number).
// Thread-safety: reentrant.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zerohop::stream {

inline constexpr std::string_view kPlayoutDelayUri = "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay";
inline constexpr std::string_view kAbsCaptureTimeUri = "http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time";
inline constexpr std::string_view kTransportWideCcUri =
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01";

/// One extension as an SDP a=extmap line names it: its id (1-14 one-byte, 16-255 two-byte) and URI.
struct RtpExtension {
  int id = 0;
  std::string uri;
  friend bool operator==(const RtpExtension&, const RtpExtension&) = default;
};

/// The URIs the sender writes when the offer has them: playout-delay, abs-capture-time, transport-wide-cc.
const std::vector<std::string>& sentExtensionUris();

/// Playout delay bounds in milliseconds. On the wire each is a 12-bit count of 10 ms.
struct PlayoutDelay {
  int minMs = 0;
  int maxMs = 0;
  friend bool operator==(const PlayoutDelay&, const PlayoutDelay&) = default;
};
inline constexpr int kPlayoutDelayUnitMs = 10;
inline constexpr int kPlayoutDelayLimitMs = 4095 * kPlayoutDelayUnitMs;  // 40950 ms

/// Throws Error(kInvalidArgument) unless 0 <= min <= max <= 40950 and both are multiples of 10 ms
/// (the message names the bad value and what would be accepted; `what` names its source, e.g. the option).
void checkPlayoutDelay(PlayoutDelay delay, std::string_view what);
/// "MIN,MAX" in milliseconds (e.g. "0,0", "100,200"); checked as checkPlayoutDelay. Throws Error(kInvalidArgument).
PlayoutDelay parsePlayoutDelay(std::string_view text, std::string_view what);

/// The 3 payload bytes of a checked delay.
std::array<std::uint8_t, 3> encodePlayoutDelay(PlayoutDelay delay);
/// Back from the wire; nullopt unless `size` is 3.
std::optional<PlayoutDelay> decodePlayoutDelay(const std::uint8_t* data, std::size_t size);

/// Seconds from the NTP epoch (1900-01-01) to the Unix epoch (1970-01-01).
inline constexpr std::uint64_t kNtpUnixEpochOffsetSeconds = 2208988800u;
/// Unix time in nanoseconds (>= 0) as a UQ32.32 NTP timestamp (the fraction rounded down).
std::uint64_t unixNsToNtp(std::int64_t unixNs);
/// The inverse, to the nearest nanosecond (exact for every value unixNsToNtp made).
std::int64_t ntpToUnixNs(std::uint64_t ntp);

struct AbsCaptureTime {
  std::uint64_t captureNtp = 0;                    ///< UQ32.32
  std::optional<std::int64_t> clockOffsetQ32;      ///< signed Q32.32 seconds; 0 = captured by the sender itself
};
inline constexpr std::size_t kAbsCaptureTimeMaxSize = 16;
/// Writes 8 bytes (no offset) or 16 into `out`; returns how many.
std::size_t encodeAbsCaptureTime(const AbsCaptureTime& value, std::uint8_t* out);
/// Back from the wire; nullopt unless `size` is 8 or 16.
std::optional<AbsCaptureTime> decodeAbsCaptureTime(const std::uint8_t* data, std::size_t size);

}  // namespace zerohop::stream
