#pragma once
// The two kernels of the share hand-off benchmark on plain plane views (compiled by nvcc as C++17:
// no zerohop headers here): the publisher writes a whole frame, a reader reads every byte of it
// once ("uses the frame"). Thread-safety: reentrant.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace zerohop::bench {

struct PlaneView {
  std::uint8_t* data = nullptr;
  std::uint32_t pitch = 0, widthBytes = 0, rows = 0;
};

void launchWriteFrame(const PlaneView* planes, std::uint32_t count, std::uint64_t sequence,
                      cudaStream_t stream);
/// Sums every byte into *sum (device memory). One block per row, or, with maxBlocks > 0, at most
/// maxBlocks blocks per plane that stride over the rows (fewer SMs held per reader).
void launchReadFrame(const PlaneView* planes, std::uint32_t count, unsigned long long* sum,
                     cudaStream_t stream, std::uint32_t maxBlocks = 0);
/// One launch that reads every byte of every plane of a frame (the fused reader kernel). With
/// `doorbell` set, the frame is the ring slot the doorbell word names: slot = *doorbell & 63, at
/// base + slot * slotStride (the ring's slots are one allocation; the publisher writes the word
/// (sequence << 6) | slot after the frame, 63 = "the ring closed": the kernel reads nothing).
/// `usedSlot` (device memory, may be null) receives the slot read (63 when closed).
struct FusedRead {
  const std::uint8_t* base = nullptr;  ///< the frame, or slot 0 with a doorbell
  std::uint64_t slotStride = 0;
  const std::uint32_t* doorbell = nullptr;
  std::uint32_t planeCount = 0;
  std::uint64_t planeOffset[2] = {};  ///< from the frame's (slot's) start
  std::uint32_t pitch[2] = {}, widthBytes[2] = {}, rows[2] = {};
  unsigned long long* sum = nullptr;
  std::uint32_t* usedSlot = nullptr;
  std::uint32_t maxBlocks = 0;  ///< 0: one block per row of all planes (reduce: 2 per SM)
  /// false: one block of 128 threads per row, one atomicAdd per warp (1,620 blocks and 6,480 atomics
  /// on one word for 1080p NV12); true: 256-thread blocks striding over the frame's 16-byte chunks,
  /// summed in the block, one atomicAdd per block (what a tuned "read every byte" kernel does).
  bool reduce = false;
};
constexpr std::uint32_t kDoorbellSlotBits = 6, kDoorbellClosed = 63;
void launchReadFused(const FusedRead& read, cudaStream_t stream);

/// How many SMs this context can run blocks on: the number of distinct %smid that a grid of
/// short-lived spinning blocks (more than the GPU holds at once) ran on. Synchronous; start-up only.
int countSmsUsed(int device);

}  // namespace zerohop::bench
