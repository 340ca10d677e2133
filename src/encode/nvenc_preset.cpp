#include <array>
#include <string>
#include <utility>

#include "nvenc_encoder.hpp"
#include "zerohop/error.hpp"

namespace zerohop::encode {

const char* nvencPreset(const std::string& preset) {
  static constexpr std::array<std::pair<const char*, const char*>, 18> kMap{{
      {"auto", "p1"}, {"p1", "p1"}, {"p2", "p2"}, {"p3", "p3"}, {"p4", "p4"}, {"p5", "p5"}, {"p6", "p6"}, {"p7", "p7"},
      {"ultrafast", "p1"}, {"superfast", "p1"}, {"veryfast", "p2"}, {"faster", "p2"}, {"fast", "p3"},
      {"medium", "p3"}, {"slow", "p4"}, {"slower", "p5"}, {"veryslow", "p6"}, {"placebo", "p7"},
  }};
  for (const auto& [name, nvenc] : kMap) {
    if (preset == name) return nvenc;
  }
  throw Error(Errc::kInvalidArgument,
              "NVENC preset '" + preset + "' is unknown; use auto or p1 (fastest) .. p7 (p5..p7 spend more time per frame), or an x264 preset name");
}

}  // namespace zerohop::encode
