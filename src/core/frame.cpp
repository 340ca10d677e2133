#include "zerohop/frame.hpp"

namespace zerohop {

const char* memoryKindName(MemoryKind kind) noexcept {
  switch (kind) {
    case MemoryKind::kHost: return "host";
    case MemoryKind::kPinned: return "pinned";
    case MemoryKind::kDevice: return "device";
  }
  return "unknown";
}

const char* stageName(Stage stage) noexcept {
  switch (stage) {
    case Stage::kCapture: return "capture";
    case Stage::kIngest: return "ingest";
    case Stage::kConvert: return "convert";
    case Stage::kEncode: return "encode";
    case Stage::kSend: return "send";
    case Stage::kCount: break;
  }
  return "unknown";
}

void bindLayout(Frame& frame, const ImageLayout& layout, std::uint8_t* base, MemoryKind memory) noexcept {
  frame.format = layout.format;
  frame.width = layout.width;
  frame.height = layout.height;
  frame.memory = memory;
  frame.planeCount = layout.planeCount;
  for (std::size_t i = 0; i < kMaxPlanes; ++i) {
    if (i < layout.planeCount) {
      frame.data[i] = base + layout.planes[i].offset;
      frame.pitch[i] = layout.planes[i].pitch;
    } else {
      frame.data[i] = nullptr;
      frame.pitch[i] = 0;
    }
  }
  frame.capacity = layout.totalBytes;
  frame.bytesUsed = isCompressed(layout.format) ? 0 : layout.totalBytes;
}

}  // namespace zerohop
