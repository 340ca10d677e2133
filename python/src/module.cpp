// The `zerohop` Python module: read frames that another process publishes in a zerohop share ring,
// zero-copy (DLPack / buffer protocol). Host-memory rings only for now; see docs/share-protocol.md.
#include <pybind11/pybind11.h>

#include "errors.hpp"
#include "frame.hpp"
#include "plane.hpp"
#ifdef ZEROHOP_PY_SOUND
#include "sound.hpp"
#endif
#include "subscriber.hpp"
#include "zerohop/version.hpp"

PYBIND11_MODULE(zerohop, m) {
  m.doc() = R"doc(zerohop: frames another process publishes (zerohop serve --share NAME), read in place.

    import numpy, zerohop
    s = zerohop.Subscriber("cam0")
    with s.next(timeout=1.0) as f:        # a lease on the next frame (None on timeout)
        y = numpy.from_dlpack(f)          # plane 0, zero-copy, read-only, real pitch as stride
        ok = f.valid()                    # False: overwritten while we read it
)doc";
  m.attr("__version__") = zerohop::kVersion;
  zerohop::python::registerErrors(m);
  zerohop::python::registerPlane(m);
  zerohop::python::registerFrame(m);
  zerohop::python::registerSubscriber(m);
#ifdef ZEROHOP_PY_SOUND
  zerohop::python::registerSound(m);
#endif
}
