#include "capi/frame_info.hpp"

#include "capi/enum_map.hpp"
#include "capi/versioned.hpp"

namespace zerohop::capi {

void describeFrame(const Frame& f, std::uint64_t publishIndex, std::int64_t publishNs, zh_frame_info* info) {
  zh_frame_info out{};
  out.format = formatToC(f.format);
  out.width = f.width;
  out.height = f.height;
  out.memory = memoryToC(f.memory);
  out.cuda_device = f.memory == MemoryKind::kDevice ? f.gpu.device : -1;
  out.plane_count = f.planeCount;
  for (std::size_t i = 0; i < kMaxPlanes; ++i) {
    out.planes[i] = f.data[i];
    out.pitches[i] = f.pitch[i];
  }
  out.bytes_used = f.bytesUsed;
  out.capacity = f.capacity;
  out.sequence = f.sequence;
  out.publish_index = publishIndex;
  out.publish_ns = publishNs;
  out.wall_clock_ms = f.wallClockMs;
  stagesToC(f.times, out.stage_ns);
  out.keyframe = f.keyframe ? 1 : 0;
  out.cuda_event = f.gpu.readyEvent;
  writeVersioned(info, out);
}

}  // namespace zerohop::capi
