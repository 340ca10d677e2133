#include "stream/rtp_extension_payloads.hpp"

#include <charconv>
#include <string>

#include "zerohop/error.hpp"

namespace zerohop::stream {
namespace {

constexpr std::int64_t kNsPerSecond = 1'000'000'000;

void putBe64(std::uint64_t v, std::uint8_t* out) {
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<std::uint8_t>(v & 0xff);
}

std::uint64_t getBe64(const std::uint8_t* in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | in[i];
  return v;
}

bool parseMs(std::string_view s, int& out) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

const std::vector<std::string>& sentExtensionUris() {
  static const std::vector<std::string> uris = {std::string(kPlayoutDelayUri), std::string(kAbsCaptureTimeUri),
                                                std::string(kTransportWideCcUri)};
  return uris;
}

void checkPlayoutDelay(PlayoutDelay d, std::string_view what) {
  const std::string given = std::string(what) + " " + std::to_string(d.minMs) + "," + std::to_string(d.maxMs);
  if (d.minMs < 0 || d.maxMs < 0 || d.minMs > kPlayoutDelayLimitMs || d.maxMs > kPlayoutDelayLimitMs) {
    throw Error(Errc::kInvalidArgument, given + ": each bound must be 0.." + std::to_string(kPlayoutDelayLimitMs) +
                                            " ms (the extension carries 12 bits of 10 ms)");
  }
  if (d.minMs % kPlayoutDelayUnitMs != 0 || d.maxMs % kPlayoutDelayUnitMs != 0) {
    throw Error(Errc::kInvalidArgument, given + ": the extension counts in steps of 10 ms; use multiples of 10");
  }
  if (d.minMs > d.maxMs) {
    throw Error(Errc::kInvalidArgument, given + ": MIN is above MAX; give MIN,MAX with MIN <= MAX");
  }
}

PlayoutDelay parsePlayoutDelay(std::string_view text, std::string_view what) {
  const auto comma = text.find(',');
  PlayoutDelay d;
  if (comma == std::string_view::npos || !parseMs(text.substr(0, comma), d.minMs) ||
      !parseMs(text.substr(comma + 1), d.maxMs)) {
    throw Error(Errc::kInvalidArgument, std::string(what) + " \"" + std::string(text) +
                                            "\": expected MIN,MAX in milliseconds, e.g. 0,0 (render at once) or 100,200");
  }
  checkPlayoutDelay(d, what);
  return d;
}

std::array<std::uint8_t, 3> encodePlayoutDelay(PlayoutDelay d) {
  const auto min = static_cast<std::uint32_t>(d.minMs / kPlayoutDelayUnitMs) & 0xfffu;
  const auto max = static_cast<std::uint32_t>(d.maxMs / kPlayoutDelayUnitMs) & 0xfffu;
  const std::uint32_t both = (min << 12) | max;
  return {static_cast<std::uint8_t>(both >> 16), static_cast<std::uint8_t>(both >> 8), static_cast<std::uint8_t>(both)};
}

std::optional<PlayoutDelay> decodePlayoutDelay(const std::uint8_t* data, std::size_t size) {
  if (!data || size != 3) return std::nullopt;
  const std::uint32_t both = (std::uint32_t{data[0]} << 16) | (std::uint32_t{data[1]} << 8) | data[2];
  return PlayoutDelay{static_cast<int>(both >> 12) * kPlayoutDelayUnitMs,
                      static_cast<int>(both & 0xfffu) * kPlayoutDelayUnitMs};
}

std::uint64_t unixNsToNtp(std::int64_t unixNs) {
  if (unixNs < 0) unixNs = 0;
  const auto seconds = static_cast<std::uint64_t>(unixNs / kNsPerSecond) + kNtpUnixEpochOffsetSeconds;
  const auto ns = static_cast<std::uint64_t>(unixNs % kNsPerSecond);  // < 2^30, so ns << 32 fits
  return (seconds << 32) | ((ns << 32) / kNsPerSecond);
}

std::int64_t ntpToUnixNs(std::uint64_t ntp) {
  const std::uint64_t fraction = ntp & 0xffffffffu;
  const auto ns = static_cast<std::int64_t>((fraction * kNsPerSecond + (1ull << 31)) >> 32);  // < 2^62
  const auto seconds = static_cast<std::int64_t>(ntp >> 32) - static_cast<std::int64_t>(kNtpUnixEpochOffsetSeconds);
  return seconds * kNsPerSecond + ns;
}

std::size_t encodeAbsCaptureTime(const AbsCaptureTime& value, std::uint8_t* out) {
  putBe64(value.captureNtp, out);
  if (!value.clockOffsetQ32) return 8;
  putBe64(static_cast<std::uint64_t>(*value.clockOffsetQ32), out + 8);
  return 16;
}

std::optional<AbsCaptureTime> decodeAbsCaptureTime(const std::uint8_t* data, std::size_t size) {
  if (!data || (size != 8 && size != 16)) return std::nullopt;
  AbsCaptureTime v;
  v.captureNtp = getBe64(data);
  if (size == 16) v.clockOffsetQ32 = static_cast<std::int64_t>(getBe64(data + 8));
  return v;
}

}  // namespace zerohop::stream
