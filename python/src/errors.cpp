#include "errors.hpp"

#include <array>
#include <exception>

#include "zerohop/error.hpp"

namespace py = pybind11;

namespace zerohop::python {
namespace {

struct ErrorClass {
  Errc code;
  const char* name;       // zerohop.<name>
  const char* extraBase;  // a builtin it also derives from, so `except ValueError` etc. work; or nullptr
  const char* doc;
};

constexpr std::array kClasses{
    ErrorClass{Errc::kInvalidArgument, "InvalidArgumentError", "ValueError",
               "A malformed request, or a released frame or closed subscriber used again."},
    ErrorClass{Errc::kNotFound, "NotFoundError", nullptr, "Nobody publishes that share (no socket)."},
    ErrorClass{Errc::kUnavailable, "UnavailableError", nullptr,
               "The share exists but cannot be used: refused, or the publisher went away (call reconnect())."},
    ErrorClass{Errc::kUnsupported, "UnsupportedError", nullptr, "Valid, but not possible in this build."},
    ErrorClass{Errc::kIo, "IoError", "OSError", "An operating-system call failed."},
    ErrorClass{Errc::kDevice, "DeviceError", nullptr, "A CUDA or driver call failed."},
    ErrorClass{Errc::kProtocol, "ProtocolError", nullptr,
               "The peer broke the share protocol (version mismatch, foreign peer)."},
    ErrorClass{Errc::kTimeout, "TimeoutError", "TimeoutError", "The publisher did not answer in time."},
    ErrorClass{Errc::kInternal, "InternalError", nullptr, "A bug in zerohop."},
};

// One Python class per Errc, owned by the module (strong references for the interpreter's lifetime).
std::array<PyObject*, kClasses.size()> gTypes{};
PyObject* gBase = nullptr;

PyObject* typeFor(Errc code) {
  for (std::size_t i = 0; i < kClasses.size(); ++i) {
    if (kClasses[i].code == code) return gTypes[i];
  }
  return gBase;
}

void raise(const Error& e) {
  PyObject* type = typeFor(e.code());
  PyObject* exc = PyObject_CallFunction(type, "s", e.what());
  if (exc == nullptr) return;  // the call itself raised (out of memory): that error stays set
  PyObject* errc = PyUnicode_FromString(errcName(e.code()));
  if (errc != nullptr) {
    PyObject_SetAttrString(exc, "errc", errc);
    Py_DECREF(errc);
  }
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
}

}  // namespace

void registerErrors(py::module_& m) {
  gBase = PyErr_NewExceptionWithDoc("zerohop.Error",
                                    "Base class of every zerohop error; `errc` names the category.",
                                    PyExc_Exception, nullptr);
  if (gBase == nullptr) throw py::error_already_set();
  m.add_object("Error", py::handle(gBase));  // the module takes its own reference; gBase keeps ours
  const py::module_ builtins = py::module_::import("builtins");
  for (std::size_t i = 0; i < kClasses.size(); ++i) {
    const auto& c = kClasses[i];
    const py::tuple bases = c.extraBase ? py::tuple(py::make_tuple(py::handle(gBase), builtins.attr(c.extraBase)))
                                        : py::tuple(py::make_tuple(py::handle(gBase)));
    const std::string qualified = std::string("zerohop.") + c.name;
    gTypes[i] = PyErr_NewExceptionWithDoc(qualified.c_str(), c.doc, bases.ptr(), nullptr);
    if (gTypes[i] == nullptr) throw py::error_already_set();
    m.add_object(c.name, py::handle(gTypes[i]));
  }

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      raise(e);
    }
  });
}

}  // namespace zerohop::python
