#include "mjpeg_decoder.hpp"

#include <libyuv/planar_functions.h>
#include <libyuv/scale.h>
#include <turbojpeg.h>

#include <cstring>
#include <string>

#include "jpeg_framing.hpp"
#include "zerohop/error.hpp"

namespace zerohop::convert {

struct MjpegDecoder::Handle {
  tjhandle tj = nullptr;
  ~Handle() {
    if (tj != nullptr) tjDestroy(tj);  // only fails for an invalid handle; nothing to report
  }
};

namespace {

const char* subsampName(int subsamp) {
  switch (subsamp) {
    case TJSAMP_444:
      return "4:4:4";
    case TJSAMP_422:
      return "4:2:2";
    case TJSAMP_420:
      return "4:2:0";
    case TJSAMP_GRAY:
      return "greyscale";
    case TJSAMP_440:
      return "4:4:0";
    case TJSAMP_411:
      return "4:1:1";
    default:
      return "unknown";
  }
}

// libjpeg warns (and TurboJPEG returns -1 with TJERR_WARNING) for damage it decoded around. The one
// warning that leaves the picture whole is stray bytes between segments, which some UVC cameras emit.
bool harmlessWarning(tjhandle tj) {
  if (tjGetErrorCode(tj) != TJERR_WARNING) return false;
  const char* text = tjGetErrorStr2(tj);
  return text != nullptr && std::strstr(text, "extraneous bytes before marker") != nullptr;
}

std::string tjMessage(tjhandle tj, const char* call, const std::string& context) {
  const char* text = tjGetErrorStr2(tj);
  const bool warning = tjGetErrorCode(tj) == TJERR_WARNING;
  return std::string(call) + " failed on " + context + ": " + (text ? text : "unknown error") +
         (warning ? " (corrupt data; frame dropped)" : " (frame dropped)");
}

}  // namespace

MjpegDecoder::MjpegDecoder() {
  resetHandle();
}

void MjpegDecoder::resetHandle() {
  auto fresh = std::make_unique<Handle>();
  fresh->tj = tjInitDecompress();
  if (fresh->tj == nullptr) {
    throw Error(Errc::kUnavailable, std::string("tjInitDecompress failed: ") + tjGetErrorStr2(nullptr));
  }
  handle_ = std::move(fresh);
}

void MjpegDecoder::fail(const char* call, const std::string& context) {
  // A TurboJPEG 2.x handle that failed inside tjDecompressHeader3 keeps the half-read stream's state
  // (and a warning flag), which breaks the next frame; a fresh handle costs microseconds.
  std::string message = tjMessage(handle_->tj, call, context);
  resetHandle();
  throw Error(Errc::kInvalidArgument, std::move(message));
}

MjpegDecoder::~MjpegDecoder() = default;
MjpegDecoder::MjpegDecoder(MjpegDecoder&&) noexcept = default;
MjpegDecoder& MjpegDecoder::operator=(MjpegDecoder&&) noexcept = default;

void MjpegDecoder::decode(const std::uint8_t* jpeg, std::size_t size, Frame& dst) {
  if (const std::string problem = jpegFramingProblem(jpeg, size); !problem.empty()) {
    throw Error(Errc::kInvalidArgument, "MJPEG frame rejected: " + problem);
  }
  size = jpegTrimmedSize(jpeg, size);
  tjhandle tj = handle_->tj;
  const std::string what = "a " + std::to_string(size) + "-byte MJPEG frame";

  int width = 0, height = 0, subsamp = -1, colorspace = -1;
  bool warned = false;
  if (tjDecompressHeader3(tj, jpeg, static_cast<unsigned long>(size), &width, &height, &subsamp,
                          &colorspace) != 0) {
    if (!harmlessWarning(tj)) fail("tjDecompressHeader3", what);
    warned = true;
  }
  if (static_cast<std::uint32_t>(width) != dst.width || static_cast<std::uint32_t>(height) != dst.height) {
    throw Error(Errc::kInvalidArgument, "MJPEG frame is " + std::to_string(width) + "x" +
                                            std::to_string(height) + " but the stream is " +
                                            std::to_string(dst.width) + "x" + std::to_string(dst.height) +
                                            " (frame dropped)");
  }
  if (colorspace != TJCS_YCbCr && colorspace != TJCS_GRAY) {
    throw Error(Errc::kUnsupported, "MJPEG frame is not YCbCr (TurboJPEG colourspace " +
                                        std::to_string(colorspace) +
                                        "): RGB/CMYK JPEGs are not camera frames and are not decoded");
  }
  const int cw = tjPlaneWidth(1, width, subsamp);
  const int ch = tjPlaneHeight(1, height, subsamp);
  if (subsamp != TJSAMP_GRAY && (cw <= 0 || ch <= 0)) {
    throw Error(Errc::kUnsupported,
                std::string("MJPEG chroma subsampling ") + subsampName(subsamp) + " is not supported");
  }

  const bool nv12 = dst.format == PixelFormat::kNV12;
  const int w2 = (width + 1) / 2;
  const int h2 = (height + 1) / 2;
  // Luma always goes straight into dst; chroma too when the JPEG is 4:2:0 and dst is I420.
  std::uint8_t* planes[3] = {dst.data[0], nullptr, nullptr};
  int strides[3] = {static_cast<int>(dst.pitch[0]), 0, 0};
  const bool direct = subsamp == TJSAMP_420 && !nv12;
  const std::size_t nativeBytes = subsamp == TJSAMP_GRAY ? 0 : static_cast<std::size_t>(cw) * ch;
  const std::size_t outBytes = static_cast<std::size_t>(w2) * h2;
  if (direct) {
    planes[1] = dst.data[1];
    planes[2] = dst.data[2];
    strides[1] = static_cast<int>(dst.pitch[1]);
    strides[2] = static_cast<int>(dst.pitch[2]);
  } else if (subsamp != TJSAMP_GRAY) {
    chroma_.resize(2 * nativeBytes + (nv12 ? 2 * outBytes : 0));
    planes[1] = chroma_.data();
    planes[2] = chroma_.data() + nativeBytes;
    strides[1] = strides[2] = cw;
  }
  if (tjDecompressToYUVPlanes(tj, jpeg, static_cast<unsigned long>(size), planes, width, strides, height,
                              0) != 0) {
    if (!harmlessWarning(tj)) fail("tjDecompressToYUVPlanes", what);
    warned = true;
  }
  if (warned) resetHandle();  // do not carry the warning flag into the next frame
  if (direct) return;

  if (subsamp == TJSAMP_GRAY) {
    if (nv12) {
      libyuv::SetPlane(dst.data[1], static_cast<int>(dst.pitch[1]), w2 * 2, h2, 128);
    } else {
      libyuv::SetPlane(dst.data[1], static_cast<int>(dst.pitch[1]), w2, h2, 128);
      libyuv::SetPlane(dst.data[2], static_cast<int>(dst.pitch[2]), w2, h2, 128);
    }
    return;
  }
  // Resample Cb/Cr to 4:2:0 (box filter: the mean of the covered samples; for 4:2:2 the mean of two rows).
  std::uint8_t* u = dst.data[1];
  std::uint8_t* v = dst.data[2];
  int uStride = static_cast<int>(dst.pitch[1]);
  int vStride = static_cast<int>(dst.pitch[2]);
  if (nv12) {
    u = chroma_.data() + 2 * nativeBytes;
    v = u + outBytes;
    uStride = vStride = w2;
  }
  if (subsamp == TJSAMP_420) {  // only reached for NV12 output: already 4:2:0
    u = planes[1];
    v = planes[2];
    uStride = vStride = cw;
  } else {
    libyuv::ScalePlane(planes[1], cw, cw, ch, u, uStride, w2, h2, libyuv::kFilterBox);
    libyuv::ScalePlane(planes[2], cw, cw, ch, v, vStride, w2, h2, libyuv::kFilterBox);
  }
  if (nv12) libyuv::MergeUVPlane(u, uStride, v, vStride, dst.data[1], static_cast<int>(dst.pitch[1]), w2, h2);
}

}  // namespace zerohop::convert
