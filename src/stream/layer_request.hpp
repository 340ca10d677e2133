#pragma once
// A viewer's choice of rendition over HTTP (docs/stream.md, "Choosing a rendition"), modelled on the
// layer extension of the early WHEP drafts (draft-murillo-whep-02, "Video layer selection"): the 201 of
// POST /whep links its session's layer URL (rel="urn:ietf:params:whep:ext:core:layer"); GET there lists
// the ladder as JSON; POST there {"encodingId":"N"} makes rung N the highest the viewer takes (rung 0 is
// full size), {} gives the choice back to its estimate. Each rung's encodingId is its index.
// Pure: parsing and the JSON answer; the routes are in whep_layer.cpp.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zerohop/sinks.hpp"

namespace zerohop::stream {

/// The rung a layer request asks to be the viewer's highest; nullopt: {} (automatic). `rungs` is the
/// ladder's length. Throws Error(kInvalidArgument) saying what is wrong with the body and what is taken.
std::optional<std::size_t> parseLayerRequest(std::string_view body, std::size_t rungs);

/// The layer URL's GET: {"layers":[{"encodingId":"0","width":..,"height":..,"minKbps":..,"maxKbps":..},...],
/// "encodingId": the chosen top ("N", or null when automatic), "current": the rung it takes now}.
std::string layerJson(const std::vector<Rendition>& ladder, std::optional<std::size_t> top,
                      std::size_t current);

}  // namespace zerohop::stream
