#include "h264_parameter_sets.hpp"

#include "encode/annexb.hpp"

namespace zerohop {

H264ParameterSets::Result H264ParameterSets::apply(const std::uint8_t* au, std::size_t size,
                                                   std::vector<std::uint8_t>& out) {
  using namespace encode;
  const std::vector<NalUnit> units = nalUnits(au, size);
  bool idr = false, hasSps = false, hasPps = false;
  for (const NalUnit& n : units) {
    if (n.type == kNalSps) {
      sps_.assign(au + n.offset, au + n.offset + n.size);
      hasSps = true;
    } else if (n.type == kNalPps) {
      pps_.assign(au + n.offset, au + n.offset + n.size);
      hasPps = true;
    } else if (n.type == kNalIdr) {
      idr = true;
    }
  }
  out.clear();
  if (!idr || (hasSps && hasPps)) {
    out.assign(au, au + size);
    return Result::kAsIs;
  }
  if (!known()) {
    out.assign(au, au + size);
    return Result::kMissing;
  }
  // After the leading delimiter and parameter sets the unit has (so an SPS stays before a PPS), before
  // everything else (SEI, slices).
  std::size_t at = units.empty() ? 0 : units.front().offset;
  for (const NalUnit& n : units) {
    if (n.type != kNalAud && n.type != kNalSps && n.type != kNalPps) break;
    at = n.offset + n.size;
  }
  out.reserve(size + sps_.size() + pps_.size());
  out.assign(au, au + at);
  if (!hasSps) out.insert(out.end(), sps_.begin(), sps_.end());
  if (!hasPps) out.insert(out.end(), pps_.begin(), pps_.end());
  out.insert(out.end(), au + at, au + size);
  return Result::kInserted;
}

void H264ParameterSets::learn(const std::uint8_t* au, std::size_t size) {
  for (const encode::NalUnit& n : encode::nalUnits(au, size)) {
    if (n.type == encode::kNalSps) sps_.assign(au + n.offset, au + n.offset + n.size);
    if (n.type == encode::kNalPps) pps_.assign(au + n.offset, au + n.offset + n.size);
  }
}

}  // namespace zerohop
