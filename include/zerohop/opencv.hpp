#pragma once
// OpenCV views of zerohop frames: cv::Mat over host planes, cv::cuda::GpuMat over device planes,
// nothing copied. Header-only and opt-in: it includes OpenCV's headers (<opencv2/core.hpp> and
// <opencv2/core/cuda.hpp>, both of OpenCV's core module: no OpenCV CUDA module is needed, the
// GpuMat data-pointer constructor is in core), so include it only where you use OpenCV and add
// OpenCV's include path and opencv_core (`pkg-config --cflags --libs opencv4`). No other zerohop
// header includes it, and libzerohop does not depend on OpenCV.
//
//   zerohop::Subscriber sub("cam0");
//   auto f = sub.next(std::chrono::seconds(1));
//   cv::Mat y = zerohop::opencv::planeMat(*f, 0);        // CV_8UC1 over the luma plane, in place
//   cv::Mat bgr;
//   cv::cvtColor(zerohop::opencv::yuv420Mat(*f), bgr, cv::COLOR_YUV2BGR_I420);  // I420 share
//   if (!f->valid()) { /* the publisher overwrote the slot while we read: drop bgr */ }
//
// Lifetime: a view borrows the frame's memory. It must not outlive the SharedFrame (or whatever owns
// the Frame's storage): a cv::Mat over user data has no reference count, so copies of the header
// (cv::Mat b = a) do not keep the lease either; clone() to keep pixels longer.
// Access: a SharedFrame's host planes are mapped read-only; writing through its views faults
// (SIGSEGV). Views of a Frame you own (a WriteSlot's, your own buffer's) are writable.
// Device views: the GpuMat's data is a device pointer valid in this process; before a kernel
// reads it, make its stream wait for frame.gpu.readyEvent (cudaStreamWaitEvent; see share.hpp).
// Plane types: Y and I420's U/V CV_8UC1; NV12's UV CV_8UC2 (w/2 x h/2); YUYV/UYVY CV_8UC2 (w x h,
// what cv::COLOR_YUV2BGR_YUY2/_UYVY take); RGB24 CV_8UC3; BGRx/RGBA CV_8UC4.
// Thread-safety: pure functions, reentrant. Errors: zerohop::Error (kInvalidArgument for a plane
// that is not there or memory of the wrong kind, kUnsupported for a layout OpenCV cannot express).

#include <opencv2/core.hpp>
#include <opencv2/core/cuda.hpp>
#include <string>
#include <vector>

#include "zerohop/error.hpp"
#include "zerohop/frame.hpp"
#include "zerohop/pixel_format.hpp"
#include "zerohop/share.hpp"

namespace zerohop::opencv {

namespace detail {

struct PlaneShape {
  int rows = 0;
  int cols = 0;
  int type = 0;
};

inline PlaneShape planeShape(const Frame& f, std::uint32_t plane) {
  const int w = static_cast<int>(f.width);
  const int h = static_cast<int>(f.height);
  switch (f.format) {
    case PixelFormat::kNV12:
      if (plane == 0) return {h, w, CV_8UC1};
      if (plane == 1) return {h / 2, w / 2, CV_8UC2};
      break;
    case PixelFormat::kI420:
      if (plane == 0) return {h, w, CV_8UC1};
      if (plane <= 2) return {h / 2, w / 2, CV_8UC1};
      break;
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY:
      if (plane == 0) return {h, w, CV_8UC2};
      break;
    case PixelFormat::kRGB24:
      if (plane == 0) return {h, w, CV_8UC3};
      break;
    case PixelFormat::kBGRx:
    case PixelFormat::kRGBA:
      if (plane == 0) return {h, w, CV_8UC4};
      break;
    default:
      throw Error(Errc::kUnsupported, "no OpenCV view of a " + std::string(formatName(f.format)) +
                                          " frame (compressed or unknown)");
  }
  throw Error(Errc::kInvalidArgument,
              std::string(formatName(f.format)) + " has no plane " + std::to_string(plane));
}

inline void checkPlane(const Frame& f, std::uint32_t plane) {
  if (plane >= f.planeCount || f.data[plane] == nullptr) {
    throw Error(Errc::kInvalidArgument, "the frame has no plane " + std::to_string(plane));
  }
}

}  // namespace detail

/// cv::Mat over host plane `plane` of `frame` (no copy; step = the plane's pitch). Throws
/// Error(kInvalidArgument) for a device frame (use planeGpuMat) or a plane the format lacks.
inline cv::Mat planeMat(const Frame& frame, std::uint32_t plane) {
  if (frame.memory == MemoryKind::kDevice) {
    throw Error(Errc::kInvalidArgument, "planeMat: the frame is in GPU memory; use planeGpuMat");
  }
  const auto s = detail::planeShape(frame, plane);
  detail::checkPlane(frame, plane);
  return cv::Mat(s.rows, s.cols, s.type, frame.data[plane], frame.pitch[plane]);
}
inline cv::Mat planeMat(const SharedFrame& frame, std::uint32_t plane) {
  return planeMat(frame.frame(), plane);
}

/// One cv::Mat per plane, in plane order.
inline std::vector<cv::Mat> planeMats(const Frame& frame) {
  std::vector<cv::Mat> out;
  for (std::uint32_t p = 0; p < planeCount(frame.format); ++p) out.push_back(planeMat(frame, p));
  return out;
}
inline std::vector<cv::Mat> planeMats(const SharedFrame& frame) {
  return planeMats(frame.frame());
}

/// A packed frame (YUYV, UYVY, RGB24, BGRx, RGBA) as one cv::Mat. Throws Error(kInvalidArgument)
/// for a planar format (use planeMats, or yuv420Mat for cv::cvtColor).
inline cv::Mat imageMat(const Frame& frame) {
  if (planeCount(frame.format) != 1) {
    throw Error(Errc::kInvalidArgument, "imageMat: " + std::string(formatName(frame.format)) +
                                            " is planar; use planeMats or yuv420Mat");
  }
  return planeMat(frame, 0);
}
inline cv::Mat imageMat(const SharedFrame& frame) {
  return imageMat(frame.frame());
}

/// NV12 or I420 as the single (h * 3/2) x w CV_8UC1 Mat cv::cvtColor's COLOR_YUV2BGR_NV12 / _I420
/// take, when the planes lie back to back with one pitch (luma pitch; I420 chroma pitch / 2), as in
/// a share whose rows are not padded beyond that. Throws Error(kUnsupported) otherwise (then
/// convert from planeMats, or copy).
inline cv::Mat yuv420Mat(const Frame& frame) {
  if (frame.memory == MemoryKind::kDevice) {
    throw Error(Errc::kInvalidArgument, "yuv420Mat: the frame is in GPU memory");
  }
  if (frame.format != PixelFormat::kNV12 && frame.format != PixelFormat::kI420) {
    throw Error(Errc::kInvalidArgument,
                "yuv420Mat: " + std::string(formatName(frame.format)) + " is not 4:2:0");
  }
  for (std::uint32_t p = 0; p < planeCount(frame.format); ++p) detail::checkPlane(frame, p);
  const std::size_t pitch = frame.pitch[0];
  const std::size_t lumaBytes = pitch * frame.height;
  bool contiguous = frame.data[1] == frame.data[0] + lumaBytes;
  if (frame.format == PixelFormat::kNV12) {
    contiguous = contiguous && frame.pitch[1] == pitch;
  } else {
    contiguous = contiguous && frame.pitch[1] * 2 == pitch && frame.pitch[2] == frame.pitch[1] &&
                 frame.data[2] == frame.data[1] + std::size_t{frame.pitch[1]} * (frame.height / 2);
  }
  if (!contiguous) {
    throw Error(Errc::kUnsupported,
                "yuv420Mat: the planes are not back to back with one pitch; use planeMats");
  }
  return cv::Mat(static_cast<int>(frame.height + frame.height / 2), static_cast<int>(frame.width), CV_8UC1,
                 frame.data[0], pitch);
}
inline cv::Mat yuv420Mat(const SharedFrame& frame) {
  return yuv420Mat(frame.frame());
}

/// cv::cuda::GpuMat over device plane `plane` (no copy; step = pitch). Throws
/// Error(kInvalidArgument) for a host frame (use planeMat) or a plane the format lacks.
inline cv::cuda::GpuMat planeGpuMat(const Frame& frame, std::uint32_t plane) {
  if (frame.memory != MemoryKind::kDevice) {
    throw Error(Errc::kInvalidArgument, "planeGpuMat: the frame is in host memory; use planeMat");
  }
  const auto s = detail::planeShape(frame, plane);
  detail::checkPlane(frame, plane);
  return cv::cuda::GpuMat(s.rows, s.cols, s.type, frame.data[plane], frame.pitch[plane]);
}
inline cv::cuda::GpuMat planeGpuMat(const SharedFrame& frame, std::uint32_t plane) {
  return planeGpuMat(frame.frame(), plane);
}

}  // namespace zerohop::opencv
