#pragma once
// A move-only owner of one dlopen() handle, so NVENC and the CUDA driver are loaded at run time and
// a binary starts on a machine without the NVIDIA driver.
// Thread-safety: thread-bound; dlopen/dlsym themselves are thread-safe.

#include <string>

namespace zerohop::encode {

class SharedLibrary {
 public:
  SharedLibrary() = default;
  /// dlopen(name, RTLD_NOW | RTLD_LOCAL [| RTLD_NODELETE]). Never throws: an empty owner and
  /// `error()` = dlerror()'s text when the library cannot be loaded. `keepLoaded` = RTLD_NODELETE,
  /// for libraries that must never be unmapped while the process runs (libcuda).
  static SharedLibrary open(const char* name, bool keepLoaded = false);
  ~SharedLibrary() { reset(); }
  SharedLibrary(SharedLibrary&& other) noexcept;
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  explicit operator bool() const noexcept { return handle_ != nullptr; }
  /// dlerror() text of the failed open (empty when it succeeded).
  const std::string& error() const noexcept { return error_; }
  /// dlsym(handle, symbol), nullptr if absent.
  void* symbol(const char* name) const noexcept;
  /// dlclose (idempotent; logs a failure, never throws).
  void reset() noexcept;

 private:
  void* handle_ = nullptr;
  std::string name_;
  std::string error_;
};

}  // namespace zerohop::encode
