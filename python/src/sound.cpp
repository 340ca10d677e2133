// zerohop.SoundDecoder: a sound share's Opus packets (NAME.opus frames) as 48 kHz int16 PCM, a 2-D
// buffer (frames, channels) numpy.asarray() takes without a copy; zerohop::SoundDecoder underneath
// (built where libopus is: python/CMakeLists.txt). Thread-safety: a decoder is used under the GIL.
#include "sound.hpp"

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "frame.hpp"
#include "zerohop/error.hpp"
#include "zerohop/sound_decoder.hpp"

namespace py = pybind11;

namespace zerohop::python {
namespace {

// One decoded packet: interleaved int16, shape (frames, channels).
struct PyPcm {
  std::vector<std::int16_t> samples;
  std::uint32_t channels = 1;
  std::size_t frames() const { return samples.size() / channels; }
};

PyPcm decodeOne(SoundDecoder& d, const std::uint8_t* packet, std::size_t bytes) {
  PyPcm out;
  out.channels = d.channels();
  out.samples.resize(SoundDecoder::kMaxPacketFrames * d.channels());
  const std::size_t n = d.decode(packet, bytes, out.samples.data(), SoundDecoder::kMaxPacketFrames);
  out.samples.resize(n * d.channels());
  return out;
}

// decode(packet): a Frame of a sound share, any bytes-like object holding one Opus packet, or None (a
// packet that never came: concealed).
PyPcm decode(SoundDecoder& d, const py::object& packet) {
  if (packet.is_none()) return decodeOne(d, nullptr, 0);
  if (py::isinstance<PyFrame>(packet)) {
    const auto& f = packet.cast<const PyFrame&>();
    if (f.meta().format != PixelFormat::kOpus)
      throw Error(Errc::kInvalidArgument, "SoundDecoder.decode: the frame is " +
                                              std::string(formatName(f.meta().format)) +
                                              ", not an Opus packet (read a NAME.opus share)");
    const PyPlane p = f.plane(0);  // raises after release()
    if (p.memory != MemoryKind::kHost)
      throw Error(Errc::kUnsupported, "SoundDecoder.decode: a GPU-memory frame");
    return decodeOne(d, p.data, f.meta().bytesUsed);
  }
  const py::buffer_info b = py::buffer(packet).request();
  if (b.ndim != 1 || b.itemsize != 1)
    throw Error(Errc::kInvalidArgument,
                "SoundDecoder.decode: takes a Frame, bytes of one Opus packet, or None");
  return decodeOne(d, static_cast<const std::uint8_t*>(b.ptr), static_cast<std::size_t>(b.size));
}

}  // namespace

void registerSound(py::module_& m) {
  py::class_<PyPcm>(m, "Pcm", py::buffer_protocol(), R"doc(
One decoded packet: 48 kHz signed 16-bit PCM, shape (frames, channels), interleaved.
numpy.asarray(pcm) and memoryview(pcm) use the buffer protocol (no copy).)doc")
      .def_buffer([](PyPcm& p) {
        return py::buffer_info(p.samples.data(), sizeof(std::int16_t),
                               py::format_descriptor<std::int16_t>::format(), 2,
                               {static_cast<py::ssize_t>(p.frames()), static_cast<py::ssize_t>(p.channels)},
                               {static_cast<py::ssize_t>(sizeof(std::int16_t) * p.channels),
                                static_cast<py::ssize_t>(sizeof(std::int16_t))});
      })
      .def_property_readonly("frames", &PyPcm::frames)
      .def_property_readonly("channels", [](const PyPcm& p) { return p.channels; })
      .def("__len__", &PyPcm::frames)
      .def("__repr__", [](const PyPcm& p) {
        return "<zerohop.Pcm " + std::to_string(p.frames()) + " frames x " + std::to_string(p.channels) +
               " channels>";
      });

  py::class_<SoundDecoder>(m, "SoundDecoder", R"doc(
The Opus packets of a sound share (NAME.opus: serve --share NAME with sound) as PCM:

    dec = zerohop.SoundDecoder(channels=1)      # 1 or 2: a stereo packet is mixed down, a mono one copied
    sub = zerohop.Subscriber("cam0.opus")
    want = None
    while (f := sub.next(timeout=1.0)) is not None:
        if want is not None:
            for _ in range(f.seq - want):      # packets the share dropped for this reader: concealed
                use(numpy.asarray(dec.decode(None)))
        use(numpy.asarray(dec.decode(f)))       # (960, 1) int16 for a 20 ms packet
        want = f.seq + 1; f.release()

One decoder per reading thread: it keeps the sound's state.)doc")
      .def(py::init<std::uint32_t>(), py::arg("channels") = 1)
      .def("decode", &decode, py::arg("packet"),
           "One packet (a Frame of a NAME.opus share, or bytes) as Pcm; None: a packet that never came, "
           "concealed.")
      .def_property_readonly("channels", &SoundDecoder::channels)
      .def_property_readonly("sample_rate", [](const SoundDecoder&) { return SoundDecoder::kSampleRate; })
      .def_property_readonly("packets_decoded", &SoundDecoder::packetsDecoded)
      .def_property_readonly("packets_concealed", &SoundDecoder::packetsConcealed);
}

}  // namespace zerohop::python
