// The emulator's own logic, driven directly (no LD_PRELOAD): settings parsing, the mode table,
// the frame synthesiser, and the V4L2 ioctl state machine of one open file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <thread>
#include <vector>

#include "camemu/camemu_config.hpp"
#include "camemu/emulated_camera.hpp"
#include "camemu/emulated_file.hpp"
#include "camemu/frame_synth.hpp"
#include "camemu/mode_table.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/timecode.hpp"

namespace zerohop::camemu {
namespace {

TEST(CamemuConfig, ParsesSettingsAndFaults) {
  EmuConfig c;
  applySetting(c, "format", "nv12");
  applySetting(c, "size", "1920x1080");
  applySetting(c, "fps", "60");
  applyFaults(c, "error-every=3,stall-at=10:500,unplug-at=20,slow-every=5:40");
  EXPECT_EQ(c.format, PixelFormat::kNV12);
  EXPECT_EQ(c.width, 1920u);
  EXPECT_EQ(c.fps, 60u);
  EXPECT_EQ(c.faults.errorEvery, 3u);
  EXPECT_EQ(c.faults.stallAt, 10u);
  EXPECT_EQ(c.faults.stallMs, 500u);
  EXPECT_EQ(c.faults.unplugAt, 20u);
  EXPECT_EQ(c.faults.replugMs, -1);
  EXPECT_EQ(c.faults.slowMs, 40u);
  EmuConfig back;
  applyFaults(back, faultsToString(c.faults));  // the launcher -> shim round trip
  EXPECT_EQ(faultsToString(back.faults), faultsToString(c.faults));
}

TEST(CamemuConfig, RejectsNonsenseWithTheReason) {
  EmuConfig c;
  EXPECT_THROW(applySetting(c, "size", "640"), Error);
  EXPECT_THROW(applySetting(c, "size", "641x480"), Error);
  EXPECT_THROW(applySetting(c, "fps", "0"), Error);
  EXPECT_THROW(applySetting(c, "format", "rgb24"), Error);
  EXPECT_THROW(applySetting(c, "stall-at", "10"), Error);
  EXPECT_THROW(applyFaults(c, "bogus=1"), Error);
  EXPECT_THROW(applySetting(c, "device", "video0"), Error);
}

TEST(CamemuConfig, CameraGroupsStartFromTheDefaultsAtVideoIndex) {
  EmuConfig defaults;
  applySetting(defaults, "fps", "60");
  applyFaults(defaults, "error-every=5");
  const auto cameras = camerasFromGroups(
      defaults, splitCameraGroups("format=nv12,size=640x480;;device=/dev/video7,fps=15,unplug-at=10:200"));
  ASSERT_EQ(cameras.size(), 3u);
  EXPECT_EQ(cameras[0].devicePath, "/dev/video0");
  EXPECT_EQ(cameras[0].format, PixelFormat::kNV12);
  EXPECT_EQ(cameras[0].fps, 60u);
  EXPECT_EQ(cameras[1].devicePath, "/dev/video1");
  EXPECT_EQ(cameras[1].index, 1u);
  EXPECT_EQ(cameras[1].format, PixelFormat::kYUYV);
  EXPECT_EQ(cameras[1].faults.errorEvery, 5u);
  EXPECT_EQ(cameras[1].faults.unplugAt, 0u) << "a fault of one camera leaked into another";
  EXPECT_EQ(cameras[2].devicePath, "/dev/video7");
  EXPECT_EQ(cameras[2].fps, 15u);
  EXPECT_EQ(cameras[2].faults.unplugAt, 10u);
  EXPECT_EQ(cameras[2].faults.replugMs, 200);
  // The launcher writes each camera in full; the shim reads back the same settings.
  for (const EmuConfig& c : cameras) {
    EmuConfig back;
    applyFaults(back, settingsToString(c));
    EXPECT_EQ(settingsToString(back), settingsToString(c));
  }
}

TEST(CamemuConfig, BadCameraGroupsNameTheCamera) {
  const EmuConfig defaults;
  try {
    camerasFromGroups(defaults, {"format=yuyv", "device=/dev/video0"});
    FAIL() << "two cameras at one path";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cameras 0 and 1 both are /dev/video0"), std::string::npos)
        << e.what();
  }
  try {
    camerasFromGroups(defaults, {"", "size=12"});
    FAIL() << "a malformed size";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("camera 1 ('size=12')"), std::string::npos) << e.what();
  }
  EXPECT_THROW(camerasFromGroups(defaults, {}), Error);
  EXPECT_THROW(camerasFromGroups(defaults, std::vector<std::string>(kMaxCameras + 1)), Error);
  EXPECT_THROW(camerasFromGroups(defaults, {"bogus=1"}), Error);
}

TEST(CamemuRig, EachCameraKeepsItsOwnFormatAndUnplug) {
  const auto configs =
      camerasFromGroups(EmuConfig{}, {"format=yuyv,size=640x480", "format=nv12,size=1920x1080,fps=15"});
  CameraRig rig(configs);
  ASSERT_EQ(rig.cameras().size(), 2u);
  EmulatedCamera* a = rig.find("/dev/video0");
  EmulatedCamera* b = rig.find("/dev/video1");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(rig.find("/dev/video2"), nullptr);
  EXPECT_EQ(a->format().format, PixelFormat::kYUYV);
  EXPECT_EQ(b->format().format, PixelFormat::kNV12);
  EXPECT_EQ(b->format().width, 1920u);
  EXPECT_EQ(b->rate(), 15u);
  EXPECT_EQ(b->deviceNumber() & 0xff, 1u);
  EmulatedFile fa(*a, O_RDWR | O_NONBLOCK);
  EmulatedFile fb(*b, O_RDWR | O_NONBLOCK);
  v4l2_capability ca{}, cb{};
  ASSERT_EQ(fa.ioctl(VIDIOC_QUERYCAP, &ca), 0);
  ASSERT_EQ(fb.ioctl(VIDIOC_QUERYCAP, &cb), 0);
  EXPECT_STREQ(reinterpret_cast<char*>(ca.bus_info), "platform:zerohop-camemu");
  EXPECT_STREQ(reinterpret_cast<char*>(cb.bus_info), "platform:zerohop-camemu-1");
  // vb2: each device has its own queue; an unplug of one leaves the other's files alive.
  v4l2_requestbuffers r{};
  r.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  r.memory = V4L2_MEMORY_MMAP;
  r.count = 2;
  ASSERT_EQ(fa.ioctl(VIDIOC_REQBUFS, &r), 0);
  r.count = 2;
  EXPECT_EQ(fb.ioctl(VIDIOC_REQBUFS, &r), 0) << "camera 1's queue must not belong to camera 0's file";
  ASSERT_TRUE(b->unplugOnce());
  EXPECT_EQ(fb.ioctl(VIDIOC_QUERYCAP, &cb), -ENODEV);
  EXPECT_EQ(fa.ioctl(VIDIOC_QUERYCAP, &ca), 0);
  EXPECT_TRUE(a->present());
  EXPECT_FALSE(b->present());
  r.count = 0;
  EXPECT_EQ(fa.ioctl(VIDIOC_REQBUFS, &r), 0);
  ::close(fa.clientFd());
  ::close(fb.clientFd());
}

TEST(CamemuModes, OffersUvcLikeModesAndNearestMatches) {
  EmuConfig c;
  c.width = 800;
  c.height = 600;
  c.fps = 25;
  const ModeTable t(c);
  EXPECT_EQ(t.formats().front(), PixelFormat::kYUYV);
  EXPECT_EQ(t.rates(), (std::vector<std::uint32_t>{60, 30, 25, 15}));
  EXPECT_EQ(t.sizes().size(), 4u);
  EXPECT_EQ(t.nearestSize(790, 610), (FrameSize{800, 600}));
  EXPECT_EQ(t.nearestSize(4000, 3000), (FrameSize{1920, 1080}));
  EXPECT_EQ(t.nearestRate(24), 25u);
  const auto w = wireFormat(PixelFormat::kNV12, 640, 480);
  EXPECT_EQ(w.bytesPerLine, 640u);
  EXPECT_EQ(w.sizeImage, 640u * 480 * 3 / 2);
}

TEST(CamemuSynth, RawFramesCarryTheTimecode) {
  for (PixelFormat f : {PixelFormat::kYUYV, PixelFormat::kUYVY, PixelFormat::kNV12}) {
    FrameSynth synth(wireFormat(f, 640, 480));
    std::vector<std::uint8_t> buf(synth.wire().sizeImage);
    EXPECT_EQ(synth.render(77, 123456789, buf.data(), buf.size()), buf.size());
    EXPECT_EQ(synth.render(78, 1, buf.data(), buf.size() - 1), 0u)
        << "must refuse a buffer that is too small";
    synth.render(77, 123456789, buf.data(), buf.size());
    Frame frame;
    bindLayout(frame, computeLayout(f, 640, 480), buf.data(), MemoryKind::kHost);
    const auto tc = readTimecode(frame);
    ASSERT_TRUE(tc.has_value()) << formatName(f);
    EXPECT_EQ(tc->sequence, 77u);
    EXPECT_EQ(tc->wallClockMs, 123456789u);
  }
}

#ifdef ZEROHOP_CAMEMU_WITH_JPEG
TEST(CamemuSynth, MjpegFramesAreCameraSizedJpegs) {
  FrameSynth synth(wireFormat(PixelFormat::kMJPEG, 1920, 1080));
  std::vector<std::uint8_t> buf(synth.wire().sizeImage);
  const std::size_t n = synth.render(1, 1, buf.data(), buf.size());
  ASSERT_GT(n, 4u);
  EXPECT_EQ(buf[0], 0xFF);
  EXPECT_EQ(buf[1], 0xD8);
  EXPECT_EQ(buf[n - 2], 0xFF);
  EXPECT_EQ(buf[n - 1], 0xD9);
  // q85 4:2:2 1080p of a textured scene: a few hundred KB, like a real webcam's MJPEG.
  EXPECT_GT(n, 100'000u);
  EXPECT_LT(n, 900'000u);
}

// A restart marker every MCU row (DRI = MCUs per row; RST0..7 in turn between the rows), like many
// UVC cameras: what lets the GPU decoder cut a frame into strips (src/gpu/jpeg_strips.hpp).
TEST(CamemuSynth, MjpegFramesHaveARestartMarkerEveryMcuRow) {
  FrameSynth synth(wireFormat(PixelFormat::kMJPEG, 1920, 1080));
  std::vector<std::uint8_t> buf(synth.wire().sizeImage);
  const std::size_t n = synth.render(1, 1, buf.data(), buf.size());
  ASSERT_GT(n, 4u);
  std::size_t dri = 0;
  std::size_t sos = 0;
  for (std::size_t i = 2; i + 4 < n && !sos;) {  // the marker segments before the scan
    ASSERT_EQ(buf[i], 0xFF) << "marker expected at " << i;
    const std::size_t length = (std::size_t{buf[i + 2]} << 8) | buf[i + 3];
    if (buf[i + 1] == 0xDD) dri = i;
    if (buf[i + 1] == 0xDA) sos = i + 2 + length;
    i += 2 + length;
  }
  ASSERT_NE(dri, 0u) << "no DRI segment";
  ASSERT_NE(sos, 0u) << "no SOS segment";
  EXPECT_EQ((buf[dri + 4] << 8) | buf[dri + 5], 1920 / 16) << "restart interval != one 4:2:2 MCU row";
  int restarts = 0;
  for (std::size_t i = sos; i + 1 < n; ++i) {
    if (buf[i] == 0xFF && buf[i + 1] >= 0xD0 && buf[i + 1] <= 0xD7) {
      EXPECT_EQ(buf[i + 1], 0xD0 + restarts % 8) << "restart markers out of order";
      ++restarts;
    }
  }
  EXPECT_EQ(restarts, 1080 / 8 - 1) << "one restart marker between each two of the 135 MCU rows";
}
#endif

#ifdef ZEROHOP_CAMEMU_WITH_H264
TEST(CamemuSynth, H264IsAnnexBWithAnIdrEverySecond) {
  FrameSynth synth(wireFormat(PixelFormat::kH264, 640, 480), 10);
  std::vector<std::uint8_t> buf(synth.wire().sizeImage);
  int keyframes = 0;
  for (int i = 0; i < 25; ++i) {
    const std::size_t n = synth.render(static_cast<std::uint64_t>(i), i, buf.data(), buf.size());
    ASSERT_GT(n, 4u) << "frame " << i;
    EXPECT_EQ(buf[0] | buf[1], 0) << "no Annex B start code";
    EXPECT_TRUE(i > 0 || synth.keyframe()) << "the stream must start with an IDR";
    keyframes += synth.keyframe();
  }
  EXPECT_EQ(keyframes, 3);  // frames 0, 10, 20 at 10 fps
}
#endif

// ---- the ioctl state machine -------------------------------------------------------------------

class EmulatedFileTest : public ::testing::Test {
 protected:
  EmulatedFileTest() : camera_(makeConfig()), file_(camera_, O_RDWR | O_NONBLOCK) {}
  ~EmulatedFileTest() override { ::close(file_.clientFd()); }
  static EmuConfig makeConfig() {
    EmuConfig c;
    c.width = 640;
    c.height = 480;
    c.fps = 60;
    return c;
  }
  int reqbufs(std::uint32_t memory, std::uint32_t count) {
    v4l2_requestbuffers r{};
    r.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    r.memory = memory;
    r.count = count;
    return file_.ioctl(VIDIOC_REQBUFS, &r);
  }
  int qbuf(std::uint32_t index) {
    v4l2_buffer b{};
    b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    b.memory = V4L2_MEMORY_MMAP;
    b.index = index;
    return file_.ioctl(VIDIOC_QBUF, &b);
  }
  EmulatedCamera camera_;
  EmulatedFile file_;
};

TEST_F(EmulatedFileTest, QuerycapSaysCaptureAndStreaming) {
  v4l2_capability cap{};
  ASSERT_EQ(file_.ioctl(VIDIOC_QUERYCAP, &cap), 0);
  EXPECT_STREQ(reinterpret_cast<char*>(cap.driver), "zerohop-camemu");
  EXPECT_EQ(cap.device_caps, static_cast<std::uint32_t>(V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING |
                                                        V4L2_CAP_EXT_PIX_FORMAT));
  EXPECT_TRUE(cap.capabilities & V4L2_CAP_DEVICE_CAPS);
}

TEST_F(EmulatedFileTest, EnumerationsEndWithEinvalAndUnknownIoctlsAreEnotty) {
  v4l2_fmtdesc fd{};
  fd.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  std::uint32_t n = 0;
  while (file_.ioctl(VIDIOC_ENUM_FMT, &(fd.index = n, fd)) == 0) ++n;
  EXPECT_EQ(n, camera_.modes().formats().size());
  EXPECT_EQ(file_.ioctl(VIDIOC_ENUM_FMT, &fd), -EINVAL);
  v4l2_queryctrl q{};
  q.id = V4L2_CTRL_FLAG_NEXT_CTRL;
  EXPECT_EQ(file_.ioctl(VIDIOC_QUERYCTRL, &q), -EINVAL);
  v4l2_std_id std = 0;
  EXPECT_EQ(file_.ioctl(VIDIOC_G_STD, &std), -ENOTTY);
  v4l2_input in{};
  in.index = 1;
  EXPECT_EQ(file_.ioctl(VIDIOC_ENUMINPUT, &in), -EINVAL);
}

TEST_F(EmulatedFileTest, SetFormatSnapsToTheNearestOfferedSize) {
  v4l2_format f{};
  f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  f.fmt.pix.pixelformat = V4L2_PIX_FMT_NV12;
  f.fmt.pix.width = 1300;
  f.fmt.pix.height = 700;
  ASSERT_EQ(file_.ioctl(VIDIOC_S_FMT, &f), 0);
  EXPECT_EQ(f.fmt.pix.width, 1280u);
  EXPECT_EQ(f.fmt.pix.height, 720u);
  EXPECT_EQ(f.fmt.pix.sizeimage, 1280u * 720 * 3 / 2);
  f.fmt.pix.pixelformat = v4l2_fourcc('G', 'R', 'E', 'Y');  // unknown: the driver picks one it has
  ASSERT_EQ(file_.ioctl(VIDIOC_TRY_FMT, &f), 0);
  EXPECT_EQ(f.fmt.pix.pixelformat, V4L2_PIX_FMT_YUYV);
}

TEST_F(EmulatedFileTest, BufferRulesFollowVb2) {
  EXPECT_EQ(reqbufs(V4L2_MEMORY_DMABUF, 2), -EINVAL);  // no DMABUF import
  ASSERT_EQ(reqbufs(V4L2_MEMORY_MMAP, 3), 0);
  v4l2_format f{};
  f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
  f.fmt.pix.width = 640;
  f.fmt.pix.height = 480;
  EXPECT_EQ(file_.ioctl(VIDIOC_S_FMT, &f), -EBUSY);  // buffers exist
  EXPECT_EQ(qbuf(0), 0);
  EXPECT_EQ(qbuf(0), -EINVAL);  // already queued
  EXPECT_EQ(qbuf(3), -EINVAL);  // no such buffer
  v4l2_buffer b{};
  b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  b.memory = V4L2_MEMORY_MMAP;
  EXPECT_EQ(file_.ioctl(VIDIOC_DQBUF, &b), -EINVAL);  // not streaming
  v4l2_exportbuffer e{};
  e.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  e.index = 1;
  ASSERT_EQ(file_.ioctl(VIDIOC_EXPBUF, &e), 0);
  EXPECT_GE(e.fd, 0);
  ::close(e.fd);
  ASSERT_EQ(reqbufs(V4L2_MEMORY_MMAP, 0), 0);
}

TEST_F(EmulatedFileTest, StreamingFillsQueuedBuffersAndPollSeesThem) {
  ASSERT_EQ(reqbufs(V4L2_MEMORY_MMAP, 2), 0);
  v4l2_buffer b{};
  b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  b.memory = V4L2_MEMORY_MMAP;
  ASSERT_EQ(file_.ioctl(VIDIOC_QUERYBUF, &b), 0);
  void* map = file_.mmap(nullptr, b.length, PROT_READ, MAP_SHARED, b.m.offset);
  ASSERT_NE(map, MAP_FAILED);
  EXPECT_EQ(file_.mmap(nullptr, b.length, PROT_READ, MAP_PRIVATE, b.m.offset), MAP_FAILED);
  ASSERT_EQ(qbuf(0), 0);
  ASSERT_EQ(qbuf(1), 0);
  EXPECT_EQ(file_.ioctl(VIDIOC_DQBUF, &b), -EINVAL);  // before STREAMON
  int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  ASSERT_EQ(file_.ioctl(VIDIOC_STREAMON, &type), 0);
  pollfd p{file_.clientFd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 2000), 1);
  ASSERT_EQ(file_.ioctl(VIDIOC_DQBUF, &b), 0);
  EXPECT_EQ(b.bytesused, 640u * 480 * 2);
  EXPECT_EQ(b.sequence, 0u);
  EXPECT_TRUE(b.flags & V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC);
  const std::int64_t ts = std::int64_t{b.timestamp.tv_sec} * 1'000'000'000 + b.timestamp.tv_usec * 1000;
  EXPECT_LT(monotonicNs() - ts, 1'000'000'000);
  if (b.index == 0) {
    Frame frame;
    bindLayout(frame, computeLayout(PixelFormat::kYUYV, 640, 480), static_cast<std::uint8_t*>(map),
               MemoryKind::kHost);
    const auto tc = readTimecode(frame);
    ASSERT_TRUE(tc.has_value());
    EXPECT_EQ(tc->sequence, 0u);
  }
  ASSERT_EQ(file_.ioctl(VIDIOC_STREAMOFF, &type), 0);
  EXPECT_EQ(file_.ioctl(VIDIOC_DQBUF, &b), -EINVAL);
  ::munmap(map, b.length);
}

TEST_F(EmulatedFileTest, OneQueueOwnerAndAnUnplugEndsTheOwnership) {
  ASSERT_EQ(reqbufs(V4L2_MEMORY_MMAP, 2), 0);
  EmulatedFile other(camera_, O_RDWR | O_NONBLOCK);
  v4l2_requestbuffers r{};
  r.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  r.memory = V4L2_MEMORY_MMAP;
  r.count = 2;
  EXPECT_EQ(other.ioctl(VIDIOC_REQBUFS, &r), -EBUSY);  // vb2: the queue belongs to the first file
  ASSERT_TRUE(camera_.unplugOnce());
  EXPECT_EQ(file_.ioctl(VIDIOC_QUERYCAP, &r), -ENODEV);  // the old files are dead
  EXPECT_EQ(other.ioctl(VIDIOC_REQBUFS, &r), -ENODEV);
  EXPECT_FALSE(camera_.present());                   // never replugs in this configuration
  EmulatedFile fresh(camera_, O_RDWR | O_NONBLOCK);  // (the shim would refuse the open)
  EXPECT_EQ(fresh.ioctl(VIDIOC_REQBUFS, &r), 0) << "a dead file must not own the new device's queue";
  ::close(fresh.clientFd());
  ::close(other.clientFd());
}

}  // namespace
}  // namespace zerohop::camemu
