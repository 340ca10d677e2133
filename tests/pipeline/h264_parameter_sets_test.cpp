// H264ParameterSets: every IDR leaves with SPS/PPS, whether the camera repeated them or not.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "encode/annexb.hpp"
#include "h264_parameter_sets.hpp"

namespace zerohop {
namespace {

using Bytes = std::vector<std::uint8_t>;

// One NAL unit with a 4-byte start code, header byte for `type` (nal_ref_idc 3) and a payload.
Bytes nal(int type, std::uint8_t payload) {
  return {0, 0, 0, 1, static_cast<std::uint8_t>(0x60 | type), payload, payload};
}

Bytes join(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::vector<int> typesOf(const Bytes& b) { return encode::nalTypes(b.data(), b.size()); }

TEST(H264ParameterSets, IdrWithItsOwnHeadersAndPFramesPassAsIs) {
  H264ParameterSets sets;
  const Bytes idr = join({nal(7, 1), nal(8, 2), nal(5, 3)});
  Bytes out;
  EXPECT_EQ(sets.apply(idr.data(), idr.size(), out), H264ParameterSets::Result::kAsIs);
  EXPECT_EQ(out, idr);
  EXPECT_TRUE(sets.known());
  const Bytes p = nal(1, 4);
  EXPECT_EQ(sets.apply(p.data(), p.size(), out), H264ParameterSets::Result::kAsIs);
  EXPECT_EQ(out, p);
}

TEST(H264ParameterSets, LaterIdrGetsTheLatestCachedHeadersAfterItsDelimiter) {
  H264ParameterSets sets;
  Bytes out;
  const Bytes first = join({nal(7, 1), nal(8, 2), nal(5, 3)});
  sets.apply(first.data(), first.size(), out);
  const Bytes newSps = join({nal(7, 9), nal(8, 8), nal(1, 7)});  // the camera changed its headers
  sets.apply(newSps.data(), newSps.size(), out);
  const Bytes bare = join({nal(9, 0x10), nal(6, 5), nal(5, 6)});  // AUD, SEI, IDR: no SPS/PPS
  EXPECT_EQ(sets.apply(bare.data(), bare.size(), out), H264ParameterSets::Result::kInserted);
  EXPECT_EQ(typesOf(out), (std::vector<int>{9, 7, 8, 6, 5}));
  EXPECT_EQ(out, join({nal(9, 0x10), nal(7, 9), nal(8, 8), nal(6, 5), nal(5, 6)}));
}

TEST(H264ParameterSets, IdrWithOnlyItsSpsGetsThePpsAfterIt) {
  H264ParameterSets sets;
  Bytes out;
  const Bytes first = join({nal(7, 1), nal(8, 2), nal(5, 3)});
  sets.apply(first.data(), first.size(), out);
  const Bytes spsOnly = join({nal(7, 4), nal(5, 5)});
  EXPECT_EQ(sets.apply(spsOnly.data(), spsOnly.size(), out), H264ParameterSets::Result::kInserted);
  EXPECT_EQ(out, join({nal(7, 4), nal(8, 2), nal(5, 5)}));
}

TEST(H264ParameterSets, IdrBeforeAnyHeadersIsReportedMissing) {
  H264ParameterSets sets;
  const Bytes bare = nal(5, 1);
  Bytes out;
  EXPECT_EQ(sets.apply(bare.data(), bare.size(), out), H264ParameterSets::Result::kMissing);
  EXPECT_EQ(out, bare);
  EXPECT_FALSE(sets.known());
}

// The unit that carried them was dropped before it was sent (the pipeline's queue evicted it): learned
// from it, they still go in front of the next bare IDR.
TEST(H264ParameterSets, HeadersLearnedFromAnUnsentUnitGoBeforeTheNextIdr) {
  H264ParameterSets sets;
  const Bytes dropped = join({nal(7, 1), nal(8, 2), nal(5, 3)});
  sets.learn(dropped.data(), dropped.size());
  EXPECT_TRUE(sets.known());
  const Bytes bare = nal(5, 4);
  Bytes out;
  EXPECT_EQ(sets.apply(bare.data(), bare.size(), out), H264ParameterSets::Result::kInserted);
  EXPECT_EQ(out, join({nal(7, 1), nal(8, 2), nal(5, 4)}));
}

TEST(H264ParameterSets, ThreeByteStartCodesAreFound) {
  H264ParameterSets sets;
  const Bytes first = {0, 0, 1, 0x67, 1, 0, 0, 1, 0x68, 2, 0, 0, 1, 0x65, 3};
  Bytes out;
  EXPECT_EQ(sets.apply(first.data(), first.size(), out), H264ParameterSets::Result::kAsIs);
  const Bytes bare = {0, 0, 1, 0x65, 4};
  EXPECT_EQ(sets.apply(bare.data(), bare.size(), out), H264ParameterSets::Result::kInserted);
  EXPECT_EQ(out, (Bytes{0, 0, 1, 0x67, 1, 0, 0, 1, 0x68, 2, 0, 0, 1, 0x65, 4}));
}

}  // namespace
}  // namespace zerohop
