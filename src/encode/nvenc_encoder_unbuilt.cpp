// makeNvencEncoder() of a build without nv-codec-headers: probeNvenc() already says "not built",
// so makeEncoder never gets here; this keeps the link whole.
#include "nvenc_encoder.hpp"
#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop::encode {

std::unique_ptr<VideoEncoder> makeNvencEncoder(const EncoderConfig&) {
  throw SettingError(Errc::kUnsupported, setting::kEncoder,
                     "NVENC: NVENC support not built (nv-codec-headers missing at build time); use the x264 encoder");
}

}  // namespace zerohop::encode
