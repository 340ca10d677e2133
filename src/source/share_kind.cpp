// The `share` source kind: another process's share, `share:NAME[?dir=/abs/dir&fps=N]` (ShareSource).
#include "share_source.hpp"
#include "source_kind.hpp"

namespace zerohop {
namespace {

void parseTarget(std::string_view target, SourceSpec& spec) {
  if (target.empty()) badSourceSpec("share needs the name another process publishes, e.g. share:cam0");
  spec.path = std::string(target);
}

bool parseOption(std::string_view key, std::string_view value, SourceSpec& spec) {
  if (key != "dir") return false;
  if (value.empty() || value.front() != '/') badSourceSpec("dir must be an absolute path (the share's directory)");
  spec.options[std::string(key)] = std::string(value);
  return true;
}

void print(const SourceSpec& spec, SourceSpecText& text) {
  text.target(spec.path);
  printCommonOptions(spec, text);
  if (auto d = spec.options.find("dir"); d != spec.options.end()) text.option("dir", d->second);
}

// Its frames are read in place from the share's ring: options' allocator does not apply.
std::unique_ptr<FrameSource> open(const SourceSpec& spec, const SourceOptions&) {
  return std::make_unique<ShareSource>(spec);
}

}  // namespace

SourceKind shareSourceKind() {
  return {"share", "share:NAME[?dir=/abs/dir&fps=N]", "share:cam0", parseTarget, parseOption, print, open};
}

}  // namespace zerohop
