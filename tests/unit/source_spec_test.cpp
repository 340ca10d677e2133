#include <gtest/gtest.h>

#include "zerohop/error.hpp"
#include "zerohop/source.hpp"

namespace zerohop {
namespace {

TEST(SourceSpec, TestDefaultsAndOverrides) {
  auto d = parseSourceSpec("test");
  EXPECT_EQ(d.kind, "test");
  EXPECT_EQ(d.width, 1280u);
  EXPECT_EQ(d.height, 720u);
  EXPECT_EQ(d.fps, 30);
  auto s = parseSourceSpec("test:1920x1080@60?format=uyvy");
  EXPECT_EQ(s.width, 1920u);
  EXPECT_EQ(s.height, 1080u);
  EXPECT_EQ(s.fps, 60);
  EXPECT_EQ(s.format, PixelFormat::kUYVY);
}

TEST(SourceSpec, V4l2WithOptions) {
  auto s = parseSourceSpec("v4l2:/dev/video2?format=mjpeg&size=1920x1080&fps=30&memory=userptr");
  EXPECT_EQ(s.kind, "v4l2");
  EXPECT_EQ(s.path, "/dev/video2");
  EXPECT_EQ(s.format, PixelFormat::kMJPEG);
  EXPECT_EQ(s.width, 1920u);
  EXPECT_EQ(s.options.at("memory"), "userptr");
}

TEST(SourceSpec, BadSpecsSayWhatAndHow) {
  for (const char* bad : {"tset", "test:1280", "test:1280x720@0", "test:axb", "test:10x10", "v4l2:video0",
                          "test?format=bayer", "test?color", "v4l2:/dev/video0?memory=dmabuf", "test:1280x720@30?x=1"}) {
    try {
      parseSourceSpec(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("examples: test:1280x720@30"), std::string::npos) << e.what();
    }
  }
}

// A size no encoder carries is refused by the parser: test:8192x8192@240 accepted would take 9-10 s and
// 557 MB before the encoder refused it.
TEST(SourceSpec, SizesNoEncoderCarriesAreRefusedAtParseTimeNamingTheLimit) {
  for (const char* bad : {"test:8192x8192@240", "test:4608x2592@30", "test:3840x2160@120",
                          "v4l2:/dev/video0?size=1920x1080&fps=240&format=mjpeg&size=4096x4096"}) {
    try {
      parseSourceSpec(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("H.264 level 5.2"), std::string::npos) << e.what();
    }
  }
  for (const char* good : {"test:3840x2160@60", "test:1920x1080@240", "test:4096x2304@30", "test:16x16@240"}) {
    EXPECT_NO_THROW(parseSourceSpec(good)) << good;
  }
}

// toString gives a spec parseSourceSpec takes back (serve logs each camera's spec with it).
TEST(SourceSpec, ToStringRoundTrips) {
  for (const char* text : {"test:640x360@30", "test:640x360@30?format=uyvy", "v4l2:/dev/video3?format=mjpeg",
                           "v4l2:/dev/video0?size=1280x720&fps=30&format=h264", "share:cam0", "test"}) {
    const SourceSpec spec = parseSourceSpec(text);
    const SourceSpec again = parseSourceSpec(toString(spec));
    EXPECT_EQ(again.kind, spec.kind) << text << " -> " << toString(spec);
    EXPECT_EQ(again.path, spec.path) << text;
    EXPECT_EQ(again.format, spec.format) << text;
    EXPECT_EQ(again.width, spec.width) << text;
    EXPECT_EQ(again.fps, spec.fps) << text;
  }
  EXPECT_EQ(toString(parseSourceSpec("v4l2:/dev/video3?format=mjpeg")), "v4l2:/dev/video3?format=mjpeg");
}

// Every kind comes from the one registry: an unknown kind's message lists the registered ones, and a
// kind's own options are its alone and printed back by it.
TEST(SourceSpec, KindsAndTheirOwnOptionsComeFromTheRegistry) {
  try {
    parseSourceSpec("ftp://camera/stream");
    ADD_FAILURE() << "accepted a kind nobody registered";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("unknown source kind 'ftp' (use test, v4l2"), std::string::npos) << e.what();
  }
  try {
    parseSourceSpec("test?dir=/tmp");
    ADD_FAILURE() << "the test camera took the share's dir option";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown option 'dir' for a test source"), std::string::npos) << e.what();
  }
  EXPECT_EQ(toString(parseSourceSpec("share:cam0?dir=/run/cams")), "share:cam0?dir=/run/cams");
  EXPECT_EQ(toString(parseSourceSpec("v4l2:/dev/video1?memory=userptr")), "v4l2:/dev/video1?memory=userptr");
  EXPECT_EQ(toString(parseSourceSpec("test:640x360@30?format=uyvy")), "test:640x360@30?format=uyvy");
  SourceSpec unknown;
  unknown.kind = "nosuch";
  EXPECT_THROW(openSource(unknown), Error);
}

}  // namespace
}  // namespace zerohop
