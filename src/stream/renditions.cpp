#include "stream/renditions.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop::stream {
namespace {

std::uint32_t evenAtLeast2(std::uint32_t v) { return std::max<std::uint32_t>(2, v & ~1u); }

Rendition rungOf(std::uint32_t width, std::uint32_t height, std::uint32_t divisor, std::uint32_t minKbps,
                 std::uint32_t maxKbps) {
  return {evenAtLeast2(width / divisor), evenAtLeast2(height / divisor), minKbps, maxKbps};
}

bool parseNumber(std::string_view text, std::uint32_t& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

[[noreturn]] void badSpec(const std::string& spec, const std::string& why) {
  throw SettingError(Errc::kInvalidArgument, setting::kRenditions,
                     "renditions '" + spec + "': " + why +
                         "; expected auto, off, on, or DIV:MIN-MAX items separated by commas (e.g. "
                         "1:1000-2500,2:300-1000,4:100-300: the first DIV 1, each after it larger, DIV one of 1 2 4 "
                         "8, MIN <= MAX kb/s)");
}

}  // namespace

std::vector<Rendition> renditionLadder(const std::string& spec, std::uint32_t width, std::uint32_t height,
                                       std::uint32_t maxKbps) {
  if (spec.empty() || spec == "off" || spec == "1") return {};
  if (spec == "on" || spec == "auto") {
    const auto part = [maxKbps](double f) { return std::max<std::uint32_t>(1, static_cast<std::uint32_t>(maxKbps * f)); };
    std::vector<Rendition> ladder = {rungOf(width, height, 1, part(0.4), maxKbps),
                                     rungOf(width, height, 2, part(0.15), part(0.4)),
                                     rungOf(width, height, 4, part(0.05), part(0.15))};
    if (spec == "auto") {
      // A lower rung smaller than kAutoSmallest says little a viewer would watch: leave it out.
      const auto tooSmall = [](const Rendition& r) {
        return std::min(r.width, r.height) < kAutoSmallest.shortSide || std::max(r.width, r.height) < kAutoSmallest.longSide;
      };
      while (ladder.size() > 1 && tooSmall(ladder.back())) ladder.pop_back();
      if (ladder.size() < 2) return {};
    }
    return ladder;
  }
  std::vector<Rendition> ladder;
  std::uint32_t lastDivisor = 0;
  std::string_view rest = spec;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const std::size_t colon = item.find(':');
    const std::size_t dash = item.find('-');
    std::uint32_t divisor = 0, minKbps = 0, maxRung = 0;
    if (colon == std::string_view::npos || dash == std::string_view::npos || dash < colon ||
        !parseNumber(item.substr(0, colon), divisor) || !parseNumber(item.substr(colon + 1, dash - colon - 1), minKbps) ||
        !parseNumber(item.substr(dash + 1), maxRung)) {
      badSpec(spec, "'" + std::string(item) + "' is not DIV:MIN-MAX");
    }
    if (divisor != 1 && divisor != 2 && divisor != 4 && divisor != 8) badSpec(spec, "DIV " + std::to_string(divisor) + " is not 1, 2, 4 or 8");
    if (ladder.empty() ? divisor != 1 : divisor <= lastDivisor) badSpec(spec, "the first rung is DIV 1 (full size) and each after it has a larger DIV");
    if (minKbps == 0 || minKbps > maxRung) badSpec(spec, "'" + std::string(item) + "' needs 0 < MIN <= MAX");
    ladder.push_back(rungOf(width, height, divisor, minKbps, maxRung));
    lastDivisor = divisor;
  }
  if (ladder.size() < 2) return {};  // one rung is the one encode of before
  return ladder;
}

RenditionPlacement::RenditionPlacement(std::vector<Rendition> ladder, std::size_t startRung)
    : ladder_(std::move(ladder)), rung_(ladder_.empty() ? 0 : std::min(startRung, ladder_.size() - 1)) {}

std::uint32_t RenditionPlacement::needKbps(std::size_t rung) const {
  return rung + 1 >= ladder_.size() ? 0 : ladder_[rung].minKbps;
}

std::size_t RenditionPlacement::fits(std::uint32_t estimateKbps) const {
  for (std::size_t r = 0; r < ladder_.size(); ++r) {
    if (estimateKbps >= needKbps(r)) return r;
  }
  return ladder_.empty() ? 0 : ladder_.size() - 1;
}

std::size_t RenditionPlacement::update(std::int64_t nowNs, std::uint32_t estimateKbps) {
  const std::size_t fit = fits(estimateKbps);
  if (fit > rung_) {  // down at once: the link does not carry this rung
    rung_ = fit;
    aboveSinceNs_ = -1;
    return rung();
  }
  if (fit == rung_) {
    aboveSinceNs_ = -1;
    return rung();
  }
  // The estimate fits a higher rung: one up, once it has held for kUpHoldNs.
  if (aboveSinceNs_ < 0) aboveSinceNs_ = nowNs;
  if (nowNs - aboveSinceNs_ >= kUpHoldNs) {
    --rung_;
    aboveSinceNs_ = fit < rung_ ? nowNs : -1;  // the next rung up waits its own hold
  }
  return rung();
}

void RenditionPlacement::setTop(std::size_t rung) {
  top_ = ladder_.empty() ? 0 : std::min(rung, ladder_.size() - 1);
}

}  // namespace zerohop::stream
