#include "listen_address.hpp"

#include <gtest/gtest.h>

#include "zerohop/error.hpp"

namespace zerohop::cli {
namespace {

TEST(ListenAddress, Parses) {
  auto a = parseListenAddress("127.0.0.1:8080");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 8080);
  EXPECT_EQ(parseListenAddress(":9000").host, "127.0.0.1");
  EXPECT_EQ(parseListenAddress("[::1]:8080").host, "::1");
}

TEST(ListenAddress, RejectsWithTheFix) {
  for (const char* bad : {"8080", "localhost", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:80a"}) {
    try {
      parseListenAddress(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("--listen 127.0.0.1:8080"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace zerohop::cli
