// GpuJpegDecoder: nvJPEG into NV12 / I420 device frames. Decoupled API (host phase, transfer,
// device phase with two alternating pinned buffers) for the hybrid backends, nvjpegDecodeBatched for
// the hardware backend and for batches; on the hardware backend a frame with row-aligned restart
// markers is cut into strips (jpeg_strips) decoded as one batch by several engines; chroma reduced
// to 4:2:0 by jpeg_chroma.cu.
#include <algorithm>
#include <string>
#include <vector>

#include "core/payload_check.hpp"
#include "gpu/buffers_in_turn.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu/jpeg_chroma.hpp"
#include "gpu/jpeg_handles.hpp"
#include "gpu/jpeg_plan.hpp"
#include "gpu/jpeg_strips.hpp"
#include "gpu/ready_events.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/gpu_jpeg.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

nvjpegBackend_t nvBackend(JpegBackend b) {
  switch (b) {
    case JpegBackend::kHardware: return NVJPEG_BACKEND_HARDWARE;
    case JpegBackend::kHybrid: return NVJPEG_BACKEND_HYBRID;
    case JpegBackend::kDefault: return NVJPEG_BACKEND_DEFAULT;
    default: return NVJPEG_BACKEND_GPU_HYBRID;
  }
}

// The destination checks that do not need the JPEG header.
void checkFrames(const Frame& jpeg, const Frame& dst) {
  if (jpeg.format != PixelFormat::kMJPEG) {
    throw Error(Errc::kInvalidArgument,
                "GpuJpegDecoder: source must be MJPEG, got " + std::string(formatName(jpeg.format)));
  }
  if (jpeg.memory == MemoryKind::kDevice) {
    throw Error(Errc::kInvalidArgument, "GpuJpegDecoder: the JPEG must be in host or pinned memory");
  }
  if (const char* defect = core_detail::mjpegDefect(jpeg.data[0], jpeg.bytesUsed)) {
    throw Error(Errc::kInvalidArgument, std::string("GpuJpegDecoder: not a whole JPEG: ") + defect + " (" +
                                            std::to_string(jpeg.bytesUsed) + " bytes, sequence " +
                                            std::to_string(jpeg.sequence) + ")");
  }
  if (dst.memory != MemoryKind::kDevice || !dst.data[0] || !dst.data[1] ||
      (dst.format == PixelFormat::kI420 && !dst.data[2])) {
    throw Error(Errc::kInvalidArgument, "GpuJpegDecoder: destination must be an allocated device frame");
  }
}

struct Prepared {
  jpeg::Geometry geometry;
  jpeg::ChromaPlan plan;
  nvjpegImage_t out{};
  kernels::JpegChromaIn chroma{};
};

}  // namespace

struct GpuJpegDecoder::Impl {
  Impl(int dev, JpegBackend requested);
  ~Impl() {
    // Work in flight writes into buffers owned here and into caller frames: finish it first.
    if (stream.get()) cuda::logIfFailed(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize(jpeg)");
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  const jpeg::Library& lib;
  int device;
  JpegBackend backend = JpegBackend::kGpuHybrid;
  std::string why;  // why this backend
  CudaStream stream;

  // Batched path (the hardware backend for every frame; any backend for decodeBatch).
  jpeg::LibraryHandle batchHandle;
  jpeg::StateHandle batchState;
  int batchSize = 0;
  // Decoupled path (the hybrid backends; streams the hardware refuses).
  jpeg::LibraryHandle ownHandle;  // empty when the decoupled path shares batchHandle
  nvjpegHandle_t handle = nullptr;
  jpeg::DecoderHandle decoder;
  jpeg::StateHandle state;
  jpeg::DeviceBufferHandle deviceBuffer;
  jpeg::PinnedBufferHandle pinned[2];
  jpeg::StreamHandle parsed[2];
  jpeg::StreamHandle header;  // headers only: geometry and the hardware support check
  BuffersInTurn pinnedTurn;  // pinned[i] is refilled once the transfer that read it has run
  jpeg::ParamsHandle params;

  // Restart strips (hardware backend): the strip JPEGs of a frame in one of two page-locked buffers,
  // alternating; a buffer is rewritten only after the event recorded behind the decode that read it.
  int stripLimit = GpuJpegDecoder::kDefaultRestartStrips;
  int minStripRows = GpuJpegDecoder::kDefaultMinStripRows;
  int lastStrips = 1;
  jpeg::StateHandle stripState;
  int stripBatchSize = 0;
  PinnedBuffer stripBytes[2];
  BuffersInTurn stripTurn;
  std::vector<const unsigned char*> stripData;
  std::vector<std::size_t> stripLengths;
  std::vector<nvjpegImage_t> stripOuts;

  DeviceBuffer scratch;  // chroma planes for the kernel, one region per frame of a batch
  gpu_detail::ReadyEvents readyEvents{device};

  void createDecoupled(nvjpegBackend_t b);
  void rebuildDecoupledState() noexcept;
  jpeg::Geometry geometryOf(nvjpegJpegStream_t s) const;
  Prepared prepare(const jpeg::Geometry& g, const Frame& dst, std::uint8_t* scratchBase) const;
  std::uint8_t* scratchFor(std::size_t bytes);
  void finish(const Prepared& p, Frame& dst);
  jpeg::Geometry readHeader(const Frame& jpeg, std::size_t index);
  bool hardwareTakesHeader();
  void decodeDecoupled(const Frame& jpeg, const jpeg::Geometry& g, Frame& dst);
  void decodeBatched(std::span<const Frame* const> jpegs, std::span<Frame* const> dsts);
  void decodeStrips(const Frame& jpeg, const jpeg::StripPlan& plan, const jpeg::Geometry& g, Frame& dst);
  void stamp(const Frame& jpeg, Frame& dst, Completion completion);
};

GpuJpegDecoder::Impl::Impl(int dev, JpegBackend requested) : lib(jpeg::requireNvjpeg()), device(dev) {
  const GpuInfo gpu = probeGpu(dev);
  if (!gpu.available) throw Error(Errc::kUnavailable, "GpuJpegDecoder: no CUDA device: " + gpu.reason);
  cuda::DeviceGuard guard(dev);
  stream = CudaStream(dev);
  if (requested == JpegBackend::kAuto || requested == JpegBackend::kHardware) {
    std::string info;
    batchHandle = jpeg::tryHardwareHandle(lib, info);
    if (batchHandle) {
      backend = JpegBackend::kHardware;
      why = info;
    } else if (requested == JpegBackend::kHardware) {
      throw Error(Errc::kUnsupported, "GpuJpegDecoder: " + info);
    } else {
      backend = JpegBackend::kGpuHybrid;
      why = info;
    }
  } else {
    backend = requested;
    why = "asked for";
  }
  if (backend == JpegBackend::kHardware) {
    // Streams the engines refuse (progressive, 4:1:x) take the GPU-hybrid decoupled path.
    ownHandle = jpeg::createLibraryHandle(lib, NVJPEG_BACKEND_DEFAULT);
    handle = ownHandle.get();
    createDecoupled(NVJPEG_BACKEND_GPU_HYBRID);
  } else {
    batchHandle = jpeg::createLibraryHandle(lib, nvBackend(backend));
    handle = batchHandle.get();
    createDecoupled(nvBackend(backend));
  }
  batchState = jpeg::createBatchedState(lib, batchHandle.get());
  header = jpeg::createJpegStream(lib, batchHandle.get());
  if (backend == JpegBackend::kHardware) {
    stripState = jpeg::createBatchedState(lib, batchHandle.get());
    stripTurn.create(device);
  }
}

void GpuJpegDecoder::Impl::createDecoupled(nvjpegBackend_t b) {
  decoder = jpeg::createDecoder(lib, handle, b);
  deviceBuffer = jpeg::createDeviceBuffer(lib, handle);
  for (int i = 0; i < 2; ++i) {
    pinned[i] = jpeg::createPinnedBuffer(lib, handle);
    parsed[i] = jpeg::createJpegStream(lib, handle);
  }
  pinnedTurn.create(device);
  params = jpeg::createDecodeParams(lib, handle, NVJPEG_OUTPUT_YUV);
  state = jpeg::createDecoderState(lib, handle, decoder.get());
  jpeg::check(lib.stateAttachDeviceBuffer(state.get(), deviceBuffer.get()), "nvjpegStateAttachDeviceBuffer");
}

// After a failed decode nvJPEG's state may hold half a frame: wait for what was enqueued, then start
// from a fresh state with the same buffers. Logs, never throws (the caller is already throwing).
void GpuJpegDecoder::Impl::rebuildDecoupledState() noexcept {
  cuda::logIfFailed(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize(jpeg recovery)");
  pinnedTurn.forget();
  stripTurn.forget();
  try {
    state.reset();
    state = jpeg::createDecoderState(lib, handle, decoder.get());
    jpeg::check(lib.stateAttachDeviceBuffer(state.get(), deviceBuffer.get()), "nvjpegStateAttachDeviceBuffer");
    batchState.reset();
    batchState = jpeg::createBatchedState(lib, batchHandle.get());
    batchSize = 0;
    if (stripState) {
      stripState.reset();
      stripState = jpeg::createBatchedState(lib, batchHandle.get());
      stripBatchSize = 0;
    }
  } catch (const std::exception& e) {
    try {
      log::error(std::string("GpuJpegDecoder: could not rebuild the decoder state: ") + e.what());
    } catch (...) {
    }
  }
}

jpeg::Geometry GpuJpegDecoder::Impl::geometryOf(nvjpegJpegStream_t s) const {
  jpeg::Geometry g;
  unsigned w = 0, h = 0, n = 0;
  jpeg::check(lib.jpegStreamGetFrameDimensions(s, &w, &h), "nvjpegJpegStreamGetFrameDimensions");
  jpeg::check(lib.jpegStreamGetComponentsNum(s, &n), "nvjpegJpegStreamGetComponentsNum");
  g.width = w;
  g.height = h;
  g.components = n;
  if (n >= 2) {
    unsigned cw = 0, ch = 0;
    jpeg::check(lib.jpegStreamGetComponentDimensions(s, 1, &cw, &ch), "nvjpegJpegStreamGetComponentDimensions");
    g.chromaWidth = cw;
    g.chromaHeight = ch;
  }
  return g;
}

std::uint8_t* GpuJpegDecoder::Impl::scratchFor(std::size_t bytes) {
  if (scratch.size() < bytes) {
    stream.synchronize();  // earlier frames' kernels may still read the old buffer
    scratch.reset();
    scratch = DeviceBuffer(device, bytes);
  }
  return scratch.data();
}

Prepared GpuJpegDecoder::Impl::prepare(const jpeg::Geometry& g, const Frame& dst, std::uint8_t* base) const {
  Prepared p;
  p.geometry = g;
  p.plan = jpeg::planChroma(g, dst.format, dst.width, dst.height);
  p.out.channel[0] = dst.data[0];
  p.out.pitch[0] = dst.pitch[0];
  using Kind = jpeg::ChromaPlan::Kind;
  if (p.plan.kind == Kind::kDirect) {
    for (int c = 1; c < 3; ++c) {
      p.out.channel[c] = dst.data[c];
      p.out.pitch[c] = dst.pitch[c];
    }
  } else if (p.plan.kind == Kind::kResample) {
    const std::size_t planeBytes = std::size_t(p.plan.scratchPitch) * p.plan.scratchRows;
    for (int c = 1; c < 3; ++c) {
      p.out.channel[c] = base + planeBytes * (c - 1);
      p.out.pitch[c] = p.plan.scratchPitch;
    }
    p.chroma.cb = p.out.channel[1];
    p.chroma.cr = p.out.channel[2];
    p.chroma.pitch = p.plan.scratchPitch;
    p.chroma.sx = p.plan.sx;
    p.chroma.sy = p.plan.sy;
  }
  return p;
}

// The chroma kernel (unless nvJPEG wrote the planes directly) and the ready event.
void GpuJpegDecoder::Impl::finish(const Prepared& p, Frame& dst) {
  if (p.plan.kind != jpeg::ChromaPlan::Kind::kDirect) {
    kernels::PlanesOut out;
    for (std::uint32_t i = 0; i < 3; ++i) {
      out.data[i] = dst.data[i];
      out.pitch[i] = dst.pitch[i];
    }
    kernels::jpegChromaTo420(p.chroma, dst.format == PixelFormat::kNV12 ? kernels::Out420::kNV12 : kernels::Out420::kI420,
                             out, dst.width, dst.height, stream.get());
  }
  dst.gpu.readyEvent = readyEvents.record(dst.data[0], stream.get()).get();
  dst.gpu.device = device;
}

// Parses only the header (cheap; nothing is allocated for the declared size) into `header`.
jpeg::Geometry GpuJpegDecoder::Impl::readHeader(const Frame& jpeg, std::size_t index) {
  jpeg::check(lib.jpegStreamParseHeader(batchHandle.get(), jpeg.data[0], jpeg.bytesUsed, header.get()),
              "nvjpegJpegStreamParseHeader",
              "frame " + std::to_string(index) + ", " + std::to_string(jpeg.bytesUsed) + " bytes");
  return geometryOf(header.get());
}

// Hardware backend: whether the engines take the stream whose header is in `header`.
bool GpuJpegDecoder::Impl::hardwareTakesHeader() {
  int unsupported = 1;
  jpeg::check(lib.decodeBatchedSupported(batchHandle.get(), header.get(), &unsupported),
              "nvjpegDecodeBatchedSupported");
  return unsupported == 0;
}

void GpuJpegDecoder::Impl::decodeDecoupled(const Frame& jpeg, const jpeg::Geometry& g, Frame& dst) {
  const jpeg::ChromaPlan plan = jpeg::planChroma(g, dst.format, dst.width, dst.height);  // before any work
  // The host phase of this frame overlaps the device phase of the previous one; only the pinned
  // buffer this frame reuses must be free (its copy to the device, two frames ago, done).
  const int i = pinnedTurn.acquire();
  nvjpegJpegStream_t s = parsed[i].get();
  jpeg::check(lib.jpegStreamParse(handle, jpeg.data[0], jpeg.bytesUsed, 0, 0, s), "nvjpegJpegStreamParse");
  const Prepared p = prepare(g, dst, plan.scratchBytes ? scratchFor(plan.scratchBytes) : nullptr);
  jpeg::check(lib.stateAttachPinnedBuffer(state.get(), pinned[i].get()), "nvjpegStateAttachPinnedBuffer");
  jpeg::check(lib.decodeJpegHost(handle, decoder.get(), state.get(), params.get(), s), "nvjpegDecodeJpegHost");
  jpeg::check(lib.decodeJpegTransferToDevice(handle, decoder.get(), state.get(), s, stream.get()),
              "nvjpegDecodeJpegTransferToDevice");
  pinnedTurn.readOn(stream.get());
  nvjpegImage_t out = p.out;
  jpeg::check(lib.decodeJpegDevice(handle, decoder.get(), state.get(), &out, stream.get()), "nvjpegDecodeJpegDevice");
  finish(p, dst);
}

void GpuJpegDecoder::Impl::decodeBatched(std::span<const Frame* const> jpegs, std::span<Frame* const> dsts) {
  const std::size_t n = jpegs.size();
  std::vector<jpeg::Geometry> geometry(n);
  std::size_t scratchTotal = 0;
  std::vector<std::size_t> scratchAt(n);
  for (std::size_t k = 0; k < n; ++k) {
    geometry[k] = readHeader(*jpegs[k], k);
    const jpeg::ChromaPlan plan = jpeg::planChroma(geometry[k], dsts[k]->format, dsts[k]->width, dsts[k]->height);
    scratchAt[k] = scratchTotal;
    scratchTotal += (plan.scratchBytes + 255) / 256 * 256;
  }
  std::uint8_t* base = scratchTotal ? scratchFor(scratchTotal) : nullptr;
  std::vector<Prepared> prepared;
  prepared.reserve(n);
  std::vector<nvjpegImage_t> outs(n);
  std::vector<const unsigned char*> data(n);
  std::vector<std::size_t> lengths(n);
  for (std::size_t k = 0; k < n; ++k) {
    prepared.push_back(prepare(geometry[k], *dsts[k], base ? base + scratchAt[k] : nullptr));
    outs[k] = prepared.back().out;
    data[k] = jpegs[k]->data[0];
    lengths[k] = jpegs[k]->bytesUsed;
  }
  if (batchSize != static_cast<int>(n)) {
    jpeg::check(lib.decodeBatchedInitialize(batchHandle.get(), batchState.get(), static_cast<int>(n), 1,
                                            NVJPEG_OUTPUT_YUV),
                "nvjpegDecodeBatchedInitialize", "batch of " + std::to_string(n));
    batchSize = static_cast<int>(n);
  }
  jpeg::check(lib.decodeBatched(batchHandle.get(), batchState.get(), data.data(), lengths.data(), outs.data(),
                                stream.get()),
              "nvjpegDecodeBatched", std::string(jpeg::backendText(nvBackend(backend))) + ", batch of " +
                                         std::to_string(n));
  for (std::size_t k = 0; k < n; ++k) finish(prepared[k], *dsts[k]);
}

// One frame as strips, one batched call: strip k's planes start at its first row of each of the
// destination's (or the chroma scratch's) planes; then the chroma step of the whole frame.
void GpuJpegDecoder::Impl::decodeStrips(const Frame& jpeg, const jpeg::StripPlan& plan,
                                        const jpeg::Geometry& g, Frame& dst) {
  const jpeg::ChromaPlan chroma = jpeg::planChroma(g, dst.format, dst.width, dst.height);
  const Prepared p = prepare(g, dst, chroma.scratchBytes ? scratchFor(chroma.scratchBytes) : nullptr);
  const int i = stripTurn.acquire();  // the engines may still read the strips of two frames ago
  const std::size_t total = plan.totalBytes();
  if (stripBytes[i].size() < total) {
    stripBytes[i].reset();
    stripBytes[i] = PinnedBuffer(device, total + total / 4);
  }
  const std::size_t n = plan.strips.size();
  stripData.resize(n);
  stripLengths.resize(n);
  stripOuts.resize(n);
  const std::span<const std::uint8_t> src(jpeg.data[0], jpeg.bytesUsed);
  std::size_t at = 0;
  for (std::size_t k = 0; k < n; ++k) {
    std::uint8_t* to = stripBytes[i].data() + at;
    stripLengths[k] = jpeg::writeStrip(plan, src, k, std::span<std::uint8_t>(to, total - at));
    if (stripLengths[k] == 0)
      throw Error(Errc::kInternal,
                  "GpuJpegDecoder: restart strip " + std::to_string(k) + " does not fit the strip buffer");
    stripData[k] = to;
    at += stripLengths[k];
    stripOuts[k] = p.out;
    for (std::uint32_t c = 0; c < 3; ++c) {
      if (!stripOuts[k].channel[c]) continue;
      const std::uint32_t component = std::min(c, plan.components - 1);
      stripOuts[k].channel[c] +=
          std::size_t(plan.componentRow(component, plan.strips[k].firstRow)) * p.out.pitch[c];
    }
  }
  if (stripBatchSize != static_cast<int>(n)) {
    jpeg::check(lib.decodeBatchedInitialize(batchHandle.get(), stripState.get(), static_cast<int>(n), 1,
                                            NVJPEG_OUTPUT_YUV),
                "nvjpegDecodeBatchedInitialize", std::to_string(n) + " strips");
    stripBatchSize = static_cast<int>(n);
  }
  jpeg::check(lib.decodeBatched(batchHandle.get(), stripState.get(), stripData.data(), stripLengths.data(),
                                stripOuts.data(), stream.get()),
              "nvjpegDecodeBatched",
              "hardware, " + std::to_string(n) + " restart strips of frame " + std::to_string(jpeg.sequence));
  stripTurn.readOn(stream.get());
  finish(p, dst);
}

void GpuJpegDecoder::Impl::stamp(const Frame& jpeg, Frame& dst, Completion completion) {
  dst.sequence = jpeg.sequence;
  dst.wallClockMs = jpeg.wallClockMs;
  dst.keyframe = true;
  dst.times = jpeg.times;
  dst.color = ColorDesc{ColorMatrix::kBt601, ColorRange::kFull};  // JFIF
  if (completion == Completion::kWait) {
    cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(dst.gpu.readyEvent)), "cudaEventSynchronize(jpeg)");
  }
  const std::int64_t now = monotonicNs();
  dst.times.mark(Stage::kIngest, now);
  dst.times.mark(Stage::kConvert, now);
}

GpuJpegDecoder::GpuJpegDecoder(int device, JpegBackend backend) : impl_(std::make_unique<Impl>(device, backend)) {}
GpuJpegDecoder::~GpuJpegDecoder() = default;
GpuJpegDecoder::GpuJpegDecoder(GpuJpegDecoder&&) noexcept = default;
GpuJpegDecoder& GpuJpegDecoder::operator=(GpuJpegDecoder&&) noexcept = default;

void GpuJpegDecoder::decode(const Frame& jpeg, Frame& dst, Completion completion) {
  checkFrames(jpeg, dst);
  Impl& d = *impl_;
  cuda::DeviceGuard guard(d.device);
  const jpeg::Geometry g = d.readHeader(jpeg, 0);
  jpeg::planChroma(g, dst.format, dst.width, dst.height);  // size and format checks before any work
  try {
    d.lastStrips = 1;
    const bool hardware = d.backend == JpegBackend::kHardware && d.hardwareTakesHeader();
    jpeg::StripPlan strips;
    if (hardware && d.stripLimit > 1) {
      const std::uint32_t byHeight =
          std::max<std::uint32_t>(2, g.height / static_cast<std::uint32_t>(d.minStripRows));
      strips = jpeg::planStrips({jpeg.data[0], jpeg.bytesUsed},
                                std::min(static_cast<std::uint32_t>(d.stripLimit), byHeight));
    }
    if (hardware && strips.splits() && strips.width == g.width && strips.height == g.height) {
      d.decodeStrips(jpeg, strips, g, dst);
      d.lastStrips = static_cast<int>(strips.strips.size());
    } else if (hardware) {
      const Frame* in[1] = {&jpeg};
      Frame* out[1] = {&dst};
      d.decodeBatched(in, out);
    } else {
      d.decodeDecoupled(jpeg, g, dst);
    }
  } catch (const Error&) {
    d.rebuildDecoupledState();  // nvJPEG or CUDA failed part-way: start the next frame from a clean state
    throw;
  }
  d.stamp(jpeg, dst, completion);
}

void GpuJpegDecoder::decodeBatch(std::span<const Frame* const> jpegs, std::span<Frame* const> dsts,
                                 Completion completion) {
  if (jpegs.size() != dsts.size() || jpegs.empty()) {
    throw Error(Errc::kInvalidArgument, "GpuJpegDecoder::decodeBatch: " + std::to_string(jpegs.size()) +
                                            " JPEGs for " + std::to_string(dsts.size()) + " destinations");
  }
  for (std::size_t k = 0; k < jpegs.size(); ++k) checkFrames(*jpegs[k], *dsts[k]);
  Impl& d = *impl_;
  cuda::DeviceGuard guard(d.device);
  try {
    d.decodeBatched(jpegs, dsts);
  } catch (const Error&) {
    d.rebuildDecoupledState();
    throw;
  }
  for (std::size_t k = 0; k < jpegs.size(); ++k) d.stamp(*jpegs[k], *dsts[k], completion);
}

void GpuJpegDecoder::setRestartStrips(int maxStrips, int minStripRows) {
  if (maxStrips < 1 || maxStrips > 64 || minStripRows < 1) {
    throw Error(Errc::kInvalidArgument, "GpuJpegDecoder::setRestartStrips: " + std::to_string(maxStrips) +
                                            " strips of at least " + std::to_string(minStripRows) +
                                            " rows (1 strip = off, at most 64; rows >= 1)");
  }
  impl_->stripLimit = maxStrips;
  impl_->minStripRows = minStripRows;
}
int GpuJpegDecoder::restartStrips() const noexcept {
  return impl_->stripLimit;
}
int GpuJpegDecoder::lastStripCount() const noexcept {
  return impl_->lastStrips;
}
JpegBackend GpuJpegDecoder::backend() const noexcept { return impl_->backend; }
const char* GpuJpegDecoder::backendName() const noexcept { return jpegBackendName(impl_->backend); }
std::string GpuJpegDecoder::describe() const {
  return "nvJPEG " + impl_->lib.version + " " + backendName() + " (" + impl_->why + ") on device " +
         std::to_string(impl_->device);
}
void* GpuJpegDecoder::stream() const noexcept { return impl_->stream.get(); }
int GpuJpegDecoder::device() const noexcept { return impl_->device; }

}  // namespace zerohop
