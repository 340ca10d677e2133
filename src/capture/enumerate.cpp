#include "capture/enumerate.hpp"

#include <fcntl.h>
#include <linux/videodev2.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstring>

#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::capture_detail {

std::vector<double> enumerateRates(const V4l2Device& device, std::uint32_t fourcc, std::uint32_t width,
                                   std::uint32_t height) {
  std::vector<double> rates;
  for (std::uint32_t i = 0; i < 64; ++i) {
    v4l2_frmivalenum fi{};
    fi.index = i;
    fi.pixel_format = fourcc;
    fi.width = width;
    fi.height = height;
    if (device.tryIoctl(VIDIOC_ENUM_FRAMEINTERVALS, &fi) != 0) break;  // EINVAL ends the list
    if (fi.type == V4L2_FRMIVAL_TYPE_DISCRETE) {
      if (fi.discrete.numerator)
        rates.push_back(static_cast<double>(fi.discrete.denominator) / fi.discrete.numerator);
    } else {  // continuous/stepwise: the fastest and the slowest
      if (fi.stepwise.min.numerator)
        rates.push_back(static_cast<double>(fi.stepwise.min.denominator) / fi.stepwise.min.numerator);
      if (fi.stepwise.max.numerator)
        rates.push_back(static_cast<double>(fi.stepwise.max.denominator) / fi.stepwise.max.numerator);
      break;
    }
  }
  std::sort(rates.begin(), rates.end(), std::greater<>());
  rates.erase(std::unique(rates.begin(), rates.end()), rates.end());
  return rates;
}

std::vector<CaptureFormat> enumerateFormats(const V4l2Device& device) {
  std::vector<CaptureFormat> formats;
  for (std::uint32_t i = 0; i < 256; ++i) {
    v4l2_fmtdesc fd{};
    fd.index = i;
    fd.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (const int err = device.tryIoctl(VIDIOC_ENUM_FMT, &fd); err != 0) {
      if (err != EINVAL) device.fail("VIDIOC_ENUM_FMT", err);
      break;
    }
    CaptureFormat f;
    f.fourcc = fd.pixelformat;
    f.format = formatFromFourcc(fd.pixelformat).value_or(PixelFormat::kUnknown);
    f.description = reinterpret_cast<const char*>(fd.description);
    f.compressed = (fd.flags & V4L2_FMT_FLAG_COMPRESSED) != 0;
    for (std::uint32_t j = 0; j < 256; ++j) {
      v4l2_frmsizeenum fs{};
      fs.index = j;
      fs.pixel_format = fd.pixelformat;
      if (device.tryIoctl(VIDIOC_ENUM_FRAMESIZES, &fs) != 0) break;
      if (fs.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
        f.sizes.push_back({fs.discrete.width, fs.discrete.height,
                           enumerateRates(device, fd.pixelformat, fs.discrete.width, fs.discrete.height)});
      } else {
        f.stepwise = true;
        for (auto [w, h] : {std::pair{fs.stepwise.min_width, fs.stepwise.min_height},
                            std::pair{fs.stepwise.max_width, fs.stepwise.max_height}}) {
          f.sizes.push_back({w, h, enumerateRates(device, fd.pixelformat, w, h)});
        }
        break;
      }
    }
    formats.push_back(std::move(f));
  }
  return formats;
}

}  // namespace zerohop::capture_detail

namespace zerohop {

std::string fourccString(std::uint32_t fourcc) {
  std::string s;
  for (int i = 0; i < 4; ++i) {
    const char c = static_cast<char>((fourcc >> (8 * i)) & 0xff);
    s += (c >= 32 && c < 127) ? c : '?';
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::vector<std::string> listVideoNodes() {
  std::vector<std::string> nodes;
  for (int i = 0; i < 64; ++i) {
    const std::string path = "/dev/video" + std::to_string(i);
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) nodes.push_back(path);
  }
  return nodes;
}

CaptureDevice probeCaptureDevice(const std::string& path) {
  using capture_detail::V4l2Device;
  const V4l2Device device = V4l2Device::open(path);
  v4l2_capability cap{};
  device.ioctl(VIDIOC_QUERYCAP, &cap, "VIDIOC_QUERYCAP");
  CaptureDevice d;
  d.path = path;
  d.driver = reinterpret_cast<const char*>(cap.driver);
  d.card = reinterpret_cast<const char*>(cap.card);
  d.busInfo = reinterpret_cast<const char*>(cap.bus_info);
  d.deviceCaps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
  if (!(d.deviceCaps & V4L2_CAP_VIDEO_CAPTURE)) {
    throw Error(Errc::kUnsupported, path + " (" + d.card + ") is not a video capture node");
  }
  d.streaming = (d.deviceCaps & V4L2_CAP_STREAMING) != 0;
  d.formats = capture_detail::enumerateFormats(device);
  if (d.streaming) {
    for (std::uint32_t memory : {V4L2_MEMORY_MMAP, V4L2_MEMORY_USERPTR}) {
      v4l2_requestbuffers req{};
      req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      req.memory = memory;
      const bool ok = device.tryIoctl(VIDIOC_REQBUFS, &req) == 0;  // count 0: asks, allocates nothing
      (memory == V4L2_MEMORY_MMAP ? d.mmap : d.userptr) = ok;
    }
    if (d.mmap) {  // EXPBUF needs a real buffer to export
      v4l2_requestbuffers req{};
      req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      req.memory = V4L2_MEMORY_MMAP;
      req.count = 1;
      if (device.tryIoctl(VIDIOC_REQBUFS, &req) == 0 && req.count >= 1) {
        v4l2_exportbuffer eb{};
        eb.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        eb.index = 0;
        eb.flags = O_CLOEXEC | O_RDONLY;
        if (device.tryIoctl(VIDIOC_EXPBUF, &eb) == 0) {
          d.exportsDmabuf = true;
          zerohop::UniqueFd exported(eb.fd);
        }
        req.count = 0;
        if (const int err = device.tryIoctl(VIDIOC_REQBUFS, &req); err != 0) {
          log::warn("VIDIOC_REQBUFS(", path, ", 0) after the EXPBUF probe failed: ", std::strerror(err));
        }
      }
    }
  }
  return d;
}

std::vector<CaptureDevice> probeCaptureDevices() {
  std::vector<CaptureDevice> devices;
  for (const auto& path : listVideoNodes()) {
    try {
      devices.push_back(probeCaptureDevice(path));
    } catch (const Error& e) {
      log::debug("skipping ", path, ": ", e.what());
    }
  }
  return devices;
}

}  // namespace zerohop
