#include "stream/web_assets.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>

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
  const std::filesystem::path file = std::filesystem::path(webRoot) / rel;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec) || std::filesystem::file_size(file, ec) > kMaxFileBytes) {
    return std::nullopt;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return WebAsset{std::move(body), contentTypeFor(rel)};
}

}  // namespace zerohop::stream
