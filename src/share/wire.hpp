#pragma once
// Messages on the share's Unix socket (SOCK_SEQPACKET: one message per datagram, boundaries kept).
// Every message starts with MessageHeader {magic "ZHOP", protocol version, type, payload bytes};
// payload fields are little-endian fixed-width integers (both ends are the same machine, but the
// encoding is explicit so a foreign client cannot make us read past a buffer).
// Thread-safety: pure functions, reentrant.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "zerohop/error.hpp"

namespace zerohop::share_detail {

inline constexpr std::uint32_t kWireMagic = 0x5A484F50u;  // "ZHOP"
inline constexpr std::uint16_t kProtocolVersion = 1;
inline constexpr std::size_t kHeaderBytes = 16;
inline constexpr std::size_t kMaxMessageBytes = 4096;  ///< anything larger is malformed

enum class MessageType : std::uint16_t {
  kHello = 1,    ///< reader -> publisher: versions spoken, memory kinds accepted
  kWelcome = 2,  ///< publisher -> reader: ring description + fds (SCM_RIGHTS)
  kReject = 3,   ///< publisher -> reader (or reader -> publisher): Errc + reason, then close
  /// reader -> publisher, any time after the Welcome: an eventfd (SCM_RIGHTS, no payload) the
  /// publisher adds 1 to on every publish and on close, so the reader can poll() for frames.
  kNotify = 4,
  kNotifyOk = 5,  ///< publisher -> reader: the Notify's eventfd is registered (no payload)
  /// reader -> publisher, device rings, any time after the Welcome: an opaque fd of a timeline
  /// semaphore of the reader's (SCM_RIGHTS, no payload), which the publisher's GPU signals to each
  /// frame's publish index once that frame's write completed (Subscriber::signalOnPublish).
  kSignal = 6,
  kSignalOk = 7,  ///< publisher -> reader: the Signal's semaphore is imported (no payload)
  // The CUDA device-memory transport: both follow a Welcome whose transport is a device one.
  kDeviceSlots = 16,   ///< where the slots are: the exported allocation (cudaIpcMemHandle_t blob)
  kDeviceEvents = 17,  ///< per-slot cudaIpcEventHandle_t so readers order GPU work after writes
};

/// How the slot memory travels (Welcome.transport).
enum class Transport : std::uint32_t {
  kHostMemfd = 1,  ///< slot memfd mapped read-only (implemented)
  kCudaVmmFd = 2,  ///< one VMM allocation for all slots, its POSIX fd (SCM_RIGHTS) + IPC events (implemented)
  kCudaIpcLegacy = 3  ///< one cudaMalloc for all slots, cudaIpcGetMemHandle blob + IPC events (implemented)
};
bool isDeviceTransport(Transport t) noexcept;

struct MessageHeader {
  std::uint32_t magic = kWireMagic;
  std::uint16_t version = kProtocolVersion;
  MessageType type = MessageType::kHello;
  std::uint32_t payloadBytes = 0;
  std::uint32_t flags = 0;
};

inline constexpr std::uint32_t kAcceptHost = 1;
inline constexpr std::uint32_t kAcceptDevice = 2;

struct Hello {
  std::uint16_t minVersion = kProtocolVersion;
  std::uint16_t maxVersion = kProtocolVersion;
  std::uint32_t acceptMemory = kAcceptHost;  ///< bit set of kAccept*
  std::int32_t pid = 0;
};

/// fds that follow a Welcome, in this order: control block, slot data (host transport only), lease
/// page. A device transport sends 2 fds (control, lease) and then DeviceSlots and DeviceEvents.
struct Welcome {
  Transport transport = Transport::kHostMemfd;
  std::uint32_t fdCount = 3;
  std::uint32_t readerId = 0;
  std::uint32_t leaseEntries = 0;
  std::uint64_t controlBytes = 0;
  std::uint64_t slotBytes = 0;
  std::uint64_t leaseBytes = 0;
  std::uint64_t sessionId = 0;
};

/// Size of cudaIpcMemHandle_t and cudaIpcEventHandle_t (CUDA_IPC_HANDLE_SIZE); opaque bytes here.
inline constexpr std::size_t kCudaIpcHandleBytes = 64;
/// Device rings hold at most this many slots (all event handles fit one DeviceEvents message).
inline constexpr std::uint32_t kMaxDeviceSlots = 48;
using IpcHandleBytes = std::array<std::uint8_t, kCudaIpcHandleBytes>;

/// Where a device ring's slots are (legacy CUDA IPC: one allocation, slot i at i * slotStride).
struct DeviceSlotsInfo {
  Transport transport = Transport::kCudaIpcLegacy;
  std::uint32_t slotCount = 0;
  std::uint64_t allocationBytes = 0;  ///< bytes of the exported allocation
  std::uint64_t slotStride = 0;
  std::string pciBusId;  ///< the publisher's GPU ("0000:01:00.0"); readers open it by bus id, not ordinal
  IpcHandleBytes memHandle{};
};

/// One interprocess event per slot, recorded after the write of that slot.
struct DeviceEventsInfo {
  std::vector<IpcHandleBytes> events;
};

struct Reject {
  Errc code = Errc::kProtocol;
  std::string reason;  ///< at most 1024 bytes on the wire
};

std::vector<std::uint8_t> encodeHello(const Hello& hello, std::uint16_t headerVersion = kProtocolVersion);
std::vector<std::uint8_t> encodeWelcome(const Welcome& welcome);
std::vector<std::uint8_t> encodeReject(const Reject& reject);
std::vector<std::uint8_t> encodeDeviceSlots(const DeviceSlotsInfo& slots);
std::vector<std::uint8_t> encodeDeviceEvents(const DeviceEventsInfo& events);
/// A message with no payload (Notify, NotifyOk).
std::vector<std::uint8_t> encodeEmpty(MessageType type);

/// Parses and checks the header: throws Error(kProtocol) on a short message, wrong magic, or a
/// payload length that disagrees with the message size. Does not judge the version.
MessageHeader decodeHeader(std::span<const std::uint8_t> message);
/// Each decoder checks the type and the exact payload size; throws Error(kProtocol) naming what is wrong.
Hello decodeHello(std::span<const std::uint8_t> message);
Welcome decodeWelcome(std::span<const std::uint8_t> message);
Reject decodeReject(std::span<const std::uint8_t> message);
DeviceSlotsInfo decodeDeviceSlots(std::span<const std::uint8_t> message);
DeviceEventsInfo decodeDeviceEvents(std::span<const std::uint8_t> message);
/// Checks a message with no payload of type `type`.
void decodeEmpty(std::span<const std::uint8_t> message, MessageType type);

}  // namespace zerohop::share_detail
