// Publisher facade, SlotLayout and WriteSlot: the copying publish() paths on top of PublisherCore.
#include <cstring>

#include "core/codec_format.hpp"
#include "share/publisher_core.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

namespace zerohop {

SlotLayout SlotLayout::images(const ImageLayout& layout, std::uint32_t slots) {
  return SlotLayout{layout, slots};
}

SlotLayout SlotLayout::deviceImages(const ImageLayout& layout, std::uint32_t slots, int device) {
  SlotLayout l{layout, slots};
  l.memory = MemoryKind::kDevice;
  l.device = device;
  return l;
}

SlotLayout SlotLayout::encoded(PixelFormat codec, std::size_t capacityBytes, std::uint32_t slots) {
  if (!isCompressed(codec)) {
    throw Error(Errc::kInvalidArgument, std::string("SlotLayout::encoded needs a compressed format, got ") +
                                            std::string(formatName(codec)));
  }
  if (capacityBytes == 0 || capacityBytes > (std::size_t{1} << 31)) {
    throw Error(Errc::kInvalidArgument, "encoded slot capacity must be 1 byte .. 2 GiB");
  }
  SlotLayout l;
  l.image.format = codec;
  l.image.planeCount = 1;
  l.image.planes[0] = PlaneLayout{0, 0, 0, 0};
  l.image.totalBytes = capacityBytes;
  l.slots = slots;
  return l;
}

bool SlotLayout::isEncoded() const noexcept {
  return isCompressed(image.format);
}

// ---- WriteSlot -------------------------------------------------------------------------------

WriteSlot::WriteSlot(WriteSlot&& other) noexcept {
  *this = std::move(other);
}

WriteSlot& WriteSlot::operator=(WriteSlot&& other) noexcept {
  if (this != &other) {
    if (core_) core_->abandon(*this);
    core_ = std::move(other.core_);
    slot_ = other.slot_;
    seqBefore_ = other.seqBefore_;
    frame_ = other.frame_;
  }
  return *this;
}

WriteSlot::~WriteSlot() {
  if (core_) core_->abandon(*this);
}

// ---- Publisher -------------------------------------------------------------------------------

Publisher::Publisher(std::string name, const SlotLayout& layout, ShareOptions options)
    : core_(std::make_shared<share_detail::PublisherCore>(std::move(name), layout, std::move(options))) {
  core_->start();
}

Publisher::~Publisher() {
  if (core_) core_->stop();
}

Publisher::Publisher(Publisher&&) noexcept = default;

Publisher& Publisher::operator=(Publisher&& other) noexcept {
  if (this != &other) {
    if (core_) core_->stop();
    core_ = std::move(other.core_);
  }
  return *this;
}

WriteSlot Publisher::acquireWrite() {
  return core_->acquire();
}

void Publisher::commit(WriteSlot&& slot, const Frame& meta) {
  if (!slot) throw Error(Errc::kInvalidArgument, "Publisher::commit: empty WriteSlot");
  if (core_->device() && !meta.gpu.readyEvent) {
    core_->abandon(slot);
    throw Error(
        Errc::kInvalidArgument,
        "share '" + core_->name() +
            "' has device slots: commit needs meta.gpu.readyEvent (an event recorded after the write) "
            "or the stream that wrote the slot (commit(slot, meta, stream))");
  }
  core_->commit(slot, meta, nullptr);
}

void Publisher::commit(WriteSlot&& slot, const Frame& meta, void* cudaStream) {
  if (!slot) throw Error(Errc::kInvalidArgument, "Publisher::commit: empty WriteSlot");
  core_->commit(slot, meta, cudaStream);
}

void Publisher::publish(const Frame& frame) {
  publishCopy(frame, nullptr);
}

void Publisher::publish(const Frame& frame, void* cudaStream) {
  publishCopy(frame, cudaStream);
}

void Publisher::publishCopy(const Frame& frame, void* cudaStream) {
  const auto& name = core_->name();
  if (frame.memory == MemoryKind::kDevice && !core_->device()) {
    throw Error(Errc::kUnsupported,
                "share '" + name +
                    "' has host-memory slots: publish host or pinned frames, or create the ring with "
                    "SlotLayout::deviceImages to share device frames");
  }
  const ImageLayout& l = core_->layout().image;
  if (core_->encoded()) {
    if (!isCompressed(frame.format)) {
      throw Error(Errc::kInvalidArgument, "share '" + name + "' holds encoded units; got a " +
                                              std::string(formatName(frame.format)) + " image");
    }
    if (frame.bytesUsed > l.totalBytes) {
      throw Error(Errc::kInvalidArgument, "share '" + name + "': unit of " + std::to_string(frame.bytesUsed) +
                                              " bytes exceeds the slot capacity of " +
                                              std::to_string(l.totalBytes));
    }
    if (frame.bytesUsed > 0 && !frame.data[0])
      throw Error(Errc::kInvalidArgument, "share '" + name + "': null data");
    WriteSlot ws = core_->acquire();
    if (frame.bytesUsed > 0) std::memcpy(ws.frame().data[0], frame.data[0], frame.bytesUsed);
    core_->countCopied(frame.bytesUsed);
    core_->commitRecorded(ws, frame);
    return;
  }
  if (frame.format != l.format || frame.width != l.width || frame.height != l.height ||
      frame.planeCount != l.planeCount) {
    throw Error(Errc::kInvalidArgument, "share '" + name + "' holds " + std::string(formatName(l.format)) +
                                            " " + std::to_string(l.width) + "x" + std::to_string(l.height) +
                                            "; got " + std::string(formatName(frame.format)) + " " +
                                            std::to_string(frame.width) + "x" + std::to_string(frame.height));
  }
  for (std::uint32_t i = 0; i < l.planeCount; ++i) {
    if (!frame.data[i] || frame.pitch[i] < l.planes[i].widthBytes) {
      throw Error(Errc::kInvalidArgument, "share '" + name + "': plane " + std::to_string(i) +
                                              " has no data or a pitch shorter than a row");
    }
  }
  std::uint64_t payload = 0;
  for (std::uint32_t i = 0; i < l.planeCount; ++i)
    payload += std::uint64_t{l.planes[i].widthBytes} * l.planes[i].rows;
  WriteSlot ws = core_->acquire();
  if (auto* device = core_->device()) {
    try {
      device->copyIn(ws.slot(), ws.frame(), frame, l, cudaStream);
    } catch (...) {
      core_->abandon(ws);
      throw;
    }
    core_->countCopied(payload);
    core_->commitRecorded(ws, frame);
    return;
  }
  for (std::uint32_t i = 0; i < l.planeCount; ++i) {
    const auto& p = l.planes[i];
    std::uint8_t* dst = ws.frame().data[i];
    const std::uint8_t* src = frame.data[i];
    if (frame.pitch[i] == p.pitch) {
      std::memcpy(dst, src, std::size_t{p.pitch} * (p.rows - 1) + p.widthBytes);
    } else {
      for (std::uint32_t r = 0; r < p.rows; ++r) {
        std::memcpy(dst + std::size_t{r} * p.pitch, src + std::size_t{r} * frame.pitch[i], p.widthBytes);
      }
    }
  }
  core_->countCopied(payload);
  core_->commitRecorded(ws, frame);
}

void Publisher::publish(const EncodedUnit& unit) {
  Frame f;
  f.format = formatOfCodec(unit.codec);
  f.width = unit.width;
  f.height = unit.height;
  f.memory = MemoryKind::kHost;
  f.planeCount = 1;
  f.data[0] = const_cast<std::uint8_t*>(unit.bytes.data());
  f.bytesUsed = unit.bytes.size();
  f.capacity = unit.bytes.size();
  f.sequence = unit.sequence;
  f.wallClockMs = unit.wallClockMs;
  f.keyframe = unit.keyframe;
  f.times = unit.times;
  // Sound (Opus packets) carries its capture instant in ptsNs alone: readers find it where a picture's is.
  if (f.times.at(Stage::kCapture) == 0 && unit.ptsNs != 0) f.times.mark(Stage::kCapture, unit.ptsNs);
  publish(f);
}

ShareStats Publisher::stats() const {
  return core_->stats();
}
const std::string& Publisher::name() const noexcept {
  return core_->name();
}
const std::string& Publisher::socketPath() const noexcept {
  return core_->socketPath();
}

}  // namespace zerohop
