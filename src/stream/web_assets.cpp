#include "stream/web_assets.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace zerohop::stream {
namespace {

constexpr std::uintmax_t kMaxFileBytes = 16u << 20;

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "/a/b.js" -> "a/b.js"; empty when the path could escape the root or is not plain.
std::string relativePath(std::string_view urlPath) {
  if (urlPath.empty() || urlPath.front() != '/') return {};
  std::string rel(urlPath.substr(1));
  if (rel.empty()) rel = "index.html";
  if (rel.back() == '/') rel += "index.html";
  if (rel.find('\0') != std::string::npos || rel.find('\\') != std::string::npos ||
      rel.find("//") != std::string::npos || rel.front() == '/') {
    return {};
  }
  std::size_t start = 0;
  while (start <= rel.size()) {
    std::size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    const std::string_view part(rel.data() + start, end - start);
    if (part == ".." || part == "." || part.empty() || part.front() == '.') return {};
    start = end + 1;
  }
  return rel;
}

}  // namespace

std::string contentTypeFor(std::string_view path) {
  if (endsWith(path, ".html") || endsWith(path, ".htm")) return "text/html; charset=utf-8";
  if (endsWith(path, ".js") || endsWith(path, ".mjs")) return "text/javascript; charset=utf-8";
  if (endsWith(path, ".css")) return "text/css; charset=utf-8";
  if (endsWith(path, ".json")) return "application/json";
  if (endsWith(path, ".svg")) return "image/svg+xml";
  if (endsWith(path, ".png")) return "image/png";
  if (endsWith(path, ".ico")) return "image/x-icon";
  if (endsWith(path, ".txt")) return "text/plain; charset=utf-8";
  if (endsWith(path, ".wasm")) return "application/wasm";
  return "application/octet-stream";
}

std::optional<WebAsset> findWebAsset(std::string_view urlPath, const std::string& webRoot) {
  const std::string rel = relativePath(urlPath);
  if (rel.empty()) return std::nullopt;
  if (webRoot.empty()) {
    for (const auto& f : embeddedFiles()) {
      if (rel == f.path) {
        return WebAsset{std::string(reinterpret_cast<const char*>(f.data), f.size), contentTypeFor(rel)};
      }
    }
    return std::nullopt;
  }
  // Walk from the root one component at a time, following no symbolic link (O_NOFOLLOW on every
  // component): only regular files that really lie under the root are served.
  int dir = ::open(webRoot.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return std::nullopt;
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = rel.find('/', start);
    const std::string part = rel.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    const int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (slash == std::string::npos ? O_NONBLOCK : O_DIRECTORY);
    const int next = ::openat(dir, part.c_str(), flags);
    ::close(dir);
    if (next < 0) return std::nullopt;
    dir = next;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  const int fd = dir;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uintmax_t>(st.st_size) > kMaxFileBytes) {
    ::close(fd);
    return std::nullopt;
  }
  std::string body(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < body.size()) {
    const ssize_t n = ::read(fd, body.data() + got, body.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  body.resize(got);
  return WebAsset{std::move(body), contentTypeFor(rel)};
}

}  // namespace zerohop::stream
