#include "stream/layer_request.hpp"

#include <nlohmann/json.hpp>

#include "zerohop/error.hpp"

namespace zerohop::stream {
namespace {

constexpr std::size_t kMaxBody = 1024;  // {"encodingId":"2"} is 18 bytes

[[noreturn]] void refuse(const std::string& what, std::size_t rungs) {
  throw Error(Errc::kInvalidArgument, what + ": send {\"encodingId\":\"N\"} for rung N (0 to " +
                                          std::to_string(rungs - 1) +
                                          ", 0 is full size) or {} for automatic");
}

}  // namespace

std::optional<std::size_t> parseLayerRequest(std::string_view body, std::size_t rungs) {
  if (rungs == 0) throw Error(Errc::kInvalidArgument, "this stream has no renditions to choose from");
  if (body.size() > kMaxBody) refuse("the body is " + std::to_string(body.size()) + " bytes", rungs);
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) refuse("the body is not a JSON object", rungs);
  const auto it = j.find("encodingId");
  if (it == j.end() || it->is_null()) return std::nullopt;
  std::string id;
  if (it->is_string()) {
    id = it->get<std::string>();
  } else if (it->is_number_unsigned()) {
    id = std::to_string(it->get<std::uint64_t>());
  } else {
    refuse("encodingId is neither a string nor a rung number", rungs);
  }
  if (id.empty() || id.size() > 3 || id.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(id) >= rungs) {
    refuse("no rung \"" + id.substr(0, 16) + "\"", rungs);
  }
  return std::stoul(id);
}

std::string layerJson(const std::vector<Rendition>& ladder, std::optional<std::size_t> top,
                      std::size_t current) {
  nlohmann::json layers = nlohmann::json::array();
  for (std::size_t i = 0; i < ladder.size(); ++i) {
    layers.push_back({{"encodingId", std::to_string(i)},
                      {"width", ladder[i].width},
                      {"height", ladder[i].height},
                      {"minKbps", ladder[i].minKbps},
                      {"maxKbps", ladder[i].maxKbps}});
  }
  nlohmann::json j = {{"layers", std::move(layers)}, {"current", current}};
  j["encodingId"] = top ? nlohmann::json(std::to_string(*top)) : nlohmann::json(nullptr);
  return j.dump();
}

}  // namespace zerohop::stream
