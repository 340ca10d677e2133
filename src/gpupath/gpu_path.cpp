// GpuFramePath: source frame (raw, or MJPEG decoded by nvJPEG) -> NV12 in VRAM (a device share slot or a frame of our own) -> optional
// page-locked host copy. See src/gpupath/gpu_path.hpp and docs/gpu.md ("serve's GPU path").
//
// Per frame, all on the converter's stream (no host synchronisation unless hostCopy):
//   [share: acquireWrite] -> GpuConverter::convert (one DMA + one kernel) or GpuJpegDecoder::decode
//   (nvJPEG; the hardware engines where the GPU has them), either recording the dst's event
//   -> [share: commit on the writer's stream: the slot's interprocess event follows the write]
//   -> [hostCopy: cudaMemcpy2DAsync per plane into the pinned frame; cudaStreamSynchronize]
// downloadLast() makes the same copy after process() returned (the device frame is still the last one).
// The device frame is not overwritten before the next process(): the share ring never hands the
// slot it just published to its writer again, and our own pool has two frames used in turn.
#include <cuda_runtime_api.h>

#include <optional>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/gpu_convert.hpp"
#include "zerohop/gpu_jpeg.hpp"
#include "gpupath/gpu_path.hpp"
#include "gpu/jpeg_batcher.hpp"
#include "zerohop/log.hpp"
#include "zerohop/setting_error.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

constexpr std::uint32_t kDevicePitchAlign = 256;
constexpr std::uint32_t kOwnDeviceFrames = 2;

void checkSize(const GpuPathConfig& c) {
  if (c.width == 0 || c.height == 0 || c.width % 2 != 0 || c.height % 2 != 0) {
    throw Error(Errc::kInvalidArgument, "GPU path: NV12 needs an even, non-zero size; got " + std::to_string(c.width) +
                                            "x" + std::to_string(c.height));
  }
}

}  // namespace

struct GpuFramePath::Impl {
  explicit Impl(const GpuPathConfig& c)
      : config(c), layout(GpuFramePath::deviceLayout(c.width, c.height)) {
    checkSize(c);
    if (c.sourceFormat == PixelFormat::kMJPEG && c.batchJpeg) {
      batcher = JpegBatcher::forDevice(c.device);
    } else if (c.sourceFormat == PixelFormat::kMJPEG) {
      jpeg.emplace(c.device);
    } else if (GpuConverter::supports(c.sourceFormat, PixelFormat::kNV12)) {
      converter.emplace(c.device, IngestMode::kCopy);
    } else {
      throw SettingError(Errc::kInvalidArgument, setting::kGpu,
                         std::string("GPU path: no CUDA conversion from ") + std::string(formatName(c.sourceFormat)) +
                             " to NV12; set gpu to \"off\" (the CPU path)");
    }
    if (c.share) {
      share = c.share;
    } else if (!c.shareName.empty()) {
      ShareOptions options;
      options.directory = c.shareDirectory;
      ownShare.emplace(c.shareName, SlotLayout::deviceImages(layout, c.shareSlots, c.device), options);
      share = &*ownShare;
    } else {
      ownFrames.emplace(layout, kOwnDeviceFrames, makeDeviceAllocator(c.device));
    }
    if (c.hostCopy) allocateHost();
  }

  void allocateHost() {
    hostFrames.emplace(computeLayout(PixelFormat::kNV12, config.width, config.height, 64), 1,
                       makePinnedAllocator(config.device));
    hostLease = hostFrames->tryAcquire();
  }

  Frame* deviceTarget() {
    if (share) {
      slot = share->acquireWrite();
      shareFrame = slot.frame();
      return &shareFrame;
    }
    std::optional<FrameLease> next = ownFrames->tryAcquire();  // the older of the two comes free first
    if (!next) {
      current.reset();
      next = ownFrames->tryAcquire();
    }
    if (!next) throw Error(Errc::kInternal, "GPU path: no free device frame (both leased)");
    current = std::move(next);
    return &current->frame();
  }

  // Says on the first frame, and when it changes (3 lines at most), whether the camera's JPEGs are split at their
  // restart markers over several JPEG engines or decoded whole by one (about 3x slower at 1080p).
  void noteStrips() {
    if (jpeg->backend() != JpegBackend::kHardware) return;  // strips need the hardware engines
    const int strips = jpeg->lastStripCount();
    if (stripNotes > 0 && (strips > 1) == (loggedStrips > 1)) return;
    if (stripNotes == kStripNotes) return;  // a camera that keeps switching is not logged every frame
    ++stripNotes;
    loggedStrips = strips;
    if (strips > 1) {
      log::info("MJPEG: the camera's frames have restart markers at MCU-row boundaries: each is decoded as ", strips,
                " strips on the JPEG engines at once");
    } else {
      log::info("MJPEG: the camera's frames are decoded whole, each by one JPEG engine (no restart markers at "
                "MCU-row boundaries, or too few rows to split): about 3x the time of a split frame at 1080p "
                "(docs/gpu.md, MJPEG)");
    }
  }

  // The stream that writes the device frames; the share commit and the download are ordered on it.
  // The batcher's frames have none of ours: they are ordered by their ready event.
  void* writerStream() const noexcept {
    return jpeg ? jpeg->stream() : converter ? converter->stream() : nullptr;
  }

  void download(const Frame& dev, Frame& host) {
    cuda::DeviceGuard guard(config.device);
    auto* stream = static_cast<cudaStream_t>(writerStream());
    if (!stream) {
      if (!ownStream.get()) ownStream = CudaStream(config.device);
      stream = ownStream.get();
      cuda::check(cudaStreamWaitEvent(stream, static_cast<cudaEvent_t>(dev.gpu.readyEvent), 0),
                  "cudaStreamWaitEvent(batched JPEG ready)");
    }
    for (std::uint32_t p = 0; p < dev.planeCount; ++p) {
      const std::uint32_t rows = p == 0 ? dev.height : dev.height / 2;
      cuda::check(cudaMemcpy2DAsync(host.data[p], host.pitch[p], dev.data[p], dev.pitch[p], dev.width, rows,
                                    cudaMemcpyDeviceToHost, stream),
                  "cudaMemcpy2DAsync(device NV12 -> pinned host)");
    }
    cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize(GPU path download)");
  }

  // Copies `dev` (the frame process() just wrote) into the page-locked frame, with its metadata.
  const Frame& downloadInto(const Frame& dev) {
    Frame& host = hostLease->frame();
    download(dev, host);
    host.sequence = dev.sequence;
    host.wallClockMs = dev.wallClockMs;
    host.keyframe = dev.keyframe;
    host.color = dev.color;
    host.times = dev.times;
    hostCurrent = true;
    return host;
  }

  const Frame& downloadLast() {
    if (!last) {
      throw Error(Errc::kInvalidArgument, "GPU path: no frame to download (none processed, or the last one failed)");
    }
    if (hostCurrent) return hostLease->frame();
    if (!hostLease) allocateHost();
    return downloadInto(*last);
  }

  GpuPathOutput process(const Frame& src) {
    last = nullptr;
    hostCurrent = false;
    Frame* dst = deviceTarget();
    if (batcher) {
      batcher->decode(src, *dst);
    } else if (jpeg) {
      jpeg->decode(src, *dst);
      noteStrips();
    } else {
      converter->convert(src, *dst);
    }
    if (share && batcher) {
      share->commit(std::move(slot), *dst);  // the share's stream waits on dst.gpu.readyEvent
    } else if (share) {
      share->commit(std::move(slot), *dst, writerStream());
    }
    last = dst;
    GpuPathOutput out{dst, nullptr};
    if (config.hostCopy) {
      Frame& host = hostLease->frame();
      downloadInto(*dst);
      host.times.mark(Stage::kConvert, monotonicNs());
      out.host = &host;
    }
    return out;
  }

  GpuPathConfig config;
  ImageLayout layout;
  std::optional<GpuConverter> converter;  // raw sources
  std::optional<GpuJpegDecoder> jpeg;      // MJPEG, this path's own decoder
  std::shared_ptr<JpegBatcher> batcher;    // MJPEG with batchJpeg: the device's shared one
  CudaStream ownStream;                    // the download's, with the batcher
  static constexpr int kStripNotes = 3;
  int stripNotes = 0;    // lines noteStrips() has logged
  int loggedStrips = 0;  // the strip count it last reported
  std::optional<Publisher> ownShare;  // config.shareName without config.share
  Publisher* share = nullptr;         // the share written into: the caller's or ownShare
  WriteSlot slot;
  Frame shareFrame;
  std::optional<BufferPool> ownFrames;
  std::optional<FrameLease> current;
  std::optional<BufferPool> hostFrames;  // hostCopy, or since the first downloadLast()
  std::optional<FrameLease> hostLease;
  const Frame* last = nullptr;  // the device frame the last successful process() wrote
  bool hostCurrent = false;     // hostLease holds a copy of `last`
};

ImageLayout GpuFramePath::deviceLayout(std::uint32_t width, std::uint32_t height) {
  return computeLayout(PixelFormat::kNV12, width, height, kDevicePitchAlign);
}

GpuFramePath::GpuFramePath(const GpuPathConfig& config) : impl_(std::make_unique<Impl>(config)) {}
GpuFramePath::~GpuFramePath() = default;

GpuPathOutput GpuFramePath::process(const Frame& src) { return impl_->process(src); }
const Frame& GpuFramePath::downloadLast() { return impl_->downloadLast(); }

std::string GpuFramePath::describe() const {
  const GpuPathConfig& c = impl_->config;
  std::string s = "GPU path on CUDA device " + std::to_string(c.device) + ": " + std::string(formatName(c.sourceFormat)) +
                  " -> NV12 in VRAM (" + (impl_->batcher ? impl_->batcher->describe() : impl_->jpeg ? impl_->jpeg->describe() : std::string("one DMA + one kernel")) + ")";
  if (impl_->share) s += "; device share '" + impl_->share->name() + "'";
  if (c.hostCopy) s += "; one copy back to pinned host memory for the host encoder";
  return s;
}

std::uint32_t GpuFramePath::shareReaders() const {
  return impl_->share ? impl_->share->stats().readersConnected : 0;
}

std::string GpuFramePath::shareSocketPath() const { return impl_->share ? impl_->share->socketPath() : std::string{}; }

}  // namespace zerohop
