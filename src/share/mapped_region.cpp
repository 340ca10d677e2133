#include "share/mapped_region.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::share_detail {

MappedRegion MappedRegion::map(int fd, std::size_t bytes, bool writable, const char* what) {
  if (bytes == 0) throw Error(Errc::kInvalidArgument, std::string("mmap of an empty ") + what);
  const int prot = writable ? (PROT_READ | PROT_WRITE) : PROT_READ;
  void* p = ::mmap(nullptr, bytes, prot, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throwErrno("mmap", errno, what);
  MappedRegion region;
  region.base_ = p;
  region.size_ = bytes;
  return region;
}

void MappedRegion::reset() noexcept {
  if (base_ && ::munmap(base_, size_) != 0) log::warn("munmap failed: ", std::strerror(errno));
  base_ = nullptr;
  size_ = 0;
}

}  // namespace zerohop::share_detail
