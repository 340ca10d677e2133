// RTSP pure logic: camera URLs (credentials decoded and never printed, zerohop's options taken out of
// the camera's query, uses that need decoding refused with the reason), capture timing from RTCP
// sender reports, and the size and rate an SDP's parameter sets state (GStreamer's codec parsers on
// SPSs that x264, x265 and GStreamer's RTSP server made). No network.
#include <gtest/gtest.h>

#include "rtsp/parameter_sets.hpp"
#include "rtsp/rtsp_timing.hpp"
#include "rtsp/rtsp_url.hpp"
#include "zerohop/error.hpp"
#include "zerohop/source.hpp"

namespace zerohop::rtsp {
namespace {

Errc codeOf(std::string_view text) {
  try {
    parseRtspUrl(text);
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << text << " was accepted";
  return Errc::kInternal;
}

TEST(RtspUrl, HostPortPathAndDefaults) {
  const RtspUrl url = parseRtspUrl("rtsp://192.168.1.20:8554/stream1");
  EXPECT_EQ(url.host, "192.168.1.20");
  EXPECT_EQ(url.port, 8554);
  EXPECT_EQ(url.path, "/stream1");
  EXPECT_EQ(url.protocols, "tcp");
  EXPECT_EQ(url.latencyMs, 200u);
  EXPECT_TRUE(url.user.empty());
  EXPECT_EQ(url.location(), "rtsp://192.168.1.20:8554/stream1");
  const RtspUrl plain = parseRtspUrl("rtsp://cam.local");
  EXPECT_EQ(plain.port, 554);
  EXPECT_EQ(plain.path, "/");
  EXPECT_EQ(plain.location(), "rtsp://cam.local/");
  const RtspUrl v6 = parseRtspUrl("rtsp://[fe80::1]:10554/live");
  EXPECT_EQ(v6.host, "[fe80::1]");
  EXPECT_EQ(v6.port, 10554);
}

TEST(RtspUrl, CredentialsAreDecodedAndNeverInWhatIsPrinted) {
  const RtspUrl url = parseRtspUrl("rtsp://ad%20min:p%40ss%3Aw%2Frd%3F@cam.local:554/live");
  EXPECT_EQ(url.user, "ad min");
  EXPECT_EQ(url.password, "p@ss:w/rd?");
  EXPECT_EQ(url.host, "cam.local");
  EXPECT_EQ(url.location(), "rtsp://cam.local/live");
  EXPECT_EQ(url.masked(), "rtsp://***@cam.local/live");
  EXPECT_EQ(maskCredentials("cannot open rtsp://admin:hunter2@10.0.0.5/x and rtsp://10.0.0.6/y"),
            "cannot open rtsp://***@10.0.0.5/x and rtsp://10.0.0.6/y");
  try {
    parseRtspUrl("rtsp://admin:hunter2@cam.local:99999/x");
    ADD_FAILURE() << "port 99999 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
  }
}

TEST(RtspUrl, ZerohopOptionsLeaveTheCameraQueryAlone) {
  const RtspUrl url = parseRtspUrl("rtsp://cam/cam/realmonitor?channel=1&protocols=udp&subtype=0&latency=50");
  EXPECT_EQ(url.path, "/cam/realmonitor?channel=1&subtype=0");
  EXPECT_EQ(url.protocols, "udp");
  EXPECT_EQ(url.latencyMs, 50u);
  EXPECT_EQ(url.masked(), "rtsp://cam/cam/realmonitor?channel=1&subtype=0&protocols=udp&latency=50");
  EXPECT_EQ(parseRtspUrl("rtsp://cam/x?protocols=udp+tcp").protocols, "udp+tcp");
}

TEST(RtspUrl, BadAddressesAndDecodingUsesAreRefusedWithTheReason) {
  EXPECT_EQ(codeOf("rtsp://"), Errc::kInvalidArgument);
  EXPECT_EQ(codeOf("rtsp://cam:0/x"), Errc::kInvalidArgument);
  EXPECT_EQ(codeOf("rtsp://cam/x?protocols=quic"), Errc::kInvalidArgument);
  EXPECT_EQ(codeOf("rtsp://cam/x?latency=soon"), Errc::kInvalidArgument);
  EXPECT_EQ(codeOf("rtsp://:pw@cam/x"), Errc::kInvalidArgument);
  EXPECT_EQ(codeOf("rtsp://u:p%4@cam/x"), Errc::kInvalidArgument);
  EXPECT_EQ(codeOf("rtsp://[fe80::1/x"), Errc::kInvalidArgument);
  EXPECT_NO_THROW(parseRtspUrl("rtsp://cam/x?format=h264"));
  EXPECT_EQ(parseRtspUrl("rtsp://cam/x?format=h264").format, PixelFormat::kH264);
  EXPECT_EQ(parseRtspUrl("rtsp://cam/x?format=i420").format, PixelFormat::kI420);
  EXPECT_EQ(parseRtspUrl("rtsp://cam/x?format=nv12").format, PixelFormat::kNV12);
  EXPECT_EQ(parseRtspUrl("rtsp://cam/x?format=nv12").masked(), "rtsp://cam/x?format=nv12");
  EXPECT_EQ(parseRtspUrl("rtsp://u:p@cam/x?format=i420").masked(), "rtsp://***@cam/x?format=i420");
  try {
    parseRtspUrl("rtsp://cam/x?format=yuyv");
    ADD_FAILURE() << "format=yuyv accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("i420"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nv12"), std::string::npos) << e.what();
  }
  EXPECT_EQ(codeOf("rtsp://cam/x?size=640x480"), Errc::kUnsupported);
  EXPECT_EQ(codeOf("rtsp://cam/x?fps=15"), Errc::kUnsupported);
}

TEST(RtspSourceSpec, ParsedAsAnRtspSourceAndPrintedMasked) {
  const SourceSpec spec = parseSourceSpec("rtsp://admin:hunter2@127.0.0.1:8554/test?protocols=udp");
  EXPECT_EQ(spec.kind, "rtsp");
  EXPECT_EQ(spec.path, "rtsp://127.0.0.1:8554/test");
  EXPECT_EQ(spec.format, PixelFormat::kH264);
  EXPECT_EQ(toString(spec), "rtsp://***@127.0.0.1:8554/test?protocols=udp");
  EXPECT_EQ(toString(spec).find("hunter2"), std::string::npos);
  EXPECT_EQ(toString(parseSourceSpec("rtsp://127.0.0.1/test")), "rtsp://127.0.0.1/test");
  const SourceSpec decoded = parseSourceSpec("rtsp://127.0.0.1/test?format=i420");
  EXPECT_EQ(decoded.format, PixelFormat::kI420) << "format=i420: the source yields decoded frames";
  EXPECT_EQ(toString(decoded), "rtsp://127.0.0.1/test?format=i420");
}

constexpr std::int64_t kMs = 1'000'000;
constexpr std::uint64_t kNtpEpochNs = 2'208'988'800ULL * 1'000'000'000ULL;

TEST(RtspCaptureTime, ArrivalWithoutASenderReport) {
  const CaptureTime t = captureTimeOf(0, 5'000 * kMs, 1'700'000'000'000 * kMs);
  EXPECT_EQ(t.clock, CaptureClock::kArrival);
  EXPECT_EQ(t.monotonicNs, 5'000 * kMs);
  EXPECT_EQ(t.realtimeNs, 1'700'000'000'000 * kMs);
}

TEST(RtspCaptureTime, TheCameraClockMovesTheCaptureBeforeTheArrival) {
  const std::int64_t arrivalReal = 1'700'000'000'000 * kMs;
  const std::uint64_t ntp =
      kNtpEpochNs + static_cast<std::uint64_t>(arrivalReal - 30 * kMs);  // captured 30 ms earlier
  const CaptureTime t = captureTimeOf(ntp, 5'000 * kMs, arrivalReal);
  EXPECT_EQ(t.clock, CaptureClock::kCamera);
  EXPECT_EQ(t.monotonicNs, 4'970 * kMs);
  EXPECT_EQ(t.realtimeNs, arrivalReal - 30 * kMs);
  EXPECT_EQ(t.cameraBehindNs, 30 * kMs);
}

TEST(RtspCaptureTime, ACameraClockSlightlyAheadIsClampedToTheArrival) {
  const std::int64_t arrivalReal = 1'700'000'000'000 * kMs;
  const CaptureTime t = captureTimeOf(kNtpEpochNs + static_cast<std::uint64_t>(arrivalReal + 200 * kMs),
                                      5'000 * kMs, arrivalReal);
  EXPECT_EQ(t.clock, CaptureClock::kCamera);
  EXPECT_EQ(t.monotonicNs, 5'000 * kMs);
  EXPECT_EQ(t.realtimeNs, arrivalReal);
}

TEST(RtspCaptureTime, ACameraClockOutOfStepIsNotBelieved) {
  const std::int64_t arrivalReal = 1'700'000'000'000 * kMs;
  for (const std::int64_t offset : {-2'000 * kMs, 20'000 * kMs}) {
    const CaptureTime t = captureTimeOf(kNtpEpochNs + static_cast<std::uint64_t>(arrivalReal - offset),
                                        5'000 * kMs, arrivalReal);
    EXPECT_EQ(t.clock, CaptureClock::kCameraClockOff) << offset;
    EXPECT_EQ(t.monotonicNs, 5'000 * kMs);
    EXPECT_EQ(t.cameraBehindNs, offset);
  }
}

TEST(ParameterSets, AnH264SpsStatesItsDisplayedSizeAndRate) {
  // GStreamer's RTSP server (x264, 320x240@30): sprop-parameter-sets="SPS,PPS".
  const auto small = statedVideo(VideoCodec::kH264, spropItems("Z0LADdoFB+wFqDAwNSgAAAMACAAAAwHkeKFV,aM48gA=="));
  ASSERT_TRUE(small);
  EXPECT_EQ(small->width, 320u);
  EXPECT_EQ(small->height, 240u);
  EXPECT_DOUBLE_EQ(small->fps, 30);
  // x264 at 1920x1080@25: coded as 1088 lines, cropped to 1080.
  const auto hd = statedVideo(VideoCodec::kH264, {"Z0LAKNoB4AiflwEQAAADABAAAAMDIPGDKg=="});
  ASSERT_TRUE(hd);
  EXPECT_EQ(hd->width, 1920u);
  EXPECT_EQ(hd->height, 1080u) << "the cropping window, not the coded 1088";
  EXPECT_DOUBLE_EQ(hd->fps, 25);
}

TEST(ParameterSets, AnH265SpsAfterItsVpsStatesItsSizeAndRate) {
  // x265 at 1280x720@50: sprop-vps, then sprop-sps.
  const auto v = statedVideo(VideoCodec::kH265, {"QAEMAf//AWAAAAMAkAAAAwAAAwB4lZQJ",
                                                 "QgEBAWAAAAMAkAAAAwAAAwB4oAKAgC0WWVlSkwvAWgIAAAMAAgAAAwBkEA=="});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->width, 1280u);
  EXPECT_EQ(v->height, 720u);
  EXPECT_DOUBLE_EQ(v->fps, 50);
}

TEST(ParameterSets, NoSpsOrAMalformedOneStatesNothing) {
  EXPECT_FALSE(statedVideo(VideoCodec::kH264, {})) << "no parameter sets in the SDP";
  EXPECT_FALSE(statedVideo(VideoCodec::kH264, {"aM48gA=="})) << "a PPS only";
  EXPECT_FALSE(statedVideo(VideoCodec::kH264, {"not base64 at all!"}));
  EXPECT_FALSE(statedVideo(VideoCodec::kH264, {"Z0LA"})) << "an SPS cut short";
  EXPECT_FALSE(statedVideo(VideoCodec::kH265, {"Z0LADdoFB+wFqDAwNSgAAAMACAAAAwHkeKFV"})) << "H.264's SPS as H.265's";
}

TEST(ParameterSets, SpropItemsAreTheCommaSeparatedValues) {
  EXPECT_EQ(spropItems("Z0LA,aM48gA=="), (std::vector<std::string>{"Z0LA", "aM48gA=="}));
  EXPECT_EQ(spropItems("QAEM"), (std::vector<std::string>{"QAEM"}));
  EXPECT_TRUE(spropItems("").empty());
  EXPECT_EQ(spropItems(",a,,b,"), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace zerohop::rtsp
