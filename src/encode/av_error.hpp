#pragma once
// FFmpeg error codes in zerohop's error model: the failing call's name plus av_strerror's text.
// Thread-safety: reentrant.

#include <string>
#include <string_view>

#include "zerohop/error.hpp"

namespace zerohop::encode {

/// av_strerror's text for `err` ("Invalid argument", "Resource temporarily unavailable").
std::string avErrorText(int err);

/// Throws Error(code, "<call> failed: <text> (<err>)[; <fix>]").
[[noreturn]] void throwAv(Errc code, std::string_view call, int err, std::string_view fix = {});

}  // namespace zerohop::encode
