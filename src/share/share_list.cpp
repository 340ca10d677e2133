// listShares(): the shares of a directory, live or left by a dead publisher, found without
// connecting to any (a probe would be a client the publisher has to reject).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

#include "share/unix_socket.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

constexpr std::string_view kSocketSuffix = ".sock";
constexpr unsigned long kAcceptCon = 0x10000;  // __SO_ACCEPTCON in /proc/net/unix's Flags: listening

std::string canonical(const std::string& path) {
  std::error_code ec;
  const auto c = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : c.string();
}

/// Paths of the Unix sockets that listen, as /proc/net/unix lists them (canonical), in this network
/// namespace. Empty when the file cannot be read (then every share reads as not live).
std::set<std::string> listeningSocketPaths() {
  std::set<std::string> paths;
  std::ifstream in("/proc/net/unix");
  std::string line;
  std::getline(in, line);  // "Num RefCount Protocol Flags Type St Inode Path"
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string num, refCount, protocol, flags, type, state, inode, path;
    if (!(fields >> num >> refCount >> protocol >> flags >> type >> state >> inode >> path)) continue;
    if (path.empty() || path.front() != '/') continue;  // unnamed or abstract
    if (std::stoul(flags, nullptr, 16) & kAcceptCon) paths.insert(canonical(path));
  }
  return paths;
}

}  // namespace

std::vector<ShareListing> listShares(const std::string& directory) {
  const std::string dir = directory.empty() ? share_detail::defaultShareDirectory() : directory;
  std::vector<ShareListing> shares;
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    if (errno == ENOENT) return shares;  // nothing was ever published there
    throwErrno("opendir", errno, dir);
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view file = e->d_name;
    if (file.size() <= kSocketSuffix.size() || !file.ends_with(kSocketSuffix)) continue;
    std::string name(file.substr(0, file.size() - kSocketSuffix.size()));
    try {
      share_detail::validateShareName(name);
    } catch (const Error&) {
      continue;  // not a file a publisher made
    }
    names.push_back(std::move(name));
  }
  ::closedir(d);
  const std::set<std::string> listening = listeningSocketPaths();
  for (auto& name : names) {
    ShareListing s;
    s.socketPath = share_detail::socketPathFor(dir, name);
    struct stat st {};
    if (::lstat(s.socketPath.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    s.live = listening.count(canonical(s.socketPath)) != 0;
    s.name = std::move(name);
    shares.push_back(std::move(s));
  }
  std::sort(shares.begin(), shares.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return shares;
}

}  // namespace zerohop
