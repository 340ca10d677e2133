#include "config_check.hpp"

#include <algorithm>
#include <fstream>
#include <set>

#include "camera_options.hpp"
#include "zerohop/error.hpp"

namespace zerohop::cli {
namespace {

constexpr const char* kCameraTable = "camera";  // [[camera]]: serve's cameras (camera_options.hpp)

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// Long and short names (without dashes) of an app's own options.
std::set<std::string> optionNames(const CLI::App& app) {
  std::set<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& n : opt->get_lnames()) names.insert(n);
    for (const auto& n : opt->get_snames()) names.insert(n);
  }
  return names;
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (n == "help" || n == "h" || n == "version" || n == "config") continue;
    out += (out.empty() ? "" : ", ") + n;
  }
  return out;
}

// A line as it may be quoted in a message: control bytes (a binary file) become '?', at most 60 chars.
std::string printable(const std::string& s) {
  std::string out = s.substr(0, 60);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out + (s.size() > 60 ? "..." : "");
}

}  // namespace

void checkConfigFile(const std::string& path, const CLI::App& app) {
  std::ifstream in(path);
  if (!in) throw Error(Errc::kInvalidArgument, "--config " + path + ": cannot be read");
  std::set<std::string> tables;
  for (const CLI::App* sub : app.get_subcommands({})) tables.insert(sub->get_name());
  auto where = [&path](int line) { return "--config " + path + " line " + std::to_string(line) + ": "; };
  auto knownIn = [&app](const std::string& table) {
    return table.empty() ? optionNames(app) : optionNames(*app.get_subcommand(table));
  };

  std::string table;  // "" = the top level
  std::string line;
  int number = 0;
  int openBrackets = 0;  // inside a multi-line array value
  while (std::getline(in, line)) {
    ++number;
    const std::string t = trim(line);
    if (openBrackets > 0) {
      openBrackets += static_cast<int>(std::count(t.begin(), t.end(), '[') - std::count(t.begin(), t.end(), ']'));
      continue;
    }
    if (t.empty() || t.front() == '#') continue;
    if (t.front() == '[') {
      const bool array = t.rfind("[[", 0) == 0;
      const auto close = t.find(array ? "]]" : "]");
      const std::string rest = close == std::string::npos ? "" : trim(t.substr(close + (array ? 2 : 1)));
      if (close == std::string::npos || (!rest.empty() && rest.front() != '#')) {
        throw Error(Errc::kInvalidArgument, where(number) + "\"" + printable(t) + "\" is not a TOML table header");
      }
      table = trim(t.substr(array ? 2 : 1, close - (array ? 2 : 1)));
      if (table == kCameraTable) {
        if (!array) {
          throw Error(Errc::kInvalidArgument, where(number) + "[camera] is an array of tables: write [[camera]], one per camera");
        }
        continue;  // its keys are checked by readCameraTables, which can name the camera
      }
      if (!tables.count(table)) {
        throw Error(Errc::kInvalidArgument, where(number) + "unknown table [" + printable(table) + "] (tables: " +
                                                [&] {
                                                  std::string s;
                                                  for (const auto& n : tables) s += (s.empty() ? "" : ", ") + n;
                                                  return s;
                                                }() + ")");
      }
      continue;
    }
    if (table == kCameraTable) continue;
    const auto eq = t.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw Error(Errc::kInvalidArgument, where(number) + "\"" + printable(t) + "\" is not TOML (key = value, or [table])");
    }
    std::string key = trim(t.substr(0, eq));
    if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') && key.back() == key.front()) {
      key = key.substr(1, key.size() - 2);
    }
    std::string keyTable = table;
    if (const auto dot = key.find('.'); dot != std::string::npos && table.empty()) {
      keyTable = key.substr(0, dot);
      key = key.substr(dot + 1);
      if (!tables.count(keyTable)) {
        throw Error(Errc::kInvalidArgument, where(number) + "unknown table \"" + keyTable + "\" in key " +
                                                keyTable + "." + key);
      }
    }
    const std::set<std::string> known = knownIn(keyTable);
    if (!known.count(key) || key == "help" || key == "config") {
      std::string hint;
      std::string dashed = key;
      std::replace(dashed.begin(), dashed.end(), '_', '-');
      if (dashed != key && known.count(dashed)) hint = "; did you mean " + dashed + "?";
      throw Error(Errc::kInvalidArgument,
                  where(number) + "unknown key \"" + printable(key) + "\"" +
                      (keyTable.empty() ? " at the top level" : " in [" + keyTable + "]") + hint +
                      " (known: " + joined(known) + ")");
    }
    const std::string value = trim(t.substr(eq + 1));
    if (value.empty()) throw Error(Errc::kInvalidArgument, where(number) + "key \"" + key + "\" has no value");
    if (value.front() == '[') {
      openBrackets = static_cast<int>(std::count(value.begin(), value.end(), '[') -
                                      std::count(value.begin(), value.end(), ']'));
    }
  }
  readCameraTables(path);
}

}  // namespace zerohop::cli
