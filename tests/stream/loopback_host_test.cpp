// stream::isLoopbackHost, the one loopback check of the stream server (ICE on 127.0.0.1, the warning
// about a public listener without a token) and the WHIP publisher.
#include "stream/loopback_host.hpp"

#include <gtest/gtest.h>

namespace zerohop::stream {
namespace {

TEST(LoopbackHost, LocalhostAnd127Slash8AndIpv6LoopbackAre) {
  for (const char* host : {"localhost", "127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "0:0:0:0:0:0:0:1"})
    EXPECT_TRUE(isLoopbackHost(host)) << host;
}

TEST(LoopbackHost, EveryOtherAddressOrNameIsNot) {
  for (const char* host : {"0.0.0.0", "::", "192.168.1.10", "10.0.0.1", "128.0.0.1", "127.example.com", "127.",
                           "1270.0.0.1", "::ffff:10.0.0.1", "camera.local", ""})
    EXPECT_FALSE(isLoopbackHost(host)) << host;
}

}  // namespace
}  // namespace zerohop::stream
