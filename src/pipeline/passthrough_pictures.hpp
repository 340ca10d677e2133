#pragma once
// The pictures of a passed-through camera (docs/ARCHITECTURE.md, "Passthrough and its pictures"): its H.264
// is sent to the viewers as it came (PassthroughProcessor), and decoded beside that, on a thread of its own,
// for what needs pixels: the frame share's readers, VP8 viewers, a ladder's lower rungs. Only while
// something does: with none, a unit costs a queue push and a reference kept.
//
// Starting without waiting for the camera's next IDR: the units since the last IDR are kept (at most
// kMaxCatchUpUnits; a longer GOP waits for the next IDR), and the first picture wanted is had by decoding
// them all, the earlier ones only to bring the decoder to it (caught-up units, counted). From then on each
// unit is decoded as it comes. A gap (a unit held back after a loss, the queue overflowing because the
// decode is slower than the camera, a unit the decoder refuses) stops it until the next IDR. The decode
// never delays the passthrough: the encode thread only queues each unit it sent (offer()).
//
// The decoder (a PassthroughDecoder, made at each start) writes each picture into the frame share: libavcodec
// into host I420 on the CPU, NVDEC into NV12 in VRAM on the GPU. The picture then goes to `picture` (the VP8
// encode, which takes hostPicture(); the lower rungs). Its times are its unit's (capture, ingest) with
// Stage::kConvert at the end of its decode.
// Thread-safety: offer() from one thread (the encode thread); status() from any; `wanted` and `picture`
// are called on the pictures thread. Ownership: borrows the frame share (the pipeline keeps it longer);
// stop() (or the destructor) joins the thread before the pipeline takes the VP8 encode and the sinks away.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/bounded_queue.hpp"
#include "gpupath/passthrough_decoder.hpp"
#include "zerohop/encoded_unit.hpp"
#include "zerohop/pipeline.hpp"

namespace zerohop {

class PassthroughPictures {
 public:
  /// The most units decoded to catch up before the first picture (5 s at 30 fps): a camera whose IDRs
  /// are further apart is started at its next IDR instead.
  static constexpr std::size_t kMaxCatchUpUnits = 150;

  struct Hooks {
    /// True while a sink wants pixels (a VP8 viewer, a lower rung's viewer); the frame share's readers
    /// are counted here. Called once a unit.
    std::function<bool()> wanted;
    /// Each unit's picture (the decoder's: host I420, or NV12 in VRAM; valid during the call), or null
    /// when none was made for it (nothing wanted, or waiting for an IDR). Called once a unit.
    std::function<void(const Frame*)> picture;
  };
  using DecoderFactory = std::function<std::unique_ptr<PassthroughDecoder>()>;

  /// Makes a decoder once to check one can be made: throws its Error (kUnsupported, kUnavailable) where
  /// none can. `framesShare` (may be null): what the decoders write into (they are made to), or whose
  /// readers want pictures.
  PassthroughPictures(const SourceInfo& source, Publisher* framesShare, DecoderFactory makeDecoder,
                      Hooks hooks);
  ~PassthroughPictures();
  PassthroughPictures(const PassthroughPictures&) = delete;
  PassthroughPictures& operator=(const PassthroughPictures&) = delete;

  /// The unit passthrough just sent, or null when it sent none for a camera frame (held back after a
  /// loss, or refused): the chain is broken until the next IDR. Never blocks, never throws.
  void offer(EncodedUnitPtr unit) noexcept;
  /// Ends the thread (what is queued is dropped); idempotent.
  void stop() noexcept;
  PassthroughDecodeStatus status() const;
  /// The picture just handed to `picture`, in host memory (on the GPU: one download now), for the VP8
  /// encode. Only from within `picture`, on the pictures thread. Throws Error.
  const Frame* hostPicture();

 private:
  struct Item {
    EncodedUnitPtr unit;  // null: a unit that was not sent
    std::uint64_t number = 0;
  };
  void run() noexcept;
  void handle(const Item& item);
  const Frame* decodeWanted(const EncodedUnitPtr& unit);
  const Frame* decodeOne(const EncodedUnit& unit, bool catchUp);
  void breakChain();

  SourceInfo source_;
  Publisher* framesShare_;
  DecoderFactory makeDecoder_;
  Hooks hooks_;
  BoundedQueue<Item> queue_;
  std::uint64_t offered_ = 0;  // offer()'s thread

  // The pictures thread's.
  std::uint64_t lastNumber_ = 0;
  std::vector<EncodedUnitPtr> gop_;  // the units since the last IDR, that IDR first; empty: none usable
  std::unique_ptr<PassthroughDecoder> decoder_;  // null while no picture is wanted
  bool running_ = false;   // something wanted pictures at the last unit
  bool unusable_ = false;  // the stream cannot be decoded here (not 8-bit 4:2:0): never tried again
  std::int64_t lastErrorLogNs_ = 0;
  std::int64_t lastBehindLogNs_ = 0;

  mutable std::mutex mutex_;  // guards status_ and decodeMs_
  PassthroughDecodeStatus status_;
  std::vector<double> decodeMs_;  // the last decodes' wall times (a ring of kDecodeWindow)
  std::size_t decodeNext_ = 0;
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace zerohop
