// SoundDecoder (include/zerohop/sound_decoder.hpp) over libopus: one OpusDecoder at 48 kHz in the
// channel count asked for (libopus itself mixes a stereo packet down, or copies a mono one to both
// sides); a lost packet is libopus's packet loss concealment, opus_decode with no data.
#include "zerohop/sound_decoder.hpp"

#include <opus/opus.h>

#include <string>

#include "zerohop/error.hpp"

namespace zerohop {

struct SoundDecoder::Impl {
  struct Closer {
    void operator()(OpusDecoder* d) const noexcept { opus_decoder_destroy(d); }
  };
  std::unique_ptr<OpusDecoder, Closer> decoder;
};

SoundDecoder::SoundDecoder(std::uint32_t channels) : impl_(std::make_unique<Impl>()), channels_(channels) {
  if (channels != 1 && channels != 2)
    throw Error(Errc::kInvalidArgument, "SoundDecoder: " + std::to_string(channels) +
                                            " channels asked; PCM comes as 1 (mono) or 2 (stereo)");
  int rc = OPUS_OK;
  impl_->decoder.reset(
      opus_decoder_create(static_cast<opus_int32>(kSampleRate), static_cast<int>(channels), &rc));
  if (rc != OPUS_OK || !impl_->decoder)
    throw Error(Errc::kDevice, std::string("SoundDecoder: opus_decoder_create: ") + opus_strerror(rc));
}

SoundDecoder::~SoundDecoder() = default;
SoundDecoder::SoundDecoder(SoundDecoder&&) noexcept = default;
SoundDecoder& SoundDecoder::operator=(SoundDecoder&&) noexcept = default;

std::size_t SoundDecoder::decode(const std::uint8_t* packet, std::size_t bytes, std::int16_t* pcm,
                                 std::size_t maxFrames) {
  if (!impl_) throw Error(Errc::kInvalidArgument, "SoundDecoder: used after it was moved from");
  if (!pcm) throw Error(Errc::kInvalidArgument, "SoundDecoder: pcm is null");
  const bool lost = packet == nullptr || bytes == 0;
  std::size_t needed = lastFrames_;
  if (!lost) {
    // The packet's own length (its TOC and frame count; more than 120 ms is invalid): the room it needs.
    const int samples = opus_packet_get_nb_samples(packet, static_cast<opus_int32>(bytes),
                                                   static_cast<opus_int32>(kSampleRate));
    if (samples <= 0)
      throw Error(Errc::kInvalidArgument, std::string("SoundDecoder: not an Opus packet (") +
                                              opus_strerror(samples < 0 ? samples : OPUS_INVALID_PACKET) +
                                              ")");
    needed = static_cast<std::size_t>(samples);
  }
  if (maxFrames < needed)
    throw Error(Errc::kInvalidArgument, "SoundDecoder: room for " + std::to_string(maxFrames) +
                                            " sample frames; the packet decodes to " +
                                            std::to_string(needed));
  const int n = opus_decode(impl_->decoder.get(), lost ? nullptr : packet,
                            lost ? 0 : static_cast<opus_int32>(bytes), pcm, static_cast<int>(needed), 0);
  if (n < 0)
    throw Error(Errc::kInvalidArgument, std::string("SoundDecoder: opus_decode: ") + opus_strerror(n));
  if (lost) {
    ++concealed_;
  } else {
    ++decoded_;
    lastFrames_ = static_cast<std::size_t>(n);
  }
  return static_cast<std::size_t>(n);
}

}  // namespace zerohop
