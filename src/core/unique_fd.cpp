#include "core/unique_fd.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "zerohop/log.hpp"

namespace zerohop {

void UniqueFd::reset(int fd) noexcept {
  const int old = std::exchange(fd_, fd);
  // EINTR after close() still closed the descriptor on Linux; never retry.
  if (old >= 0 && ::close(old) != 0 && errno != EINTR) {
    log::warn("close(", old, ") failed: ", std::strerror(errno));
  }
}

}  // namespace zerohop
