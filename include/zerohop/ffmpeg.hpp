#pragma once
// Shared frames as FFmpeg AVFrames, and AVFrames into shares. Part of libzerohop in media builds
// (zerohop/version.h: ZEROHOP_HAS_STREAM). This header includes no FFmpeg header: AVFrame and
// AVBufferRef are only declared, so include <libavutil/frame.h> yourself where you touch them.
//
// Out (wrapAsAVFrame): nothing is copied. A host frame becomes a plain AVFrame (NV12, YUV420P,
// YUYV422, UYVY422, RGB24, BGR0, RGBA) whose data[] point into the ring; a device frame becomes an
// AV_PIX_FMT_CUDA frame whose data[] are the slot's device pointers, with an AVHWFramesContext
// (sw_format NV12, ...) on an AVHWDeviceContext built on the CUDA device's *primary* context, the
// one the CUDA runtime and zerohop use (cudaDeviceContext()). The SharedFrame's lease moves into the
// frame's buffer (buf[0]): it is released when the last AVBufferRef to it goes (av_frame_free /
// av_frame_unref of the frame and of every av_frame_ref/av_frame_clone made from it). Device frames:
// the device context's stream waits for the producer's event before anything FFmpeg queues on it,
// and the release waits for that stream, so the slot is not given back under a kernel still reading it.
// Keep the time you hold a frame short: a held lease takes a slot out of the publisher's rotation;
// wrappedFrameIntact() is SharedFrame::valid() for a wrapped frame (call it after reading the pixels).
//
// In (publishAVFrame): the AVFrame's planes are copied into the publisher's next slot (the one
// copy a publish makes); a CUDA AVFrame is copied on its device context's stream (that context must
// be the device's primary context: frames from cudaDeviceContext() or hwupload on it qualify).
//
// Timestamps: wrapped frames carry pts = capture time (CLOCK_MONOTONIC ns) with time_base 1/1e9;
// publishAVFrame stamps Stage::kCapture from `captureNs` (default: now).
// Thread-safety: all functions are thread-safe; the AVFrames are thread-bound like any AVFrame (their
// buffer release is thread-safe). Ownership: wrapAsAVFrame takes the SharedFrame and transfers the
// AVFrame to the caller; publishAVFrame borrows the AVFrame for the call.

#include <cstdint>
#include <memory>

#include "zerohop/export.h"
#include "zerohop/pixel_format.hpp"
#include "zerohop/share.hpp"

struct AVFrame;
struct AVBufferRef;

namespace zerohop {

/// av_frame_free for AVFramePtr.
struct ZEROHOP_API AVFrameDeleter {
  void operator()(AVFrame* frame) const noexcept;
};
using AVFramePtr = std::unique_ptr<AVFrame, AVFrameDeleter>;

/// Wraps `frame` (host or device image) as an AVFrame without copying, taking its lease. Throws
/// Error: kInvalidArgument (empty SharedFrame), kUnsupported (an encoded unit or a format FFmpeg
/// has no pixel format for; a device frame in a build without the CUDA driver loader), kUnavailable
/// (device frame but libcuda.so.1 cannot be loaded), kDevice (an FFmpeg or CUDA call failed).
ZEROHOP_API AVFramePtr wrapAsAVFrame(SharedFrame&& frame);

/// SharedFrame::valid() of the lease a wrapAsAVFrame frame (or a ref of it) holds: false once the
/// publisher overwrote the slot (what was read may be torn). False for frames zerohop did not wrap.
ZEROHOP_API bool wrappedFrameIntact(const AVFrame& frame) noexcept;

/// Copies `frame` (a host AVFrame of a supported pixel format, or AV_PIX_FMT_CUDA with such a
/// sw_format) into `publisher`'s next slot. Format and size must match the ring's layout. Throws
/// Error: kInvalidArgument (mismatch, negative linesize), kUnsupported (pixel format), kDevice.
ZEROHOP_API void publishAVFrame(Publisher& publisher, const AVFrame& frame, std::int64_t captureNs = 0);

/// A new reference to the AV_HWDEVICE_TYPE_CUDA device context zerohop uses for CUDA device
/// `device`: its primary context and a non-blocking stream of zerohop's (one per device, kept for
/// the life of the process). Use it for filter graphs and hwupload so frames meet on one context.
/// The caller av_buffer_unref()s it. Throws like wrapAsAVFrame for device frames.
ZEROHOP_API AVBufferRef* cudaDeviceContext(int device);

/// The AVPixelFormat (an int here; AV_PIX_FMT_NONE = -1) for a zerohop format, and back
/// (kUnknown when zerohop has no such format).
ZEROHOP_API int toAVPixelFormat(PixelFormat format) noexcept;
ZEROHOP_API PixelFormat fromAVPixelFormat(int avPixelFormat) noexcept;

}  // namespace zerohop
