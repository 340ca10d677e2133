#include "share/wire.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "share/wire_codes.hpp"

namespace zerohop::share_detail {
namespace {

constexpr std::size_t kHelloBytes = 12;
constexpr std::size_t kWelcomeBytes = 48;
constexpr std::size_t kMaxReasonBytes = 1024;
constexpr std::size_t kPciBusIdBytes = 32;  // NUL-padded
constexpr std::size_t kDeviceSlotsBytes = 4 + 4 + 8 + 8 + kPciBusIdBytes + kCudaIpcHandleBytes;

class Writer {
 public:
  explicit Writer(MessageType type, std::uint16_t version = kProtocolVersion) {
    put32(kWireMagic);
    put16(version);
    put16(static_cast<std::uint16_t>(type));
    put32(0);  // payload bytes, patched in finish()
    put32(0);  // flags
  }
  void put16(std::uint16_t v) { putN(v, 2); }
  void put32(std::uint32_t v) { putN(v, 4); }
  void put64(std::uint64_t v) { putN(v, 8); }
  void putBytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  std::vector<std::uint8_t> finish() {
    const auto payload = static_cast<std::uint32_t>(bytes_.size() - kHeaderBytes);
    for (int i = 0; i < 4; ++i) bytes_[8 + i] = static_cast<std::uint8_t>(payload >> (8 * i));
    return std::move(bytes_);
  }

 private:
  void putN(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t> bytes_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  std::uint16_t get16() { return static_cast<std::uint16_t>(getN(2)); }
  std::uint32_t get32() { return static_cast<std::uint32_t>(getN(4)); }
  std::uint64_t get64() { return getN(8); }
  std::span<const std::uint8_t> rest() const { return bytes_.subspan(pos_); }
  void getBytes(void* out, std::size_t n) {
    if (pos_ + n > bytes_.size()) throw Error(Errc::kProtocol, "share message truncated");
    std::memcpy(out, bytes_.data() + pos_, n);
    pos_ += n;
  }

 private:
  std::uint64_t getN(int n) {
    if (pos_ + static_cast<std::size_t>(n) > bytes_.size())
      throw Error(Errc::kProtocol, "share message truncated");
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= std::uint64_t{bytes_[pos_ + i]} << (8 * i);
    pos_ += static_cast<std::size_t>(n);
    return v;
  }
  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
};

const char* typeName(MessageType t) {
  switch (t) {
    case MessageType::kHello:
      return "Hello";
    case MessageType::kWelcome:
      return "Welcome";
    case MessageType::kReject:
      return "Reject";
    case MessageType::kNotify:
      return "Notify";
    case MessageType::kNotifyOk:
      return "NotifyOk";
    case MessageType::kSignal:
      return "Signal";
    case MessageType::kSignalOk:
      return "SignalOk";
    case MessageType::kDeviceSlots:
      return "DeviceSlots";
    case MessageType::kDeviceEvents:
      return "DeviceEvents";
  }
  return "unknown";
}

std::span<const std::uint8_t> payloadOf(std::span<const std::uint8_t> message, MessageType want,
                                        std::size_t minBytes, std::size_t maxBytes) {
  const MessageHeader h = decodeHeader(message);
  if (h.type != want) {
    throw Error(Errc::kProtocol, std::string("expected a ") + typeName(want) + " message, got type " +
                                     std::to_string(static_cast<unsigned>(h.type)));
  }
  if (h.payloadBytes < minBytes || h.payloadBytes > maxBytes) {
    throw Error(Errc::kProtocol, std::string(typeName(want)) + " payload of " +
                                     std::to_string(h.payloadBytes) + " bytes (expected " +
                                     std::to_string(minBytes) +
                                     (minBytes == maxBytes ? "" : ".." + std::to_string(maxBytes)) + ")");
  }
  return message.subspan(kHeaderBytes);
}

}  // namespace

bool isDeviceTransport(Transport t) noexcept {
  return t == Transport::kCudaVmmFd || t == Transport::kCudaIpcLegacy;
}

std::vector<std::uint8_t> encodeHello(const Hello& hello, std::uint16_t headerVersion) {
  Writer w(MessageType::kHello, headerVersion);
  w.put16(hello.minVersion);
  w.put16(hello.maxVersion);
  w.put32(hello.acceptMemory);
  w.put32(static_cast<std::uint32_t>(hello.pid));
  return w.finish();
}

std::vector<std::uint8_t> encodeWelcome(const Welcome& m) {
  Writer w(MessageType::kWelcome);
  w.put32(static_cast<std::uint32_t>(m.transport));
  w.put32(m.fdCount);
  w.put32(m.readerId);
  w.put32(m.leaseEntries);
  w.put64(m.controlBytes);
  w.put64(m.slotBytes);
  w.put64(m.leaseBytes);
  w.put64(m.sessionId);
  return w.finish();
}

std::vector<std::uint8_t> encodeReject(const Reject& m) {
  Writer w(MessageType::kReject);
  const std::size_t n = std::min(m.reason.size(), kMaxReasonBytes);
  w.put32(errcToWire(m.code));
  w.put32(static_cast<std::uint32_t>(n));
  w.putBytes(m.reason.data(), n);
  return w.finish();
}

std::vector<std::uint8_t> encodeDeviceSlots(const DeviceSlotsInfo& m) {
  Writer w(MessageType::kDeviceSlots);
  w.put32(static_cast<std::uint32_t>(m.transport));
  w.put32(m.slotCount);
  w.put64(m.allocationBytes);
  w.put64(m.slotStride);
  char bus[kPciBusIdBytes]{};
  std::memcpy(bus, m.pciBusId.data(), std::min(m.pciBusId.size(), kPciBusIdBytes - 1));
  w.putBytes(bus, sizeof bus);
  w.putBytes(m.memHandle.data(), m.memHandle.size());
  return w.finish();
}

std::vector<std::uint8_t> encodeDeviceEvents(const DeviceEventsInfo& m) {
  if (m.events.size() > kMaxDeviceSlots)
    throw Error(Errc::kInvalidArgument,
                "DeviceEvents: more than " + std::to_string(kMaxDeviceSlots) + " events");
  Writer w(MessageType::kDeviceEvents);
  w.put32(static_cast<std::uint32_t>(m.events.size()));
  w.put32(static_cast<std::uint32_t>(kCudaIpcHandleBytes));
  for (const auto& e : m.events) w.putBytes(e.data(), e.size());
  return w.finish();
}

std::vector<std::uint8_t> encodeEmpty(MessageType type) {
  return Writer(type).finish();
}

void decodeEmpty(std::span<const std::uint8_t> message, MessageType type) {
  (void)payloadOf(message, type, 0, 0);
}

MessageHeader decodeHeader(std::span<const std::uint8_t> message) {
  if (message.size() < kHeaderBytes) {
    throw Error(Errc::kProtocol, "share message of " + std::to_string(message.size()) +
                                     " bytes is shorter than the 16-byte header");
  }
  if (message.size() > kMaxMessageBytes) {
    throw Error(Errc::kProtocol, "share message of " + std::to_string(message.size()) + " bytes exceeds " +
                                     std::to_string(kMaxMessageBytes));
  }
  Reader r(message);
  MessageHeader h;
  h.magic = r.get32();
  if (h.magic != kWireMagic) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "bad magic 0x%08X (expected 0x%08X \"ZHOP\"): not a zerohop share peer",
                  h.magic, kWireMagic);
    throw Error(Errc::kProtocol, buf);
  }
  h.version = r.get16();
  h.type = static_cast<MessageType>(r.get16());
  h.payloadBytes = r.get32();
  h.flags = r.get32();
  if (h.payloadBytes != message.size() - kHeaderBytes) {
    throw Error(Errc::kProtocol, "share message header announces " + std::to_string(h.payloadBytes) +
                                     " payload bytes but " + std::to_string(message.size() - kHeaderBytes) +
                                     " arrived");
  }
  return h;
}

Hello decodeHello(std::span<const std::uint8_t> message) {
  Reader r(payloadOf(message, MessageType::kHello, kHelloBytes, kHelloBytes));
  Hello h;
  h.minVersion = r.get16();
  h.maxVersion = r.get16();
  h.acceptMemory = r.get32();
  h.pid = static_cast<std::int32_t>(r.get32());
  if (h.minVersion > h.maxVersion) throw Error(Errc::kProtocol, "Hello: minVersion > maxVersion");
  return h;
}

Welcome decodeWelcome(std::span<const std::uint8_t> message) {
  Reader r(payloadOf(message, MessageType::kWelcome, kWelcomeBytes, kWelcomeBytes));
  Welcome m;
  m.transport = static_cast<Transport>(r.get32());
  m.fdCount = r.get32();
  m.readerId = r.get32();
  m.leaseEntries = r.get32();
  m.controlBytes = r.get64();
  m.slotBytes = r.get64();
  m.leaseBytes = r.get64();
  m.sessionId = r.get64();
  return m;
}

Reject decodeReject(std::span<const std::uint8_t> message) {
  Reader r(payloadOf(message, MessageType::kReject, 8, 8 + kMaxReasonBytes));
  Reject m;
  const std::uint32_t code = r.get32();
  m.code = errcFromWire(code);
  const std::uint32_t n = r.get32();
  const auto rest = r.rest();
  if (n != rest.size()) throw Error(Errc::kProtocol, "Reject: reason length disagrees with the payload");
  m.reason.assign(reinterpret_cast<const char*>(rest.data()), rest.size());
  return m;
}

DeviceSlotsInfo decodeDeviceSlots(std::span<const std::uint8_t> message) {
  Reader r(payloadOf(message, MessageType::kDeviceSlots, kDeviceSlotsBytes, kDeviceSlotsBytes));
  DeviceSlotsInfo m;
  m.transport = static_cast<Transport>(r.get32());
  m.slotCount = r.get32();
  m.allocationBytes = r.get64();
  m.slotStride = r.get64();
  char bus[kPciBusIdBytes]{};
  r.getBytes(bus, sizeof bus);
  bus[kPciBusIdBytes - 1] = 0;
  m.pciBusId = bus;
  r.getBytes(m.memHandle.data(), m.memHandle.size());
  if (!isDeviceTransport(m.transport))
    throw Error(Errc::kProtocol, "DeviceSlots: transport " +
                                     std::to_string(static_cast<unsigned>(m.transport)) +
                                     " is not a device transport this build speaks");
  if (m.slotCount == 0 || m.slotCount > kMaxDeviceSlots || m.slotStride == 0 ||
      m.slotStride * m.slotCount > m.allocationBytes)
    throw Error(Errc::kProtocol, "DeviceSlots: slot geometry exceeds the allocation");
  return m;
}

DeviceEventsInfo decodeDeviceEvents(std::span<const std::uint8_t> message) {
  Reader r(payloadOf(message, MessageType::kDeviceEvents, 8, 8 + kMaxDeviceSlots * kCudaIpcHandleBytes));
  const std::uint32_t count = r.get32();
  const std::uint32_t handleBytes = r.get32();
  if (handleBytes != kCudaIpcHandleBytes || count > kMaxDeviceSlots ||
      r.rest().size() != std::size_t{count} * kCudaIpcHandleBytes)
    throw Error(Errc::kProtocol, "DeviceEvents: " + std::to_string(count) + " handles of " +
                                     std::to_string(handleBytes) + " bytes disagree with the payload");
  DeviceEventsInfo m;
  m.events.resize(count);
  for (auto& e : m.events) r.getBytes(e.data(), e.size());
  return m;
}

}  // namespace zerohop::share_detail
