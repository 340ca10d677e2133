// h264_nvenc through libavcodec on the pipeline's CUDA context. See nvenc_encoder.hpp and docs/nvenc.md.
//
// Input path (per frame, no host synchronisation):
//   frame.gpu.readyEvent --cuStreamWaitEvent--> stream_ --(NVENC input reads, nvEncSetIOCudaStreams)
// FFmpeg's nvenc hands hwctx->stream to NVENC as its input/output CUDA stream, so NVENC's reads of
// the surface are ordered after the producer's kernel on the GPU.
//
// Wrap or copy: NVENC registers a CUDA device pointer with one pitch and expects NV12 chroma at
// base + pitch * height. A pipeline buffer with that layout is wrapped as the AVFrame's data (no copy;
// FFmpeg registers each distinct pointer once, up to 64, and maps it per frame). Any other layout is
// copied device-to-device (cuMemcpy2DAsync on stream_, ~10 us at 1080p) into a surface of our
// AVHWFramesContext's pool. Either way nothing crosses PCIe.
#include <dynlink_cuda.h>  // before hwcontext_cuda.h: defines CUDA_VERSION, so it does not want cuda.h

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/buffer.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_cuda.h>
#include <libavutil/rational.h>
}

#include <memory>
#include <string>

#include "annexb.hpp"
#include "av_error.hpp"
#include "encode_step.hpp"
#include "av_handles.hpp"
#include "cuda_driver.hpp"
#include "encoder_config.hpp"
#include "nvenc_encoder.hpp"
#include "nvenc_settings.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop::encode {
namespace {

struct BufferRefDeleter {
  void operator()(AVBufferRef* ref) const noexcept { av_buffer_unref(&ref); }
};
using BufferRefPtr = std::unique_ptr<AVBufferRef, BufferRefDeleter>;

// The pixels stay the pipeline's (a pool slot): nothing is freed when FFmpeg drops its reference.
void noFree(void*, std::uint8_t*) {}

class NvencEncoder final : public VideoEncoder {
 public:
  explicit NvencEncoder(const EncoderConfig& config);

  EncodedUnitPtr encode(const Frame& frame, bool forceKeyframe) override;
  void setBitrate(std::uint32_t kbps) override;
  std::string name() const override;
  EncoderStats stats() const override { return stats_; }

 private:
  void checkFrame(const Frame& frame) const;
  void fillPicture(const Frame& frame);

  EncoderConfig config_;
  int levelIdc_ = 31;
  const char* preset_ = "p1";
  const CudaDriver* cuda_ = nullptr;
  // Declaration order is teardown order reversed: the codec goes first (avcodec_free_context closes
  // the NVENC session, which finishes its work), then the frames and device contexts, then our
  // stream, then the primary context reference.
  PrimaryContext context_;
  CuStream stream_;
  BufferRefPtr device_;   // AVHWDeviceContext (CUDA) on context_, stream_
  BufferRefPtr frames_;   // AVHWFramesContext: AV_PIX_FMT_CUDA / NV12, the copy path's pool
  CodecContextPtr ctx_;
  AvFramePtr picture_;
  AvPacketPtr packet_;
  std::int64_t nextPts_ = 0;
  bool loggedCopy_ = false;
  EncoderStats stats_{};
};

NvencEncoder::NvencEncoder(const EncoderConfig& config)
    : config_(config),
      levelIdc_(h264LevelIdc(config.width, config.height, config.fps, config.bitrateKbps)),
      preset_(nvencPreset(config.preset)) {
  if (config.inputFormat != PixelFormat::kNV12 || config.inputMemory != MemoryKind::kDevice) {
    throw Error(Errc::kInvalidArgument,
                std::string("NVENC takes NV12 frames in GPU memory; this encoder was asked for ") +
                    std::string(formatName(config.inputFormat)) + " in " + memoryKindName(config.inputMemory) +
                    " memory (convert on the GPU to NV12, or use the x264 encoder)");
  }
  const NvencSettings settings = nvencSettings(config, levelIdc_);  // refuses a bad preset or intra refresh first
  const AVCodec* codec = avcodec_find_encoder_by_name("h264_nvenc");
  if (codec == nullptr) {
    throw Error(Errc::kUnavailable,
                "avcodec_find_encoder_by_name(\"h264_nvenc\") found nothing: this FFmpeg was built without NVENC "
                "(--enable-nvenc, nv-codec-headers); use the x264 encoder");
  }
  std::string whyNot;
  cuda_ = CudaDriver::load(&whyNot);
  if (cuda_ == nullptr)
    throw SettingError(Errc::kUnavailable, setting::kEncoder, "NVENC: " + whyNot + "; use the x264 encoder");
  cuda_->check(cuda_->init(0), "cuInit");
  CUdevice dev = 0;
  cuda_->check(cuda_->deviceGet(&dev, config.gpuDevice), "cuDeviceGet(" + std::to_string(config.gpuDevice) + ")");
  context_ = PrimaryContext(*cuda_, dev);
  stream_ = CuStream(*cuda_, context_.get());

  // The CUDA device context is built on *our* context and stream (not av_hwdevice_ctx_create, which
  // would make its own), so FFmpeg, NVENC and the pipeline share one context.
  device_.reset(av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA));
  if (!device_) throw Error(Errc::kDevice, "av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA): out of memory or no CUDA support in FFmpeg");
  auto* hwDevice = reinterpret_cast<AVHWDeviceContext*>(device_->data);
  auto* cudaDevice = static_cast<AVCUDADeviceContext*>(hwDevice->hwctx);
  cudaDevice->cuda_ctx = context_.get();
  cudaDevice->stream = stream_.get();
  if (const int err = av_hwdevice_ctx_init(device_.get()); err < 0) throwAv(Errc::kDevice, "av_hwdevice_ctx_init(CUDA)", err);

  frames_.reset(av_hwframe_ctx_alloc(device_.get()));
  if (!frames_) throw Error(Errc::kDevice, "av_hwframe_ctx_alloc: out of memory");
  auto* hwFrames = reinterpret_cast<AVHWFramesContext*>(frames_->data);
  hwFrames->format = AV_PIX_FMT_CUDA;
  hwFrames->sw_format = AV_PIX_FMT_NV12;
  hwFrames->width = static_cast<int>(config.width);
  hwFrames->height = static_cast<int>(config.height);
  hwFrames->initial_pool_size = 0;  // surfaces only for the copy path, allocated on first use
  if (const int err = av_hwframe_ctx_init(frames_.get()); err < 0) throwAv(Errc::kDevice, "av_hwframe_ctx_init(CUDA NV12)", err);

  ctx_.reset(avcodec_alloc_context3(codec));
  picture_.reset(av_frame_alloc());
  packet_.reset(av_packet_alloc());
  if (!ctx_ || !picture_ || !packet_) throw Error(Errc::kDevice, "avcodec_alloc_context3/av_frame_alloc: out of memory");
  AVCodecContext* c = ctx_.get();
  c->width = static_cast<int>(config.width);
  c->height = static_cast<int>(config.height);
  c->pix_fmt = AV_PIX_FMT_CUDA;
  c->sw_pix_fmt = AV_PIX_FMT_NV12;
  c->hw_frames_ctx = av_buffer_ref(frames_.get());
  if (c->hw_frames_ctx == nullptr) throw Error(Errc::kDevice, "av_buffer_ref: out of memory");
  c->framerate = av_d2q(config.fps, 1001000);
  c->time_base = av_inv_q(c->framerate);
  c->flags &= ~AV_CODEC_FLAG_GLOBAL_HEADER;  // h264_nvenc then sets repeatSPSPPS: SPS/PPS before every IDR
  c->color_range = config.color.range == ColorRange::kFull ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
  c->colorspace = config.color.matrix == ColorMatrix::kBt709 ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M;
  applyNvencSettings(c, settings);  // the lowest-latency settings, nvenc_settings.hpp

  if (const int err = avcodec_open2(c, codec, nullptr); err < 0) {
    throwAv(Errc::kDevice, "avcodec_open2(h264_nvenc)", err,
            "NVENC refused the settings or the session (see the h264_nvenc log line above; "
            "`zerohop probe` says whether a session can open)");
  }
  log::info("encoder: ", name(), ", ", config.width, "x", config.height, "@", config.fps, ", level ", levelIdc_ / 10,
            ".", levelIdc_ % 10, ", ",
            config.keyframeIntervalFrames == 0 ? std::string("IDRs on request only")
            : config.intraRefresh ? "intra refresh every " + std::to_string(config.keyframeIntervalFrames) + " frames"
                                  : "an IDR every " + std::to_string(config.keyframeIntervalFrames) + " frames",
            ", CUDA device ", config.gpuDevice);
}

void NvencEncoder::setBitrate(std::uint32_t kbps) {
  validateBitrate(kbps);
  if (h264LevelIdc(config_.width, config_.height, config_.fps, kbps) > levelIdc_) {
    throw Error(Errc::kInvalidArgument, "bitrate " + std::to_string(kbps) + " kb/s exceeds the stream's H.264 level " +
                                            std::to_string(levelIdc_ / 10) + "." + std::to_string(levelIdc_ % 10) +
                                            "; restart the stream with that bitrate instead");
  }
  // h264_nvenc compares these with its NVENC configuration before every frame and calls
  // nvEncReconfigureEncoder when they differ, if the GPU reports NV_ENC_CAPS_SUPPORT_DYN_BITRATE_CHANGE
  // (FFmpeg nvenc.c reconfig_encoder); otherwise the change is ignored (FFmpeg logs nothing).
  config_.bitrateKbps = kbps;
  applyNvencBitrate(ctx_.get(), kbps, config_.fps);
}

std::string NvencEncoder::name() const {
  return std::string("h264_nvenc (") + preset_ + ", tune ull, CBR " + std::to_string(config_.bitrateKbps) + " kb/s)";
}

void NvencEncoder::checkFrame(const Frame& frame) const {
  if (frame.memory != MemoryKind::kDevice || frame.format != PixelFormat::kNV12 || frame.width != config_.width ||
      frame.height != config_.height) {
    throw Error(Errc::kInvalidArgument,
                "NVENC encoder was opened for NV12 " + std::to_string(config_.width) + "x" + std::to_string(config_.height) +
                    " in GPU memory but got " + std::string(formatName(frame.format)) + " " + std::to_string(frame.width) + "x" +
                    std::to_string(frame.height) + " in " + memoryKindName(frame.memory) + " memory");
  }
  if (frame.gpu.device >= 0 && frame.gpu.device != config_.gpuDevice) {
    throw Error(Errc::kInvalidArgument, "frame is on CUDA device " + std::to_string(frame.gpu.device) +
                                            " but the NVENC encoder runs on device " + std::to_string(config_.gpuDevice));
  }
  for (int i = 0; i < 2; ++i) {
    if (frame.data[i] == nullptr || frame.pitch[i] < frame.width) {
      throw Error(Errc::kInvalidArgument, "NV12 plane " + std::to_string(i) + " has no memory or a pitch (" +
                                              std::to_string(frame.pitch[i]) + ") shorter than a row");
    }
  }
}

void NvencEncoder::fillPicture(const Frame& frame) {
  AVFrame* pic = picture_.get();
  const bool nvencLayout = frame.pitch[1] == frame.pitch[0] &&
                           frame.data[1] == frame.data[0] + static_cast<std::size_t>(frame.pitch[0]) * frame.height;
  if (nvencLayout) {
    // Zero copy: NVENC reads the pipeline's buffer (registered once per distinct pointer by FFmpeg).
    pic->format = AV_PIX_FMT_CUDA;
    pic->width = static_cast<int>(config_.width);
    pic->height = static_cast<int>(config_.height);
    pic->data[0] = frame.data[0];
    pic->data[1] = frame.data[1];
    pic->linesize[0] = static_cast<int>(frame.pitch[0]);
    pic->linesize[1] = static_cast<int>(frame.pitch[1]);
    pic->buf[0] = av_buffer_create(frame.data[0], 1, noFree, nullptr, 0);
    pic->hw_frames_ctx = av_buffer_ref(frames_.get());
    if (pic->buf[0] == nullptr || pic->hw_frames_ctx == nullptr) throw Error(Errc::kDevice, "av_buffer_create: out of memory");
    return;
  }
  // Another layout: one device-to-device copy per plane into a pool surface, on stream_ (after the wait).
  if (const int err = av_hwframe_get_buffer(frames_.get(), pic, 0); err < 0) throwAv(Errc::kDevice, "av_hwframe_get_buffer(CUDA)", err);
  if (!loggedCopy_) {
    loggedCopy_ = true;
    log::info("encoder: NVENC copies each frame device-to-device (the buffer's chroma is not at luma + pitch * height)");
  }
  for (int plane = 0; plane < 2; ++plane) {
    CUDA_MEMCPY2D copy{};
    copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.srcDevice = reinterpret_cast<CUdeviceptr>(frame.data[plane]);
    copy.srcPitch = frame.pitch[plane];
    copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.dstDevice = reinterpret_cast<CUdeviceptr>(pic->data[plane]);
    copy.dstPitch = static_cast<std::size_t>(pic->linesize[plane]);
    copy.WidthInBytes = config_.width;
    copy.Height = plane == 0 ? config_.height : config_.height / 2;
    cuda_->check(cuda_->memcpy2DAsync(&copy, stream_.get()), "cuMemcpy2DAsync (NV12 plane into the NVENC surface)");
  }
}

EncodedUnitPtr NvencEncoder::encode(const Frame& frame, bool forceKeyframe) {
  checkFrame(frame);
  {
    ScopedCurrentContext current(*cuda_, context_.get());
    // GPU ordering travels with the frame: NVENC (and the copy) wait on the GPU, the host never does.
    // A cudaEvent_t is a CUevent (the runtime's events are the driver's).
    if (frame.gpu.readyEvent != nullptr) {
      cuda_->check(cuda_->streamWaitEvent(stream_.get(), static_cast<CUevent>(frame.gpu.readyEvent), 0),
                   "cuStreamWaitEvent(frame.gpu.readyEvent)");
    }
    fillPicture(frame);
  }
  AVFrame* pic = picture_.get();
  pic->pts = nextPts_++;
  pic->pict_type = forceKeyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
  pic->color_range = ctx_->color_range;
  pic->colorspace = ctx_->colorspace;
  // delay=0: h264_nvenc locks the bitstream (waits for this frame's encode) inside receive_packet,
  // then unmaps the input and drops its reference, so the pipeline's slot is free when we return.
  return encodeOneFrame(ctx_.get(), pic, packet_.get(), frame, "h264_nvenc", Codec::kH264, config_.width,
                        config_.height, stats_);
}

}  // namespace

std::unique_ptr<VideoEncoder> makeNvencEncoder(const EncoderConfig& config) {
  return std::make_unique<NvencEncoder>(config);
}

}  // namespace zerohop::encode
