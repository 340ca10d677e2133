#pragma once
// zerohop.SoundDecoder and zerohop.Pcm (sound.cpp); registered where the module is built with libopus.
#include <pybind11/pybind11.h>

namespace zerohop::python {

/// Registers zerohop.SoundDecoder and zerohop.Pcm.
void registerSound(pybind11::module_& m);

}  // namespace zerohop::python
