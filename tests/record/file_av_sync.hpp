#pragma once
// The sound against the picture in a recorded file of the test camera with the test tone: decodes
// both tracks (libavformat, libavcodec), finds each marker frame (the white block the camera draws at
// every whole second of the capture clock, src/core/av_marker_picture.hpp) and each click of the tone
// (the first sample above half of full scale: the click is 32000, the sine 8200), on the file's
// timeline, and pairs each marker with the nearest click within 400 ms.
// Thread-safety: reentrant.

#include <string>
#include <vector>

namespace zerohop::testing {

struct FileAvSync {
  std::string error;  ///< set when the file could not be read or has no sound track
  std::size_t markers = 0;
  std::size_t clicks = 0;
  std::vector<double> offsetsMs;  ///< click - marker of each pair (positive: the sound is late)
  double audioSeconds = 0;        ///< decoded sound
  double videoSeconds = 0;        ///< last picture's time + one frame
};

FileAvSync measureFileAvSync(const std::string& path);

}  // namespace zerohop::testing
