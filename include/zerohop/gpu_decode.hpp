#pragma once
// H.264 and H.265 decoding on the GPU's video decoder (NVDEC): an Annex B access unit, as a camera or the
// emulated camera delivers one per frame, becomes an NV12 frame in VRAM, with the CUDA event that
// says when it is ready. No CUDA or NVDEC types here (users build without those SDKs): libcuda.so.1 and
// libnvcuvid.so.1 are loaded at run time (nv-codec-headers' dynlink loader), so programs start on
// machines without the NVIDIA driver, and probeNvdec() answers there with the reason.
//
// Latency: the parser runs with no display delay and every access unit is marked
// CUVID_PKT_ENDOFPICTURE, so a stream without B-frames (every camera's) gives its frame back from
// the same decode() call. Streams with B-frames give frames in display order, some calls later;
// flush() returns what is left at the end.
//
// Thread-safety: probeNvdec/describe are reentrant; GpuH264Decoder is thread-bound (one per
// pipeline thread), distinct decoders are independent.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "zerohop/export.h"
#include "zerohop/encoded_unit.hpp"
#include "zerohop/frame.hpp"

namespace zerohop {

/// What probeNvdec found. `available` = false is a normal answer with `reason` in one line.
struct NvdecInfo {
  bool available = false;  ///< H.264 4:2:0 8-bit decode with NV12 output works on this device
  /// Why not, one of: "NVDEC support not built (nv-codec-headers missing at build time)",
  /// "libnvcuvid.so.1 not found: install the NVIDIA driver's decode library (...)",
  /// "no CUDA device (...)", "this GPU has no video decoder for H.264 (cuvidGetDecoderCaps: not supported)",
  /// "<call> failed: <CUresult name>". Empty when available.
  std::string reason;
  int device = -1;
  std::string deviceName;           ///< "NVIDIA H200", when the device could be opened
  int decoders = 0;                 ///< NVDEC engines that decode H.264 (cuvidGetDecoderCaps nNumNVDECs)
  std::uint32_t maxWidth = 0;       ///< largest coded size H.264 decodes at
  std::uint32_t maxHeight = 0;
  std::uint32_t minWidth = 0;       ///< smallest coded size
  std::uint32_t minHeight = 0;
  std::uint32_t maxMacroblocks = 0; ///< coded width * height / 256 must not exceed this
};

/// Probes CUDA device `device` (-1 = device 0): loads the libraries, retains the device's primary
/// context and asks cuvidGetDecoderCaps about H.264 4:2:0 8-bit. Never throws.
ZEROHOP_API NvdecInfo probeNvdec(int device = -1);

/// One line for logs and `zerohop probe`: "H.264 on NVIDIA H200: 7 decoders, up to 4096x4096"
/// or "unavailable: <reason>".
ZEROHOP_API std::string describe(const NvdecInfo& info);

/// The bitstream a GpuH264Decoder takes: H.264 (the default) or H.265/HEVC (Main profile, 4:2:0
/// 8-bit: an IP camera's). Access units are Annex B either way, parameter sets in band.
enum class GpuDecodeCodec : std::uint8_t { kH264, kH265 };

/// Decodes one H.264 (or, constructed with GpuDecodeCodec::kH265, H.265) stream into NV12 device frames.
///
/// Ownership: the decoder owns its NVDEC session, its CUDA stream and a ready event for each of the
/// 32 destination buffers written most recently (valid while the decoder lives, re-recorded each
/// time that buffer is written; as GpuConverter). Destination frames are borrowed: they come from the caller's pool, e.g.
/// BufferPool(computeLayout(kNV12, w, h, 256), n, makeDeviceAllocator(device)).
class ZEROHOP_API GpuH264Decoder {
 public:
  /// Opens the decoder on CUDA device `device` (its primary context, so device pointers are
  /// shared with the CUDA runtime code). Throws Error(kUnavailable) when the libraries or the
  /// device are missing, in probeNvdec's words. The NVDEC session itself is created from the first
  /// sequence header: a GPU without an H.264 decoder is reported by that decode() (kUnavailable).
  explicit GpuH264Decoder(int device = 0);
  /// The same for `codec`'s bitstream (kH265: HEVC Main; Main 10 and 4:4:4 are refused at the first
  /// sequence header with kUnsupported, a GPU without an HEVC decoder with kUnavailable). A stream of the
  /// other codec gives no picture and no error (NVDEC's parser finds no sequence header of its codec in it):
  /// take the codec from the stream's description (an RTSP camera's SDP), never guess it.
  GpuH264Decoder(int device, GpuDecodeCodec codec);
  ~GpuH264Decoder();  ///< waits for its own copies, unmaps, destroys the session; never throws
  GpuH264Decoder(GpuH264Decoder&&) noexcept;
  GpuH264Decoder& operator=(GpuH264Decoder&&) noexcept;
  GpuH264Decoder(const GpuH264Decoder&) = delete;
  GpuH264Decoder& operator=(const GpuH264Decoder&) = delete;

  /// Feeds one access unit (Annex B, start codes included) and, when a picture is ready, copies
  /// it into `dst` (NV12, MemoryKind::kDevice, width() x height(), pixels allocated) on the
  /// decoder's stream and returns true: dst.gpu carries the event recorded after the copy,
  /// sequence / wallClockMs / keyframe / times come from the access unit the picture was coded in,
  /// Stage::kConvert is marked with the time the copy was enqueued.
  /// Returns false when no picture is ready (parameter sets only, a B-frame held for reordering,
  /// a unit the parser dropped as corrupt).
  /// A corrupt unit either throws Error(kDevice, "<call> failed: ...") or comes out concealed
  /// (lastFrameConcealed()); the decoder stays usable and the next IDR decodes cleanly.
  /// Throws Error(kInvalidArgument) when `dst` is not an NV12 device frame of the stream's size;
  /// the picture then stays queued and the next call (with no data: size 0) returns it.
  /// Error(kUnsupported) for a stream NVDEC cannot decode here (not 4:2:0 8-bit, too large).
  bool decode(const std::uint8_t* data, std::size_t size, Frame& dst);
  bool decode(const EncodedUnit& unit, Frame& dst);
  /// A compressed frame as a capture source delivers it (format kH264, or for H.265 kH264 or kUnknown
  /// (PixelFormat has no H.265), host or pinned memory,
  /// bytesUsed bytes at data[0]); its sequence, wall clock, keyframe flag and times travel.
  bool decode(const Frame& compressed, Frame& dst);

  /// End of stream: the first call tells the parser no more data comes; each call returns one of
  /// the pictures still held (B-frame streams) until it returns false.
  bool flush(Frame& dst);

  std::uint32_t width() const noexcept;   ///< display width of the current sequence; 0 before the first SPS
  std::uint32_t height() const noexcept;  ///< display height
  /// NVDEC reported the last returned picture as decoded with errors (concealed or not).
  bool lastFrameConcealed() const noexcept;
  /// Pictures dropped because the caller did not collect them (more than a few queued).
  std::uint64_t droppedPictures() const noexcept;
  void* stream() const noexcept;  ///< the decoder's cudaStream_t
  int device() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerohop
