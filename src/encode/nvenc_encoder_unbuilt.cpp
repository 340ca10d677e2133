// makeNvencEncoder() of a build without nv-codec-headers: probeNvenc() already says "not built",
// so makeEncoder never gets here; this keeps the link whole.
#include "nvenc_encoder.hpp"
#include "zerohop/error.hpp"

namespace zerohop::encode {

std::unique_ptr<VideoEncoder> makeNvencEncoder(const EncoderConfig&) {
  throw Error(Errc::kUnsupported,
              "NVENC: NVENC support not built (nv-codec-headers missing at build time); use --encoder x264");
}

}  // namespace zerohop::encode
