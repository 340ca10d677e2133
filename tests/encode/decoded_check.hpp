#pragma once
// Test helper for the encoder tests: a decoded picture against the frame that was encoded, 640x360
// (camera_frames.hpp): its size, every plane's PSNR >= 30 dB, and the pixel timecode readable with the
// input's sequence. Returns the luma PSNR (0 when the size is wrong, after a failure).

#include <gtest/gtest.h>

#include <cstddef>

#include "camera_frames.hpp"
#include "convert/test_image.hpp"
#include "zerohop/frame.hpp"
#include "zerohop/timecode.hpp"

namespace zerohop::testing {

inline double expectDecodedMatches(const Frame& in, const Frame& out, std::size_t i) {
  if (out.width != kW || out.height != kH) {
    ADD_FAILURE() << "decoded frame " << i << " is " << out.width << "x" << out.height << ", want " << kW << "x" << kH;
    return 0;
  }
  const double y = psnr(in.data[0], in.pitch[0], out.data[0], out.pitch[0], kW, kH);
  const double u = psnr(in.data[1], in.pitch[1], out.data[1], out.pitch[1], kW / 2, kH / 2);
  const double v = psnr(in.data[2], in.pitch[2], out.data[2], out.pitch[2], kW / 2, kH / 2);
  EXPECT_GE(y, 30.0) << "frame " << i;
  EXPECT_GE(u, 30.0) << "frame " << i;
  EXPECT_GE(v, 30.0) << "frame " << i;
  const auto tc = readTimecode(out);
  EXPECT_TRUE(tc.has_value()) << "timecode unreadable in decoded frame " << i;
  if (tc) {
    EXPECT_EQ(tc->sequence, in.sequence & kTimecodeSeqMask) << "frame " << i;
  }
  return y;
}

}  // namespace zerohop::testing
