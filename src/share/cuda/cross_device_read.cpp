#include "share/cuda/cross_device_read.hpp"

#include <cuda_runtime_api.h>

#include <mutex>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "zerohop/error.hpp"

namespace zerohop::share_detail {
namespace {

std::string gpuName(int device) { return "GPU " + std::to_string(device); }

/// The reader's buffers for copies of one ring's slots, on the reader's GPU, and the stream they
/// are made on. Held by the import and by every SharedFrame whose copy it holds.
class CopyPool : public std::enable_shared_from_this<CopyPool> {
 public:
  CopyPool(int readerDevice, int ringDevice) : reader_(readerDevice), ring_(ringDevice), stream_(readerDevice) {}

  ~CopyPool() {
    // Copies still in flight write our buffers: finish them before the buffers go.
    try {
      cuda::DeviceGuard guard(reader_);
      cuda::logIfFailed(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize(share reader copy)");
    } catch (const std::exception&) {
      // the guard logged nothing to do: the stream's own destructor synchronises too
    }
  }

  DeviceView copy(const std::uint8_t* src, void* slotEvent, std::uint64_t bytes) {
    std::unique_ptr<Buffer> b = take(bytes);
    cuda::DeviceGuard guard(reader_);
    cudaStream_t s = stream_.get();
    if (slotEvent)
      cuda::check(cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(slotEvent), 0), "cudaStreamWaitEvent(slot written)");
    cuda::check(cudaMemcpyPeerAsync(b->memory.data(), reader_, src, ring_, bytes, s),
                "cudaMemcpyPeerAsync(share slot to the reader's GPU)",
                gpuName(ring_) + " to " + gpuName(reader_));
    cuda::check(cudaEventRecord(b->copied.get(), s), "cudaEventRecord(reader copy)");
    DeviceView v;
    v.base = static_cast<std::uint8_t*>(b->memory.data());
    v.readyEvent = b->copied.get();
    v.device = reader_;
    std::shared_ptr<CopyPool> self = shared_from_this();
    Buffer* raw = b.release();
    v.keep = std::shared_ptr<void>(raw, [self](void* p) { self->giveBack(static_cast<Buffer*>(p)); });
    return v;
  }

 private:
  struct Buffer {
    DeviceBuffer memory;
    CudaEvent copied;
  };

  std::unique_ptr<Buffer> take(std::uint64_t bytes) {
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty() && free_.back()->memory.size() >= bytes) {
        auto b = std::move(free_.back());
        free_.pop_back();
        return b;
      }
    }
    // At most as many as the reader holds SharedFrames at once (its lease entries bound that).
    auto b = std::make_unique<Buffer>();
    b->memory = DeviceBuffer(reader_, bytes);
    b->copied = CudaEvent(reader_, false);
    return b;
  }

  void giveBack(Buffer* b) noexcept {
    std::unique_ptr<Buffer> owned(b);
    try {
      std::lock_guard lock(mutex_);
      free_.push_back(std::move(owned));
    } catch (...) {
      // out of memory for the list: the buffer is freed instead
    }
  }

  int reader_, ring_;
  CudaStream stream_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Buffer>> free_;
};

/// The ring seen from another GPU (or copied on request): peer access in place, or a copy per read.
class CrossDeviceImport final : public DeviceImport {
 public:
  CrossDeviceImport(std::unique_ptr<DeviceImport> inner, int readerDevice, ReaderAccess access)
      : inner_(std::move(inner)), reader_(readerDevice), access_(std::move(access)) {
    if (access_.mode == "copy") pool_ = std::make_shared<CopyPool>(reader_, inner_->device());
  }
  // Members go in reverse order: the pool (its in-flight copies finished) before the mapping.

  int device() const noexcept override { return reader_; }
  std::uint8_t* base() const noexcept override { return inner_->base(); }
  std::uint64_t slotStride() const noexcept override { return inner_->slotStride(); }
  void* slotEvent(std::uint32_t slot) const noexcept override { return inner_->slotEvent(slot); }
  ReaderAccess access() const override { return access_; }

  DeviceView view(std::uint32_t slot, std::uint64_t bytes) override {
    DeviceView in = inner_->view(slot, bytes);
    if (!pool_) {
      in.device = reader_;  // peer: the ring's pointers, read by the reader's GPU
      return in;
    }
    return pool_->copy(in.base, in.readyEvent, bytes);
  }

 private:
  std::unique_ptr<DeviceImport> inner_;
  int reader_;
  ReaderAccess access_;
  std::shared_ptr<CopyPool> pool_;
};

}  // namespace

ReaderAccess planReaderAccess(int ringDevice, const ReaderDevice& reader) {
  const int dev = reader.device < 0 ? ringDevice : reader.device;
  int count = 0;
  cuda::check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (dev >= count) {
    throw Error(Errc::kInvalidArgument, "SubscribeOptions::device: the reader's CUDA device " + std::to_string(dev) + " does not exist (" +
                                     std::to_string(count) + " visible)");
  }
  ReaderAccess a;
  if (reader.forceCopy) {
    a.mode = "copy";
    a.reason = "one device-to-device copy per frame from " + gpuName(ringDevice) + " into a buffer of this reader on " +
               gpuName(dev) + ", because deviceAccess = copy was asked for";
    return a;
  }
  if (dev == ringDevice) {
    a.reason = "the reader reads the slots in place on " + gpuName(dev);
    return a;
  }
  int can = 0;
  cuda::check(cudaDeviceCanAccessPeer(&can, dev, ringDevice), "cudaDeviceCanAccessPeer");
  if (can) {
    a.mode = "peer";
    a.reason = gpuName(dev) + " reads the slots on " + gpuName(ringDevice) + " in place over peer access";
  } else {
    a.mode = "copy";
    a.reason = "one device-to-device copy per frame from " + gpuName(ringDevice) + " into a buffer of this reader on " +
               gpuName(dev) + ", because " + gpuName(dev) + " cannot access " + gpuName(ringDevice) +
               "'s memory (no peer access between them)";
  }
  return a;
}

std::unique_ptr<DeviceImport> adaptForReader(std::unique_ptr<DeviceImport> import, const ReaderDevice& reader,
                                             const std::string& shareName) {
  const int ring = import->device();
  ReaderAccess access = planReaderAccess(ring, reader);
  if (access.mode == "same-gpu") return import;
  const int dev = reader.device < 0 ? ring : reader.device;
  if (access.mode == "peer") {
    std::string why;
    if (!import->grantAccess(dev, why)) {
      access.mode = "copy";
      access.reason = "one device-to-device copy per frame from " + gpuName(ring) + " into a buffer of this reader on " +
                      gpuName(dev) + ", because mapping share '" + shareName + "' for " + gpuName(dev) +
                      " failed (" + why + ")";
    }
  }
  return std::make_unique<CrossDeviceImport>(std::move(import), dev, std::move(access));
}

}  // namespace zerohop::share_detail
