#include "frame_check.hpp"

#include <string>

#include "zerohop/error.hpp"

namespace zerohop::convert {

std::uint32_t rowBytes(PixelFormat format, std::uint32_t plane, std::uint32_t width) noexcept {
  switch (format) {
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY:
      return width * 2;
    case PixelFormat::kRGB24:
      return width * 3;
    case PixelFormat::kBGRx:
    case PixelFormat::kRGBA:
      return width * 4;
    case PixelFormat::kNV12:
      return plane == 0 ? width : (width + 1) / 2 * 2;
    case PixelFormat::kI420:
      return plane == 0 ? width : (width + 1) / 2;
    default:
      return 0;
  }
}

void requireHostMemory(const Frame& frame, const char* role) {
  if (frame.memory == MemoryKind::kDevice) {
    throw Error(Errc::kUnsupported,
                std::string("the CPU converter cannot read the ") + role +
                    " frame: it is in GPU memory; use the GPU converter for device frames");
  }
}

void requireRawPlanes(const Frame& frame, const char* role) {
  const std::uint32_t planes = planeCount(frame.format);
  if (frame.width == 0 || frame.height == 0) {
    throw Error(Errc::kInvalidArgument, std::string(role) + " frame has no size (" +
                                            std::to_string(frame.width) + "x" + std::to_string(frame.height) +
                                            ")");
  }
  for (std::uint32_t i = 0; i < planes; ++i) {
    if (frame.data[i] == nullptr) {
      throw Error(Errc::kInvalidArgument, std::string(role) + " frame (" +
                                              std::string(formatName(frame.format)) +
                                              ") has no memory for plane " + std::to_string(i) +
                                              "; bind it to a buffer (bindLayout) first");
    }
    const std::uint32_t need = rowBytes(frame.format, i, frame.width);
    if (frame.pitch[i] < need) {
      throw Error(Errc::kInvalidArgument, std::string(role) + " frame plane " + std::to_string(i) +
                                              " pitch " + std::to_string(frame.pitch[i]) +
                                              " is shorter than one row (" + std::to_string(need) +
                                              " bytes)");
    }
  }
}

void requirePayload(const Frame& frame, const char* role) {
  if (frame.data[0] == nullptr || frame.bytesUsed == 0) {
    throw Error(Errc::kInvalidArgument, std::string(role) + " " + std::string(formatName(frame.format)) +
                                            " frame is empty (no payload)");
  }
  if (frame.capacity != 0 && frame.bytesUsed > frame.capacity) {
    throw Error(Errc::kInvalidArgument, std::string(role) + " frame says it holds " +
                                            std::to_string(frame.bytesUsed) + " bytes but its buffer has " +
                                            std::to_string(frame.capacity));
  }
}

}  // namespace zerohop::convert
