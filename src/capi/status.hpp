#pragma once
// The C API's one boundary: C++ exceptions become a zh_status plus this thread's message.
// Thread-safety: reentrant (the message is thread-local).
#include <string>

#include "zerohop/error.hpp"
#include "zerohop/zerohop.h"

namespace zerohop::capi {

zh_status statusOf(Errc code) noexcept;
/// Sets this thread's message to "<function>: <message>" and returns `status`.
zh_status fail(const char* function, zh_status status, const std::string& message) noexcept;
/// ZH_ERR_INVALID_ARGUMENT: `what` (a handle argument) is NULL, closed, or of another type.
zh_status badHandle(const char* function, const char* what) noexcept;

/// Runs `body` (which returns a zh_status), turning any exception into a status and message.
template <class Body>
zh_status guarded(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const Error& e) {
    return fail(function, statusOf(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(function, ZH_ERR_INTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return fail(function, ZH_ERR_INTERNAL, e.what());
  } catch (...) {
    return fail(function, ZH_ERR_INTERNAL, "unknown exception");
  }
}

}  // namespace zerohop::capi
