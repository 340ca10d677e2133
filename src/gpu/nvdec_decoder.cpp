// GpuH264Decoder: the NVDEC parser + decoder on the device's primary context, for H.264 or H.265.
// The parser calls back synchronously from cuvidParseVideoData: sequence (create the decoder from the SPS),
// decode (cuvidDecodePicture), display (queue the picture). decode() then maps the oldest queued picture and
// copies it into the caller's NV12 frame on the decoder's stream. The mapped surface is unmapped at the next
// call, once the copy is known to be done, so the host never waits for it.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <deque>
#include <exception>
#include <string>
#include <unordered_map>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu/nvdec_api.hpp"
#include "gpu/ready_events.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu_decode.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

using nvdec::ContextScope;
using nvdec::NvdecApi;

constexpr std::size_t kMaxQueued = 4;                // pictures waiting for decode(); more: drop the oldest
constexpr unsigned kExtraSurfaces = kMaxQueued + 2;  // + one mapped, + one being decoded
constexpr unsigned kMaxSurfaces = 32;                // NVDEC's limit for H.264 and H.265

const NvdecApi& loadApi() {
  std::string whyNot;
  const NvdecApi* api = NvdecApi::load(&whyNot);
  if (api == nullptr) throw Error(Errc::kUnavailable, "GpuH264Decoder: " + whyNot);
  return *api;
}

std::string sizeText(unsigned w, unsigned h) {
  return std::to_string(w) + "x" + std::to_string(h);
}

const char* codecText(GpuDecodeCodec c) {
  return c == GpuDecodeCodec::kH265 ? "H.265" : "H.264";
}
cudaVideoCodec cuvidCodec(GpuDecodeCodec c) {
  return c == GpuDecodeCodec::kH265 ? cudaVideoCodec_HEVC : cudaVideoCodec_H264;
}

void checkDestination(const Frame& dst) {
  if (dst.format != PixelFormat::kNV12 || dst.memory != MemoryKind::kDevice || dst.data[0] == nullptr ||
      dst.data[1] == nullptr) {
    throw Error(Errc::kInvalidArgument,
                std::string("GpuH264Decoder: the destination must be an NV12 device frame, got ") +
                    std::string(formatName(dst.format)) + " " + memoryKindName(dst.memory));
  }
}

// What travels from an access unit to the picture decoded from it (through the parser's timestamp).
struct UnitMeta {
  std::uint64_t sequence = 0;
  std::int64_t wallClockMs = 0;
  bool keyframe = false;
  StageTimes times{};
};

}  // namespace

struct GpuH264Decoder::Impl {
  Impl(int dev, GpuDecodeCodec c)
      : api(loadApi()), device(dev), codec(c), context(api, dev), stream(dev), copied(dev, /*timing=*/false) {
    ContextScope current(api, context.get());
    CUvideoctxlock lk = nullptr;
    api.check(api.cuvid->cuvidCtxLockCreate(&lk, context.get()), "cuvidCtxLockCreate");
    lock = nvdec::Owned<CUvideoctxlock>(lk, api.cuvid->cuvidCtxLockDestroy, "cuvidCtxLockDestroy");
    CUVIDPARSERPARAMS params{};
    params.CodecType = cuvidCodec(codec);
    params.ulMaxNumDecodeSurfaces = 1;  // the sequence callback returns the real number
    params.ulMaxDisplayDelay = 0;       // low latency: a picture is displayable as soon as it is decoded
    params.ulErrorThreshold = 100;      // decode (and conceal) damaged pictures instead of skipping them
    params.pUserData = this;
    params.pfnSequenceCallback = &Impl::sequenceCallback;
    params.pfnDecodePicture = &Impl::decodeCallback;
    params.pfnDisplayPicture = &Impl::displayCallback;
    CUvideoparser p = nullptr;
    api.check(api.cuvid->cuvidCreateVideoParser(&p, &params), "cuvidCreateVideoParser");
    parser = nvdec::Owned<CUvideoparser>(p, api.cuvid->cuvidDestroyVideoParser, "cuvidDestroyVideoParser");
  }
  ~Impl() {
    try {
      releaseMapped();
      ContextScope current(api, context.get());
      parser.reset();
      decoder.reset();
    } catch (const std::exception& e) {
      log::warn("GpuH264Decoder teardown: ", e.what());
    }
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Destroyed in reverse: parser and decoder (explicitly, context current), events, stream, lock, context.
  const NvdecApi& api;
  int device;
  GpuDecodeCodec codec;
  nvdec::PrimaryContext context;
  nvdec::Owned<CUvideoctxlock> lock;
  CudaStream stream;
  CudaEvent copied;                             // recorded after each copy out of a mapped surface
  gpu_detail::ReadyEvents readyEvents{device};  // one per recent destination buffer
  nvdec::Owned<CUvideodecoder> decoder;
  nvdec::Owned<CUvideoparser> parser;

  CUVIDEOFORMAT format{};  // of the current decoder
  unsigned surfaces = 0;
  unsigned width = 0, height = 0;  // display size
  std::deque<CUVIDPARSERDISPINFO> queued;
  std::unordered_map<std::int64_t, UnitMeta> metas;  // by parser timestamp
  std::int64_t nextTimestamp = 0;
  unsigned long long mappedPtr = 0;
  bool mapped = false;
  bool endOfStreamSent = false;
  bool lastConcealed = false;
  std::uint64_t dropped = 0;
  std::exception_ptr callbackError;

  bool decode(const std::uint8_t* data, std::size_t size, const UnitMeta& meta, Frame& dst);
  bool flush(Frame& dst);
  void parse(CUVIDSOURCEDATAPACKET& packet);
  bool output(Frame& dst);
  void releaseMapped();
  int onSequence(const CUVIDEOFORMAT& f);

  // The parser's C callbacks: an exception must not cross libnvcuvid, so it is kept and rethrown
  // by parse() once cuvidParseVideoData has returned.
  template <class Fn>
  static int guarded(void* user, Fn&& fn) {
    auto* self = static_cast<Impl*>(user);
    try {
      return fn(*self);
    } catch (...) {
      if (!self->callbackError) self->callbackError = std::current_exception();
      return 0;
    }
  }
  static int CUDAAPI sequenceCallback(void* user, CUVIDEOFORMAT* f) {
    return guarded(user, [f](Impl& self) { return self.onSequence(*f); });
  }
  static int CUDAAPI decodeCallback(void* user, CUVIDPICPARAMS* pic) {
    return guarded(user, [pic](Impl& self) {
      if (!self.decoder) throw Error(Errc::kInternal, "GpuH264Decoder: a picture before any sequence header");
      self.api.check(self.api.cuvid->cuvidDecodePicture(self.decoder.get(), pic), "cuvidDecodePicture");
      return 1;
    });
  }
  static int CUDAAPI displayCallback(void* user, CUVIDPARSERDISPINFO* info) {
    return guarded(user, [info](Impl& self) {
      if (info == nullptr) return 1;  // end of stream
      self.queued.push_back(*info);
      while (self.queued.size() > kMaxQueued) {  // live video: drop the oldest
        self.metas.erase(self.queued.front().timestamp);
        self.queued.pop_front();
        ++self.dropped;
      }
      return 1;
    });
  }
};

int GpuH264Decoder::Impl::onSequence(const CUVIDEOFORMAT& f) {
  const std::string name = codecText(codec);
  if (f.codec != cuvidCodec(codec))
    throw Error(Errc::kUnsupported, "GpuH264Decoder: not an " + name + " stream");
  if (f.chroma_format != cudaVideoChromaFormat_420 || f.bit_depth_luma_minus8 != 0 ||
      f.bit_depth_chroma_minus8 != 0) {
    throw Error(Errc::kUnsupported,
                "GpuH264Decoder: " + name + " with chroma format " + std::to_string(f.chroma_format) +
                    " and " + std::to_string(8 + f.bit_depth_luma_minus8) +
                    "-bit luma is not supported (NV12 output: 4:2:0 8-bit only" +
                    (codec == GpuDecodeCodec::kH265 ? ", the Main profile, not Main 10)" : ")"));
  }
  if (api.cuvid->cuvidGetDecoderCaps != nullptr) {
    CUVIDDECODECAPS caps{};
    caps.eCodecType = f.codec;
    caps.eChromaFormat = f.chroma_format;
    caps.nBitDepthMinus8 = f.bit_depth_luma_minus8;
    api.check(api.cuvid->cuvidGetDecoderCaps(&caps), "cuvidGetDecoderCaps");
    if (!caps.bIsSupported) {
      throw Error(Errc::kUnavailable,
                  "GpuH264Decoder: this GPU has no video decoder for " + name + " 4:2:0 8-bit");
    }
    const unsigned mbs = (f.coded_width / 16) * (f.coded_height / 16);
    if (f.coded_width > caps.nMaxWidth || f.coded_height > caps.nMaxHeight || mbs > caps.nMaxMBCount ||
        f.coded_width < caps.nMinWidth || f.coded_height < caps.nMinHeight) {
      throw Error(Errc::kUnsupported, "GpuH264Decoder: " + name + " " +
                                          sizeText(f.coded_width, f.coded_height) +
                                          " is outside what NVDEC decodes on this GPU (" +
                                          sizeText(caps.nMinWidth, caps.nMinHeight) + " .. " +
                                          sizeText(caps.nMaxWidth, caps.nMaxHeight) + ", " +
                                          std::to_string(caps.nMaxMBCount) + " macroblocks)");
    }
  }
  const unsigned wanted = std::max<unsigned>(
      f.min_num_decode_surfaces, std::min(kMaxSurfaces, f.min_num_decode_surfaces + kExtraSurfaces));
  const bool same = decoder && f.coded_width == format.coded_width && f.coded_height == format.coded_height &&
                    f.display_area.left == format.display_area.left &&
                    f.display_area.top == format.display_area.top &&
                    f.display_area.right == format.display_area.right &&
                    f.display_area.bottom == format.display_area.bottom && wanted <= surfaces;
  if (same) return static_cast<int>(surfaces);

  // A new sequence: pictures of the old one can no longer be mapped.
  releaseMapped();
  queued.clear();
  decoder.reset();
  CUVIDDECODECREATEINFO ci{};
  ci.ulWidth = f.coded_width;
  ci.ulHeight = f.coded_height;
  ci.ulMaxWidth = f.coded_width;
  ci.ulMaxHeight = f.coded_height;
  ci.ulNumDecodeSurfaces = wanted;
  ci.CodecType = f.codec;
  ci.ChromaFormat = f.chroma_format;
  ci.bitDepthMinus8 = f.bit_depth_luma_minus8;
  ci.ulCreationFlags = cudaVideoCreate_PreferCUVID;
  ci.OutputFormat = cudaVideoSurfaceFormat_NV12;
  ci.DeinterlaceMode =
      f.progressive_sequence ? cudaVideoDeinterlaceMode_Weave : cudaVideoDeinterlaceMode_Adaptive;
  ci.display_area.left = static_cast<short>(f.display_area.left);
  ci.display_area.top = static_cast<short>(f.display_area.top);
  ci.display_area.right = static_cast<short>(f.display_area.right);
  ci.display_area.bottom = static_cast<short>(f.display_area.bottom);
  ci.ulTargetWidth = static_cast<unsigned>(f.display_area.right - f.display_area.left);
  ci.ulTargetHeight = static_cast<unsigned>(f.display_area.bottom - f.display_area.top);
  ci.ulNumOutputSurfaces = 2;
  ci.vidLock = lock.get();
  CUvideodecoder d = nullptr;
  api.check(api.cuvid->cuvidCreateDecoder(&d, &ci),
            "cuvidCreateDecoder(" + name + " " + sizeText(f.coded_width, f.coded_height) + ")");
  decoder = nvdec::Owned<CUvideodecoder>(d, api.cuvid->cuvidDestroyDecoder, "cuvidDestroyDecoder");
  format = f;
  surfaces = wanted;
  width = static_cast<unsigned>(ci.ulTargetWidth);
  height = static_cast<unsigned>(ci.ulTargetHeight);
  return static_cast<int>(surfaces);
}

void GpuH264Decoder::Impl::parse(CUVIDSOURCEDATAPACKET& packet) {
  ContextScope current(api, context.get());
  callbackError = nullptr;
  const CUresult r = api.cuvid->cuvidParseVideoData(parser.get(), &packet);
  if (callbackError) std::rethrow_exception(std::exchange(callbackError, nullptr));
  api.check(r, "cuvidParseVideoData");
}

void GpuH264Decoder::Impl::releaseMapped() {
  if (!mapped) return;
  copied.synchronize();  // the copy out of the surface finished (long ago, in a live pipeline)
  mapped = false;
  ContextScope current(api, context.get());
  api.check(api.cuvid->cuvidUnmapVideoFrame(decoder.get(), mappedPtr), "cuvidUnmapVideoFrame");
}

bool GpuH264Decoder::Impl::decode(const std::uint8_t* data, std::size_t size, const UnitMeta& meta,
                                  Frame& dst) {
  checkDestination(dst);
  releaseMapped();
  if (size > 0) {
    const std::int64_t ts = nextTimestamp++;
    metas[ts] = meta;
    metas.erase(ts - 64);  // a unit that never produced a picture (dropped as corrupt)
    CUVIDSOURCEDATAPACKET packet{};
    packet.flags = CUVID_PKT_ENDOFPICTURE | CUVID_PKT_TIMESTAMP;
    packet.payload = data;
    packet.payload_size = static_cast<unsigned long>(size);
    packet.timestamp = ts;
    endOfStreamSent = false;
    parse(packet);
  }
  return output(dst);
}

bool GpuH264Decoder::Impl::flush(Frame& dst) {
  checkDestination(dst);
  releaseMapped();
  if (!endOfStreamSent) {
    CUVIDSOURCEDATAPACKET packet{};
    packet.flags = CUVID_PKT_ENDOFSTREAM;
    endOfStreamSent = true;
    parse(packet);
  }
  return output(dst);
}

bool GpuH264Decoder::Impl::output(Frame& dst) {
  if (queued.empty()) return false;
  if (dst.width != width || dst.height != height || dst.pitch[0] < width ||
      dst.pitch[1] < ((width + 1) & ~1u)) {
    throw Error(Errc::kInvalidArgument, "GpuH264Decoder: the destination is " +
                                            sizeText(dst.width, dst.height) + " (pitch " +
                                            std::to_string(dst.pitch[0]) + "), the stream " +
                                            sizeText(width, height) + "; the picture stays queued");
  }
  const CUVIDPARSERDISPINFO info = queued.front();
  queued.pop_front();
  UnitMeta meta;
  if (auto it = metas.find(info.timestamp); it != metas.end()) {
    meta = it->second;
    metas.erase(it);
  }

  ContextScope current(api, context.get());
  CUVIDPROCPARAMS proc{};
  proc.progressive_frame = info.progressive_frame;
  proc.top_field_first = info.top_field_first;
  proc.unpaired_field = info.repeat_first_field < 0;
  proc.output_stream = stream.get();  // cudaStream_t and CUstream are the same handle
  unsigned long long ptr = 0;
  unsigned pitch = 0;
  api.check(api.cuvid->cuvidMapVideoFrame(decoder.get(), info.picture_index, &ptr, &pitch, &proc),
            "cuvidMapVideoFrame");
  mappedPtr = ptr;
  mapped = true;
  CUVIDGETDECODESTATUS status{};
  lastConcealed =
      api.cuvid->cuvidGetDecodeStatus(decoder.get(), info.picture_index, &status) == CUDA_SUCCESS &&
      (status.decodeStatus == cuvidDecodeStatus_Error ||
       status.decodeStatus == cuvidDecodeStatus_Error_Concealed);

  // NV12 surface: luma rows, then chroma at the (even) surface height.
  cuda::DeviceGuard guard(device);
  const auto* luma = reinterpret_cast<const std::uint8_t*>(ptr);
  const std::uint8_t* chroma = luma + static_cast<std::size_t>(pitch) * ((height + 1) & ~1u);
  cuda::check(cudaMemcpy2DAsync(dst.data[0], dst.pitch[0], luma, pitch, width, height,
                                cudaMemcpyDeviceToDevice, stream.get()),
              "cudaMemcpy2DAsync", "NVDEC luma -> frame");
  cuda::check(cudaMemcpy2DAsync(dst.data[1], dst.pitch[1], chroma, pitch, (width + 1) & ~1u, (height + 1) / 2,
                                cudaMemcpyDeviceToDevice, stream.get()),
              "cudaMemcpy2DAsync", "NVDEC chroma -> frame");
  copied.record(stream.get());
  const CudaEvent& ready = readyEvents.record(dst.data[0], stream.get());

  dst.sequence = meta.sequence;
  dst.wallClockMs = meta.wallClockMs;
  dst.keyframe = meta.keyframe;
  dst.times = meta.times;
  dst.times.mark(Stage::kConvert, monotonicNs());
  dst.color = ColorDesc{};
  dst.gpu.readyEvent = ready.get();
  dst.gpu.device = device;
  return true;
}

GpuH264Decoder::GpuH264Decoder(int device) : impl_(std::make_unique<Impl>(device, GpuDecodeCodec::kH264)) {}
GpuH264Decoder::GpuH264Decoder(int device, GpuDecodeCodec codec)
    : impl_(std::make_unique<Impl>(device, codec)) {}
GpuH264Decoder::~GpuH264Decoder() = default;
GpuH264Decoder::GpuH264Decoder(GpuH264Decoder&&) noexcept = default;
GpuH264Decoder& GpuH264Decoder::operator=(GpuH264Decoder&&) noexcept = default;

bool GpuH264Decoder::decode(const std::uint8_t* data, std::size_t size, Frame& dst) {
  UnitMeta meta;
  meta.sequence = static_cast<std::uint64_t>(impl_->nextTimestamp);
  return impl_->decode(data, size, meta, dst);
}

bool GpuH264Decoder::decode(const EncodedUnit& unit, Frame& dst) {
  if (impl_->codec == GpuDecodeCodec::kH264 && unit.codec != Codec::kH264) {
    throw Error(Errc::kInvalidArgument,
                std::string("GpuH264Decoder: not an H.264 unit: ") + std::string(codecName(unit.codec)));
  }
  UnitMeta meta{unit.sequence, unit.wallClockMs, unit.keyframe, unit.times};
  return impl_->decode(unit.bytes.data(), unit.bytes.size(), meta, dst);
}

bool GpuH264Decoder::decode(const Frame& compressed, Frame& dst) {
  const bool h265 = impl_->codec == GpuDecodeCodec::kH265;
  const bool format =
      compressed.format == PixelFormat::kH264 || (h265 && compressed.format == PixelFormat::kUnknown);
  if (!format || compressed.memory == MemoryKind::kDevice) {
    throw Error(Errc::kInvalidArgument, std::string("GpuH264Decoder: the source must be an ") +
                                            codecText(impl_->codec) + " frame in host memory, got " +
                                            std::string(formatName(compressed.format)) + " " +
                                            memoryKindName(compressed.memory));
  }
  UnitMeta meta{compressed.sequence, compressed.wallClockMs, compressed.keyframe, compressed.times};
  return impl_->decode(compressed.data[0], compressed.bytesUsed, meta, dst);
}

bool GpuH264Decoder::flush(Frame& dst) {
  return impl_->flush(dst);
}
std::uint32_t GpuH264Decoder::width() const noexcept {
  return impl_->width;
}
std::uint32_t GpuH264Decoder::height() const noexcept {
  return impl_->height;
}
bool GpuH264Decoder::lastFrameConcealed() const noexcept {
  return impl_->lastConcealed;
}
std::uint64_t GpuH264Decoder::droppedPictures() const noexcept {
  return impl_->dropped;
}
void* GpuH264Decoder::stream() const noexcept {
  return impl_->stream.get();
}
int GpuH264Decoder::device() const noexcept {
  return impl_->device;
}

}  // namespace zerohop
