// wrapAsAVFrame: a SharedFrame's planes as an AVFrame, the lease owned by the frame's buf[0].
#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_set>

extern "C" {
#include <libavutil/buffer.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>
}

#include "cuda_device.hpp"
#include "zerohop/error.hpp"
#include "zerohop/ffmpeg.hpp"

namespace zerohop {
namespace {

// What buf[0] owns: the lease, and for device frames the device whose stream reads the slot.
struct WrappedLease {
  SharedFrame frame;
  const ffmpeg_detail::CudaDevice* cuda = nullptr;
};

// The leases alive now, so wrappedFrameIntact() can tell zerohop's buffers from anyone else's.
std::mutex gLiveMutex;
std::unordered_set<const void*>& liveLeases() {
  static auto* live = new std::unordered_set<const void*>();  // process lifetime: frees run until exit
  return *live;
}

void releaseLease(void* opaque, std::uint8_t*) noexcept {
  auto* lease = static_cast<WrappedLease*>(opaque);
  {
    std::lock_guard lock(gLiveMutex);
    liveLeases().erase(lease);
  }
  // Work FFmpeg queued on the device's stream may still read the slot: it finishes first.
  if (lease->cuda) ffmpeg_detail::streamSynchronize(*lease->cuda);
  delete lease;
}

}  // namespace

AVFramePtr wrapAsAVFrame(SharedFrame&& shared) {
  if (!shared) throw Error(Errc::kInvalidArgument, "wrapAsAVFrame: empty SharedFrame");
  const Frame& f = shared.frame();
  if (isCompressed(f.format)) {
    throw Error(Errc::kUnsupported, std::string("wrapAsAVFrame: ") + std::string(formatName(f.format)) +
                                        " units are packets, not frames (read them from the share's Frame)");
  }
  const int avFormat = toAVPixelFormat(f.format);
  if (avFormat == AV_PIX_FMT_NONE) {
    throw Error(Errc::kUnsupported,
                "wrapAsAVFrame: no FFmpeg pixel format for " + std::string(formatName(f.format)));
  }
  const ImageLayout layout = computeLayout(f.format, f.width, f.height);

  AVFramePtr av(av_frame_alloc());
  if (!av) throw Error(Errc::kDevice, "av_frame_alloc: out of memory");
  av->width = static_cast<int>(f.width);
  av->height = static_cast<int>(f.height);
  av->color_range = f.color.range == ColorRange::kFull ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
  av->colorspace = f.color.matrix == ColorMatrix::kBt709 ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M;
  av->pts = f.captureNs();
  av->time_base = AVRational{1, 1'000'000'000};
  av->key_frame = 1;
  std::uint8_t* lo = f.data[0];
  std::uint8_t* hi = f.data[0];
  for (std::uint32_t i = 0; i < f.planeCount && i < layout.planeCount; ++i) {
    av->data[i] = f.data[i];
    av->linesize[i] = static_cast<int>(f.pitch[i]);
    lo = std::min(lo, f.data[i]);
    hi = std::max(hi, f.data[i] + std::size_t{f.pitch[i]} * layout.planes[i].rows);
  }

  auto lease = std::make_unique<WrappedLease>();
  if (f.memory == MemoryKind::kDevice) {
    const auto& dev = ffmpeg_detail::cudaDevice(f.gpu.device < 0 ? 0 : f.gpu.device);
    av->format = AV_PIX_FMT_CUDA;
    av->hw_frames_ctx =
        ffmpeg_detail::framesContextRef(dev, static_cast<AVPixelFormat>(avFormat), av->width, av->height);
    // Whatever FFmpeg queues on the device's stream runs after the producer's write.
    if (f.gpu.readyEvent) ffmpeg_detail::streamWaitEvent(dev, f.gpu.readyEvent);
    lease->cuda = &dev;
  } else {
    av->format = avFormat;
  }
  lease->frame = std::move(shared);
  // One buffer spans every plane (AVFrame.buf allows a single buffer for all the data); read-only,
  // so av_frame_make_writable() copies instead of writing into the ring.
  AVBufferRef* buf = av_buffer_create(lo, static_cast<std::size_t>(hi - lo), releaseLease, lease.get(),
                                      AV_BUFFER_FLAG_READONLY);
  if (!buf) throw Error(Errc::kDevice, "av_buffer_create: out of memory");  // `lease` still owns the frame
  {
    std::lock_guard lock(gLiveMutex);
    liveLeases().insert(lease.get());
  }
  lease.release();  // owned by buf now
  av->buf[0] = buf;
  return av;
}

bool wrappedFrameIntact(const AVFrame& frame) noexcept {
  if (!frame.buf[0]) return false;
  void* opaque = av_buffer_get_opaque(frame.buf[0]);
  std::lock_guard lock(gLiveMutex);
  if (!liveLeases().contains(opaque)) return false;
  return static_cast<const WrappedLease*>(opaque)->frame.valid();
}

AVBufferRef* cudaDeviceContext(int device) {
  return ffmpeg_detail::deviceContextRef(ffmpeg_detail::cudaDevice(device));
}

}  // namespace zerohop
