#pragma once
// Makes a camera's H.264 stream decodable from any IDR: remembers the latest SPS and PPS it sent and
// puts them in front of every IDR access unit that lacks them (cameras that send them only once, at
// stream start, would otherwise leave every later viewer unable to decode). An access unit starting
// with an access unit delimiter keeps it first.
// Only one SPS and one PPS are kept (the latest of each): what webcams send; streams that switch
// between several parameter-set ids are not handled.
// Thread-safety: thread-bound (the encode thread); pure logic on caller-owned buffers.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zerohop {

class H264ParameterSets {
 public:
  enum class Result {
    kAsIs,      ///< not an IDR, or an IDR carrying its own SPS and PPS
    kInserted,  ///< an IDR without SPS/PPS: the cached ones were put in front of it
    kMissing,   ///< an IDR without SPS/PPS and none seen yet: it cannot be decoded on its own
  };

  /// Learns SPS/PPS from the Annex B access unit `au` and writes it to `out` (replacing its
  /// contents), with the cached SPS/PPS in front when it is an IDR without them.
  Result apply(const std::uint8_t* au, std::size_t size, std::vector<std::uint8_t>& out);

  /// Learns SPS/PPS from `au` without producing a unit: an access unit that will not be sent (the
  /// pipeline's queue dropped it) may be the only one that carried them.
  void learn(const std::uint8_t* au, std::size_t size);

  /// True once both an SPS and a PPS were seen.
  bool known() const noexcept { return !sps_.empty() && !pps_.empty(); }

 private:
  std::vector<std::uint8_t> sps_;  // with its start code
  std::vector<std::uint8_t> pps_;
};

}  // namespace zerohop
