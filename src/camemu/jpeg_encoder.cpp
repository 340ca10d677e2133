#include "jpeg_encoder.hpp"

#include <algorithm>
#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE
#include <string>

#include <jpeglib.h>

#include "zerohop/error.hpp"

namespace zerohop::camemu {

// libjpeg reports errors through error_exit, which must not return: it longjmps back to the call
// that started the work (no C++ object with a destructor lives between the setjmp and the libjpeg
// calls), and the message becomes an Error there. The destination manager writes into out_,
// growing it only when a frame is larger than any before.
struct JpegEncoder::Compressor {
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr errors{};
  jpeg_destination_mgr dest{};
  std::jmp_buf failed{};
  char message[JMSG_LENGTH_MAX] = {};
  std::vector<std::uint8_t>* out = nullptr;

  static Compressor& of(j_common_ptr c) { return *static_cast<Compressor*>(c->client_data); }
  static void errorExit(j_common_ptr c) {
    Compressor& self = of(c);
    (*c->err->format_message)(c, self.message);
    std::longjmp(self.failed, 1);
  }
  static void outputMessage(j_common_ptr) {}  // warnings: a camera emulator has nobody to tell
  static void initDestination(j_compress_ptr c) {
    Compressor& self = of(reinterpret_cast<j_common_ptr>(c));
    if (self.out->size() < 65536) self.out->resize(65536);
    self.dest.next_output_byte = self.out->data();
    self.dest.free_in_buffer = self.out->size();
  }
  static boolean emptyOutputBuffer(j_compress_ptr c) {  // the buffer is full: double it
    Compressor& self = of(reinterpret_cast<j_common_ptr>(c));
    const std::size_t used = self.out->size();
    self.out->resize(used * 2);
    self.dest.next_output_byte = self.out->data() + used;
    self.dest.free_in_buffer = self.out->size() - used;
    return TRUE;
  }
  static void termDestination(j_compress_ptr c) {
    Compressor& self = of(reinterpret_cast<j_common_ptr>(c));
    self.out->resize(self.out->size() - self.dest.free_in_buffer);
  }
};

JpegEncoder::JpegEncoder(std::uint32_t width, std::uint32_t height, int quality)
    : width_(width), height_(height), quality_(quality), c_(std::make_unique<Compressor>()) {
  Compressor& c = *c_;
  c.cinfo.err = jpeg_std_error(&c.errors);
  c.errors.error_exit = &Compressor::errorExit;
  c.errors.output_message = &Compressor::outputMessage;
  c.cinfo.client_data = &c;
  if (setjmp(c.failed)) {
    jpeg_destroy_compress(&c.cinfo);
    throw Error(Errc::kDevice, std::string("libjpeg: cannot create a compressor: ") + c.message);
  }
  jpeg_create_compress(&c.cinfo);
  c.dest.init_destination = &Compressor::initDestination;
  c.dest.empty_output_buffer = &Compressor::emptyOutputBuffer;
  c.dest.term_destination = &Compressor::termDestination;
  c.cinfo.dest = &c.dest;
  c.out = &out_;
  y_.resize(std::size_t{width} * height);
  u_.resize(std::size_t{width / 2} * height);
  v_.resize(std::size_t{width / 2} * height);
}

JpegEncoder::~JpegEncoder() { jpeg_destroy_compress(&c_->cinfo); }

const std::vector<std::uint8_t>& JpegEncoder::encode(const std::uint8_t* yuyv, std::uint32_t pitch) {
  // De-interleave YUYV into the planar 4:2:2 layout libjpeg compresses without resampling.
  const std::uint32_t cw = width_ / 2;
  for (std::uint32_t row = 0; row < height_; ++row) {
    const std::uint8_t* s = yuyv + std::size_t{row} * pitch;
    std::uint8_t* y = y_.data() + std::size_t{row} * width_;
    std::uint8_t* u = u_.data() + std::size_t{row} * cw;
    std::uint8_t* v = v_.data() + std::size_t{row} * cw;
    for (std::uint32_t i = 0; i < cw; ++i, s += 4) {
      y[2 * i] = s[0];
      u[i] = s[1];
      y[2 * i + 1] = s[2];
      v[i] = s[3];
    }
  }

  Compressor& c = *c_;
  jpeg_compress_struct& ci = c.cinfo;
  if (setjmp(c.failed)) {
    jpeg_abort_compress(&ci);
    throw Error(Errc::kDevice, std::string("libjpeg compression failed: ") + c.message);
  }
  ci.image_width = width_;
  ci.image_height = height_;
  ci.input_components = 3;
  ci.in_color_space = JCS_YCbCr;
  jpeg_set_defaults(&ci);
  jpeg_set_quality(&ci, quality_, TRUE);
  ci.raw_data_in = TRUE;
  ci.dct_method = JDCT_IFAST;
  ci.restart_in_rows = 1;  // a restart marker every MCU row
  ci.comp_info[0].h_samp_factor = 2;  // 4:2:2: luma 2x1, each chroma 1x1
  ci.comp_info[0].v_samp_factor = 1;
  for (int k = 1; k < 3; ++k) ci.comp_info[k].h_samp_factor = ci.comp_info[k].v_samp_factor = 1;
  jpeg_start_compress(&ci, TRUE);

  // jpeg_write_raw_data takes one MCU row (DCTSIZE rows here) at a time; rows past the bottom of
  // the picture repeat its last row, as libjpeg's own edge expansion does.
  JSAMPROW rows[3][DCTSIZE];
  JSAMPARRAY planes[3] = {rows[0], rows[1], rows[2]};
  while (ci.next_scanline < ci.image_height) {
    for (std::uint32_t r = 0; r < DCTSIZE; ++r) {
      const std::uint32_t row = std::min<std::uint32_t>(ci.next_scanline + r, height_ - 1);
      rows[0][r] = y_.data() + std::size_t{row} * width_;
      rows[1][r] = u_.data() + std::size_t{row} * cw;
      rows[2][r] = v_.data() + std::size_t{row} * cw;
    }
    jpeg_write_raw_data(&ci, planes, DCTSIZE);
  }
  jpeg_finish_compress(&ci);
  return out_;
}

}  // namespace zerohop::camemu
