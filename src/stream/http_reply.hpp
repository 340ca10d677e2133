#pragma once
// The plain-text answer every route of the HTTP front gives for an error: the status and one line
// saying why (whep_routes.cpp, whep_layer.cpp).
#include <httplib.h>

#include <string>

namespace zerohop::stream {

inline void reply(httplib::Response& res, int status, const std::string& reason) {
  res.status = status;
  res.set_content(reason + "\n", "text/plain; charset=utf-8");
}

}  // namespace zerohop::stream
