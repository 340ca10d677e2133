#pragma once
// The viewer page's files: the copy of web/ embedded at build time, or a directory on disk
// (StreamConfig::webRoot, for development), looked up by URL path with traversal refused.
// Thread-safety: reentrant; the embedded table is immutable.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace zerohop::stream {

struct EmbeddedFile {
  const char* path;  ///< relative to web/, '/'-separated, e.g. "index.html"
  const unsigned char* data;
  std::size_t size;
};

/// Every file of web/ as it was when the library was built (generated source).
std::span<const EmbeddedFile> embeddedFiles();

struct WebAsset {
  std::string body;
  std::string contentType;
};

/// The Content-Type for a file name by its extension (html, js, css, json, svg, png, ...);
/// application/octet-stream when unknown.
std::string contentTypeFor(std::string_view path);

/// Looks up the URL path ("/" = "/index.html") in `webRoot` when non-empty, else in the embedded
/// files. nullopt when absent, or when the path is not a plain relative path ("..", "//", "\\", NUL),
/// or when any component under `webRoot` is a symbolic link or the file is not a regular file.
std::optional<WebAsset> findWebAsset(std::string_view urlPath, const std::string& webRoot);

}  // namespace zerohop::stream
