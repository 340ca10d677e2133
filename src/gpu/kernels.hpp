#pragma once
// Internal: the colour-conversion kernels' launchers. Pointers may be device pointers or, for
// zero-copy ingest, device views of mapped page-locked host memory. Each launcher checks the launch.
// Thread-safety: reentrant.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace zerohop::kernels {

struct PlanesIn {
  const std::uint8_t* data[3] = {};
  std::uint32_t pitch[3] = {};
};
struct PlanesOut {
  std::uint8_t* data[3] = {};
  std::uint32_t pitch[3] = {};
};

enum class Packed422 : std::uint8_t { kYUYV, kUYVY };
enum class Out420 : std::uint8_t { kNV12, kI420 };
enum class RgbLayout : std::uint8_t { kRGB24, kBGRx, kRGBA };

/// Y = yOffset + yR*R + yG*G + yB*B; U = 128 + uR*R + uG*G + uB*B; V likewise; rounded half up, clamped.
struct RgbToYuv {
  float yR, yG, yB, yOffset;
  float uR, uG, uB;
  float vR, vG, vB;
};

/// R = Y' + rV V, G = Y' + gU U + gV V, B = Y' + bU U with Y' = (Y - yOffset) yScale, U = Cb - 128,
/// V = Cr - 128; rounded half up, clamped.
struct YuvToRgb {
  float yScale, yOffset;
  float rV, gU, gV, bU;
};

/// Signalled ingest (IngestMode::kSignalledCopy): the kernel may start before the source has landed;
/// each thread block waits for its rows on the GPU. Another stream copies the source in row bands and,
/// after band k, sets `*flag` to firstTicket + k (StreamFlag). A block converting rows up to r waits
/// (one thread, acquire loads, __nanosleep backoff) until the flag has reached the ticket of r's band,
/// compared wrap-safe: int32(flag - ticket) >= 0, so a stale (older) value never matches. It gives up
/// after kSignalTimeoutNs of GPU time: it writes its ticket to `*error` (mapped host memory, read by
/// the host) and returns without writing. Blocks never wait for each other: no deadlock whatever
/// number of them is resident.
struct IngestSignal {
  const std::uint32_t* flag = nullptr;  ///< device word the copy stream sets to each band's ticket
  std::uint32_t firstTicket = 0;        ///< ticket of band 0 (bands count up from it)
  std::uint32_t bandRows = 0;           ///< source rows per band, even and > 0
  std::uint32_t* error = nullptr;       ///< where a block that timed out writes its ticket
};
constexpr unsigned long long kSignalTimeoutNs = 100'000'000;  // 100 ms

/// YUYV/UYVY (plane 0) -> NV12 (planes 0,1) or I420 (planes 0,1,2). width, height even.
/// With `signal`, each block first waits for its rows' band as IngestSignal describes.
void packed422To420(Packed422 in, Out420 out, const PlanesIn& src, const PlanesOut& dst, std::uint32_t width,
                    std::uint32_t height, cudaStream_t stream, const IngestSignal* signal = nullptr);

/// RGB24/BGRx/RGBA (plane 0) -> NV12 / I420. Chroma from the mean R,G,B of each 2x2 block.
void rgbTo420(RgbLayout in, Out420 out, const PlanesIn& src, const PlanesOut& dst, std::uint32_t width,
              std::uint32_t height, const RgbToYuv& coeffs, cudaStream_t stream);

/// Chroma only: NV12 UV plane (src.data[1]) -> I420 U, V (dst.data[1], dst.data[2]).
void nv12ChromaToI420(const PlanesIn& src, const PlanesOut& dst, std::uint32_t width, std::uint32_t height,
                      cudaStream_t stream);
/// Chroma only: I420 U, V (src.data[1], src.data[2]) -> NV12 UV (dst.data[1]).
void i420ChromaToNv12(const PlanesIn& src, const PlanesOut& dst, std::uint32_t width, std::uint32_t height,
                      cudaStream_t stream);

/// Source and destination layouts of resample().
enum class SampleIn : std::uint8_t { kYUYV, kUYVY, kNV12, kI420, kRGB24, kBGRx, kRGBA };
enum class SampleOut : std::uint8_t { kNV12, kI420, kRGBA };

/// Source region (src planes point at its first pixel) and destination sizes, in (luma) pixels.
struct ResampleSize {
  std::uint32_t srcWidth, srcHeight;
  std::uint32_t dstWidth, dstHeight;
};

/// Bilinear scaling with pixel centres aligned, fused with the format conversion: one thread per
/// dst pixel (RGBA) or 2x2 dst block (NV12 / I420) reads the source planes and writes dst. Source
/// position of dst sample d: (d + 0.5) * srcSize / dstSize - 0.5, clamped to the plane, per plane
/// grid (chroma on its own grid). Equal sizes give exact copies of the samples. `toYuv` is used for
/// RGB -> NV12 / I420, `toRgb` for YUV -> RGBA. Any pitch and alignment; 4:2:0 sizes even.
void resample(SampleIn in, SampleOut out, const PlanesIn& src, const PlanesOut& dst, const ResampleSize& size,
              const RgbToYuv& toYuv, const YuvToRgb& toRgb, cudaStream_t stream);

}  // namespace zerohop::kernels
