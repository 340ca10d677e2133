// zerohop shares: the shares published on this machine for this user (or in --dir), without
// connecting to any: one live share name a line on stdout; a dead publisher's left-over socket
// (SIGKILL) as a note on stderr.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "zerohop/share.hpp"

namespace zerohop::cli {

Runner addSharesCommand(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "shares", "List the shares published here (serve --share NAME, any zerohop publisher): one name a line");
  cmd->add_option("--dir", *dir,
                  "the share directory (default: $XDG_RUNTIME_DIR/zerohop, else /tmp/zerohop-UID, as publishers use)");
  return [dir] {
    for (const ShareListing& s : listShares(*dir)) {
      if (s.live) {
        std::printf("%s\n", s.name.c_str());
      } else {
        std::fprintf(stderr,
                     "note: %s: its publisher died without closing (socket %s left; a new publisher of that "
                     "name replaces it)\n",
                     s.name.c_str(), s.socketPath.c_str());
      }
    }
    std::fflush(stdout);
    return 0;
  };
}

}  // namespace zerohop::cli
