#pragma once
// The DTLS certificate every WebRTC session of this process presents. GStreamer's dtls plugin makes
// one (RSA 2048, self-signed) the first time a session needs it and keeps it for the process: about
// 0.6 s of one core here, which the first viewer's POST /whep would otherwise wait for (its answer
// carries the certificate's fingerprint). DtlsCertificatePrewarm makes it ahead of time, on a thread of
// its own, and loads the plugins a session is made of (webrtcbin, libnice, srtp, dtls); the first
// session then starts as fast as the later ones (measured on the 2-core box: POST -> answer 0.8 s before, 40-95 ms after).
// Thread-safety: thread-bound (construct and destroy on one thread); the certificate itself is
// GStreamer's, made once under its own lock, so a session that needs it sooner simply waits for it.

#include <thread>

namespace zerohop::stream {

class DtlsCertificatePrewarm {
 public:
  DtlsCertificatePrewarm();   ///< starts the thread (a no-op thread when the dtls plugin is missing)
  ~DtlsCertificatePrewarm();  ///< joins it: at most the rest of the one-time generation
  DtlsCertificatePrewarm(const DtlsCertificatePrewarm&) = delete;
  DtlsCertificatePrewarm& operator=(const DtlsCertificatePrewarm&) = delete;

 private:
  std::thread thread_;
};

}  // namespace zerohop::stream
