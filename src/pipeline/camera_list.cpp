// checkCameras: the mistakes in a camera list that must stop serve at start, each naming the camera.

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "record/media_file.hpp"
#include "zerohop/camera_server.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {

// The device a V4L2 camera opens, symlinks (/dev/v4l/by-id/...) and "." / ".." resolved where the
// path exists, so two spellings of one device compare equal.
std::string deviceKey(const std::string& path) {
  std::error_code ec;
  const auto canonical = std::filesystem::weakly_canonical(path, ec);
  return ec ? std::filesystem::path(path).lexically_normal().string() : canonical.string();
}

std::string quoted(const CameraConfig& c) {
  return "camera \"" + c.name + "\"";
}

}  // namespace

bool isValidCameraName(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-';
  });
}

void checkCameras(const std::vector<CameraConfig>& cameras) {
  if (cameras.empty())
    throw Error(Errc::kInvalidArgument,
                "no camera to serve: CameraServerConfig::cameras is empty; give at least one camera (a name and a source)");
  std::map<std::string, const CameraConfig*> names, devices, shares, recordings;
  for (const auto& c : cameras) {
    if (!isValidCameraName(c.name)) {
      throw Error(Errc::kInvalidArgument, quoted(c) +
                                              ": a camera name is 1 to 64 letters, digits, '_' or '-' (it is "
                                              "the URL /whep/NAME), e.g. front_door");
    }
    if (!names.emplace(c.name, &c).second) {
      throw Error(Errc::kInvalidArgument,
                  "two cameras are named \"" + c.name + "\": give each camera its own name");
    }
    if (c.source.kind == "v4l2") {
      const auto [it, fresh] = devices.emplace(deviceKey(c.source.path), &c);
      if (!fresh) {
        throw Error(Errc::kInvalidArgument,
                    quoted(c) + " opens " + c.source.path + ", which " + quoted(*it->second) +
                        " opens already: a device can be captured by one camera only");
      }
    }
    if (!c.shareName.empty()) {
      const auto [it, fresh] = shares.emplace(c.shareName, &c);
      if (!fresh) {
        throw Error(Errc::kInvalidArgument, quoted(c) + " shares as \"" + c.shareName + "\", as " +
                                                quoted(*it->second) +
                                                " does already: give each camera its own share name");
      }
    }
    if (!c.recordPath.empty()) {
      try {
        record::containerForPath(c.recordPath);
      } catch (const Error& e) {
        throw Error(Errc::kInvalidArgument, quoted(c) + ": " + e.what());
      }
      const auto [it, fresh] = recordings.emplace(c.recordPath, &c);
      if (!fresh) {
        throw Error(Errc::kInvalidArgument, quoted(c) + " records to " + c.recordPath + ", as " +
                                                quoted(*it->second) +
                                                " does already: give each camera its own file");
      }
    }
  }
}

}  // namespace zerohop
