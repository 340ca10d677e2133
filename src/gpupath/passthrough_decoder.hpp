#pragma once
// What decodes a passed-through camera's access units into pictures beside the passthrough
// (PassthroughPictures, src/pipeline/passthrough_pictures.hpp), and writes each picture kept into the
// frame share: libavcodec into I420 in host memory (makeCpuPassthroughDecoder, the pipeline's), or NVDEC
// into NV12 in VRAM (makeNvdecPassthroughDecoder, here: the GPU path's device share gets the camera's
// pictures with no trip through the CPU).
// A decoder is made at each start (the units since the camera's last IDR are its first input) and
// dropped when nothing wants pictures or the chain of units broke.
// Thread-safety: thread-bound (the pictures thread). Ownership: borrows the frame share (may be null).

#include <memory>
#include <string>

#include "zerohop/encoded_unit.hpp"
#include "zerohop/frame.hpp"

namespace zerohop {

class Publisher;

class PassthroughDecoder {
 public:
  virtual ~PassthroughDecoder() = default;
  /// Decodes one access unit (Annex B, parameter sets before each IDR). With `keep` (the picture is
  /// wanted) returns its picture, written into the frame share too: valid until the next call, its
  /// sequence, wall clock and times its unit's, Stage::kConvert the decode's end (on the GPU, when its
  /// copy was queued: frame.gpu carries the event). Returns null when the unit brings no picture, or
  /// without `keep` (a start's catch-up). Throws Error(kUnsupported) for a stream it cannot decode at all
  /// (never tried again), any other Error for a unit it refused (the next IDR decodes).
  virtual const Frame* decode(const EncodedUnit& unit, bool keep) = 0;
  /// The last picture in host memory, for an encoder that takes host frames (VP8): the picture itself on
  /// the CPU; on the GPU one download of it now. Valid until the next decode(). Throws Error.
  virtual const Frame* hostPicture() = 0;
  /// "libavcodec H.264 (CPU)", "NVDEC H.264 on CUDA device 0".
  virtual std::string name() const = 0;
};

namespace gpupath {

/// NVDEC on CUDA `device` into NV12 in VRAM at `width` x `height` (the camera's announced size), each
/// picture kept also copied (on the GPU) into `deviceShare`'s slot when it is non-null: a share made with
/// GpuFramePath::deviceLayout(width, height). Throws Error(kUnavailable) with the reason where NVDEC
/// cannot be used (a build without CUDA, no driver, no device).
std::unique_ptr<PassthroughDecoder> makeNvdecPassthroughDecoder(int device, std::uint32_t width,
                                                                std::uint32_t height, Publisher* deviceShare);

}  // namespace gpupath
}  // namespace zerohop
