// zh_list_shares: the C API's listShares().
#include <cstring>
#include <string>

#include "capi/status.hpp"
#include "zerohop/share.hpp"

using zerohop::capi::fail;
using zerohop::capi::guarded;

extern "C" {

zh_status zh_list_shares(const char* directory, char* buf, size_t size, size_t* needed) {
  constexpr const char* fn = "zh_list_shares";
  return guarded(fn, [&]() -> zh_status {
    std::string text;
    for (const auto& s : zerohop::listShares(directory ? directory : ""))
      if (s.live) text += s.name + "\n";
    if (needed) *needed = text.size() + 1;
    if (!buf || size < text.size() + 1)
      return fail(fn, ZH_ERR_INVALID_ARGUMENT,
                  "buffer of " + std::to_string(size) + " bytes is too small: " + std::to_string(text.size() + 1) +
                      " needed");
    std::memcpy(buf, text.c_str(), text.size() + 1);
    return ZH_OK;
  });
}

}  // extern "C"
