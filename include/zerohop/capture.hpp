#pragma once
// V4L2 cameras: finding them, asking what they offer, and capturing from them.
//
// openV4l2Source() opens a camera as a FrameSource. Negotiation picks the mode nearest to the
// request (and logs a line when it is not exact). Buffers are V4L2 MMAP buffers, or USERPTR
// buffers from SourceOptions::allocatorFactory (on the GPU path: page-locked memory, so the
// driver's one copy lands where the GPU can DMA from). Each dequeued buffer becomes a FrameLease;
// destroying the lease re-queues the buffer (VIDIOC_QBUF). The capture queue (fd, mappings,
// USERPTR memory) lives until the source and every lease are gone, so no buffer is freed under a
// frame in use.
// No V4L2 header is included here; all kernel types stay in src/capture.
// Thread-safety: the functions are reentrant; the source is a FrameSource (thread-bound, counters()
// thread-safe; leases may be released on any thread).

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zerohop/export.h"
#include "zerohop/source.hpp"

namespace zerohop {

/// One frame size a camera offers for one format, with the frame rates it offers there.
struct CaptureFrameSize {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::vector<double> fps;  ///< fastest first; empty when the driver does not enumerate intervals
};

/// One pixel format a camera offers (VIDIOC_ENUM_FMT) with its sizes (VIDIOC_ENUM_FRAMESIZES).
struct CaptureFormat {
  std::uint32_t fourcc = 0;
  PixelFormat format = PixelFormat::kUnknown;  ///< kUnknown when zerohop cannot consume it
  std::string description;                     ///< the driver's words ("Motion-JPEG")
  bool compressed = false;
  bool stepwise = false;  ///< sizes are a continuous/stepwise range: `sizes` holds its min and max
  std::vector<CaptureFrameSize> sizes;
};

/// What one V4L2 capture node is and offers.
struct CaptureDevice {
  std::string path;
  std::string driver;            ///< "uvcvideo", "zerohop-camemu"
  std::string card;              ///< the camera's name
  std::string busInfo;           ///< "usb-0000:00:14.0-1"
  std::uint32_t deviceCaps = 0;  ///< V4L2 device_caps bits
  bool streaming = false;        ///< V4L2_CAP_STREAMING
  bool mmap = false;             ///< REQBUFS(V4L2_MEMORY_MMAP) accepted
  bool userptr = false;          ///< REQBUFS(V4L2_MEMORY_USERPTR) accepted
  bool exportsDmabuf = false;    ///< VIDIOC_EXPBUF returned a descriptor for an MMAP buffer
  std::vector<CaptureFormat> formats;
};

/// "YUYV", "MJPG": the four characters of a V4L2 FourCC.
ZEROHOP_API std::string fourccString(std::uint32_t fourcc);

/// Device nodes /dev/video0 ... /dev/video63 that exist as character devices, in number order.
ZEROHOP_API std::vector<std::string> listVideoNodes();

/// Queries one node: QUERYCAP, formats, sizes, intervals, which memory modes REQBUFS accepts and
/// whether EXPBUF works (it briefly allocates one MMAP buffer; fails with kUnavailable if the
/// camera is streaming elsewhere). Throws Error (kNotFound if the node does not exist,
/// kUnsupported if it is not a video capture node).
ZEROHOP_API CaptureDevice probeCaptureDevice(const std::string& path);

/// probeCaptureDevice() for every node of listVideoNodes() that is a video capture node
/// (UVC metadata nodes and nodes that fail to open are skipped with a debug log line).
ZEROHOP_API std::vector<CaptureDevice> probeCaptureDevices();

/// A readable description of `device` for `zerohop probe`, e.g.
///   /dev/video0  zerohop emulated camera  (zerohop-camemu, platform:zerohop-camemu)
///     memory: mmap userptr  expbuf: yes
///     MJPG  mjpeg  Motion-JPEG (compressed)
///           640x480    30 15 fps
///           1920x1080  30 15 fps
ZEROHOP_API std::string describeCaptureDevice(const CaptureDevice& device);

/// Opens a V4L2 camera for `spec` (kind "v4l2"): `spec.format`/size/fps are requests (0/kUnknown =
/// the camera's current choice); `spec.options["memory"]` = "mmap" | "userptr" (default: userptr
/// when `options.allocatorFactory` is set, else mmap). Starts streaming before returning.
/// Throws Error: kNotFound (no such node), kUnavailable (busy, unplugged), kUnsupported (not a
/// streaming capture device, memory mode refused, no format zerohop can consume).
ZEROHOP_API std::unique_ptr<FrameSource> openV4l2Source(const SourceSpec& spec, const SourceOptions& options = {});

/// How a reconnecting source retries after its camera disappears: the first retry after
/// `firstDelay`, then doubling up to `maxDelay` between attempts (bounded back-off).
struct ReconnectPolicy {
  std::chrono::milliseconds firstDelay{100};
  std::chrono::milliseconds maxDelay{2000};
};

/// Like openV4l2Source() (and throws like it when the camera cannot be opened now), but survives
/// an unplug: when the camera is lost (Errc::kNotFound / kUnavailable), next() logs it, releases
/// the old capture (leases still out keep their buffers), returns nullopt while the camera is gone
/// (one stall per outage), reopens the same spec with bounded back-off, and resumes. The frame
/// sequence restarts with the new session. Other errors still throw. counters() add up all sessions.
ZEROHOP_API std::unique_ptr<FrameSource> openReconnectingV4l2Source(const SourceSpec& spec,
                                                        const SourceOptions& options = {},
                                                        ReconnectPolicy policy = {});

}  // namespace zerohop
