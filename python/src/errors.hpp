#pragma once
// The Python boundary of zerohop's one error model: every zerohop::Error that reaches Python is
// raised as a subclass of zerohop.Error chosen by its Errc (NotFoundError, UnavailableError, ...),
// with the library's message unchanged and the category name in the `errc` attribute.
// Thread-safety: registerErrors runs once at import, under the GIL.

#include <pybind11/pybind11.h>

namespace zerohop::python {

/// Creates zerohop.Error and its subclasses in `m` and installs the exception translator.
void registerErrors(pybind11::module_& m);

}  // namespace zerohop::python
