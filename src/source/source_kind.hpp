#pragma once
// The one registry of source kinds: `--source KIND:TARGET?key=value&...`, camera tables, the C API
// and FrameStream all resolve a kind through it (parseSourceSpec, toString, openSource). Modelled on
// libcamera's PipelineHandlerFactory and GStreamer's element factories: a kind is a name with its
// parser, its printer and its opener; nothing else in the library switches on a kind's name.
//
// Adding a kind (rtsp_kind.cpp is the latest) is one new file and one line:
//   1. src/source/foo_kind.cpp defines `SourceKind fooSourceKind()`: its name, the synopsis and examples
//      shown in errors, how it parses the part after "rtsp:" (parseTarget) and the query options of its own
//      (parseOption; format, size and fps are every kind's and parsed before it is asked), how it
//      prints them back (print), and how it opens (open). Report a bad spec with badSourceSpec().
//   2. Declare it below and add it to builtinSourceKinds() in source_registry.cpp (and the file to
//      this folder's CMakeLists.txt).
// A kind's functions are plain functions (no state): the table is built once and read-only after.
// Thread-safety: reentrant (the table is immutable once built).

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "zerohop/source.hpp"

namespace zerohop {

/// How a spec is printed back (toString): the part after "KIND:", then the query options in order.
class SourceSpecText {
 public:
  explicit SourceSpecText(std::string_view kind) : text_(std::string(kind) + ':') {}
  void target(std::string_view part) { text_ += part; }  ///< appended to the part before '?'
  void option(std::string_view key, std::string_view value) {
    text_ += sep_;
    text_ += key;
    text_ += '=';
    text_ += value;
    sep_ = '&';
  }
  const std::string& str() const noexcept { return text_; }

 private:
  std::string text_;
  char sep_ = '?';  // then '&': the first option opens the query
};

struct SourceKind {
  std::string_view name;      ///< the part before ':' ("test")
  std::string_view synopsis;  ///< for messages: "test[:WxH[@FPS]]"
  std::string_view examples;  ///< for a bad spec's message: "test:1280x720@30, test:1920x1080@60?format=uyvy"
  /// Parses the part after "NAME:" (empty when the spec has none) into `spec`, whose kind is set.
  /// Throws through badSourceSpec().
  void (*parseTarget)(std::string_view target, SourceSpec& spec);
  /// A query option of this kind (the common format, size and fps are handled before): stores it in
  /// `spec` and returns true, throws through badSourceSpec() on a bad value, false when unknown.
  bool (*parseOption)(std::string_view key, std::string_view value, SourceSpec& spec);
  /// Prints `spec` back in a form parseSourceSpec() takes: the target, then options (common ones too:
  /// printCommonOptions()).
  void (*print)(const SourceSpec& spec, SourceSpecText& text);
  /// Opens the source `spec` names. Throws Error with the cause and the fix.
  std::unique_ptr<FrameSource> (*open)(const SourceSpec& spec, const SourceOptions& options);
  /// Optional, for a kind whose spec is a URL of its own (rtsp://host/path?camera's-query): parses the
  /// whole text, query included; parseTarget and parseOption are then not called.
  SourceSpec (*parseText)(std::string_view text) = nullptr;
};

/// Every registered kind, in the order messages list them.
std::span<const SourceKind> sourceKinds();
/// The kind named `name`, or nullptr.
const SourceKind* findSourceKind(std::string_view name) noexcept;

/// Throws Error(kInvalidArgument) "bad --source: WHAT; examples: ..." (the one message form of a bad spec).
[[noreturn]] void badSourceSpec(const std::string& what);
/// The common option parsers, for a kind's own target syntax (test:WxH@FPS).
void parseSourceSize(std::string_view text, SourceSpec& spec);
void parseSourceFps(std::string_view text, SourceSpec& spec);
/// size=, fps= (unless `sizeInTarget`), then format=, as every kind prints them.
void printCommonOptions(const SourceSpec& spec, SourceSpecText& text, bool sizeInTarget = false);
/// The frame rate as printed ("30", "29.97").
std::string fpsText(double fps);

// The built-in kinds (one file each).
SourceKind testSourceKind();   // test_kind.cpp
SourceKind v4l2SourceKind();   // v4l2_kind.cpp
SourceKind shareSourceKind();  // share_kind.cpp
SourceKind rtspSourceKind();   // rtsp_kind.cpp (media builds: ZEROHOP_HAVE_RTSP)

}  // namespace zerohop
