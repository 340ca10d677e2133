#include "shared_library.hpp"

#include <dlfcn.h>

#include <utility>

#include "zerohop/log.hpp"

namespace zerohop::encode {

SharedLibrary SharedLibrary::open(const char* name, bool keepLoaded) {
  SharedLibrary lib;
  lib.name_ = name;
  dlerror();  // clear a stale message
  lib.handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL | (keepLoaded ? RTLD_NODELETE : 0));
  if (lib.handle_ == nullptr) {
    const char* why = dlerror();
    lib.error_ = why != nullptr ? why : "dlopen failed";
  }
  return lib;
}

SharedLibrary::SharedLibrary(SharedLibrary&& other) noexcept { *this = std::move(other); }

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  if (this != &other) {
    reset();
    handle_ = std::exchange(other.handle_, nullptr);
    name_ = std::move(other.name_);
    error_ = std::move(other.error_);
  }
  return *this;
}

void* SharedLibrary::symbol(const char* name) const noexcept {
  return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
}

void SharedLibrary::reset() noexcept {
  if (handle_ == nullptr) return;
  if (dlclose(std::exchange(handle_, nullptr)) != 0) {
    const char* why = dlerror();
    log::warn("dlclose(", name_, ") failed: ", why != nullptr ? why : "unknown error");
  }
}

}  // namespace zerohop::encode
