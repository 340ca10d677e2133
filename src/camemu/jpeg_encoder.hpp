#pragma once
// Encodes packed YUYV frames into camera-like baseline JPEGs (4:2:2, quality 85, a restart marker
// every MCU row, as many UVC cameras write them) with libjpeg-turbo's libjpeg API.
// Built only with ZEROHOP_WITH_MEDIA (ZEROHOP_CAMEMU_WITH_JPEG).
// Thread-safety: thread-bound (one encoder per stream); owns its compressor and scratch planes.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace zerohop::camemu {

class JpegEncoder {
 public:
  JpegEncoder(std::uint32_t width, std::uint32_t height, int quality = 85);
  ~JpegEncoder();
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;

  /// Compresses one YUYV image (`pitch` bytes a row) and returns the JPEG bytes (valid until the
  /// next call). Throws Error(kDevice) with libjpeg's message on failure.
  const std::vector<std::uint8_t>& encode(const std::uint8_t* yuyv, std::uint32_t pitch);

 private:
  struct Compressor;  // jpeg_compress_struct and its error/destination managers (jpeglib.h stays here)
  std::uint32_t width_;
  std::uint32_t height_;
  int quality_;
  std::unique_ptr<Compressor> c_;
  std::vector<std::uint8_t> y_, u_, v_;
  std::vector<std::uint8_t> out_;
};

}  // namespace zerohop::camemu
