#pragma once
// TLS for DeadlineHttpServer (serve --tls-cert/--tls-key), with OpenSSL on our own non-blocking
// sockets: TlsContext is the server's certificate and key (checked at start), TlsConnection one
// connection's TLS state, driven step by step by the poll loop that owns its socket (handshake(),
// read() and write() never block; they say which readiness they wait for).
// Policy: TLS 1.2 or newer, OpenSSL's default server ciphers, no renegotiation, no compression,
// HTTP/1.1 only (ALPN answers "http/1.1" when offered, nothing else).
// Thread-safety: TlsContext is immutable after construction and may be shared by every thread;
// a TlsConnection is thread-bound (one thread at a time: the accept thread, then one worker).

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace zerohop::stream {

class TlsContext {
 public:
  /// Loads a PEM certificate chain (the server's certificate first, e.g. Let's Encrypt's
  /// fullchain.pem) and its PEM private key. Throws Error(kInvalidArgument) naming the file, the
  /// cause and the fix: a file that is missing or unreadable, not PEM, or a key that does not match
  /// the certificate.
  TlsContext(const std::string& certFile, const std::string& keyFile);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  /// Non-empty when browsers will refuse the certificate today: it expired, or is not yet valid.
  const std::string& validityWarning() const { return validityWarning_; }
  SSL_CTX* native() const { return ctx_; }

 private:
  SSL_CTX* ctx_ = nullptr;
  std::string validityWarning_;
};

/// One server-side TLS connection on a non-blocking socket it does not own (the caller closes it
/// after this is destroyed).
class TlsConnection {
 public:
  enum class Step { kDone, kWantRead, kWantWrite, kFailed };

  /// Throws Error(kInternal) when OpenSSL cannot allocate the connection.
  TlsConnection(const TlsContext& context, int fd);
  ~TlsConnection();
  TlsConnection(const TlsConnection&) = delete;
  TlsConnection& operator=(const TlsConnection&) = delete;

  /// One step of the server handshake; kFailed is final (failure() says why).
  Step handshake();
  bool established() const { return established_; }
  /// Plain bytes: > 0 read or written; 0 from read: the peer closed; -1 with errno EAGAIN when the
  /// connection waits for readiness (wantsWrite() says which), another errno on failure.
  ssize_t read(char* data, std::size_t size);
  ssize_t write(const char* data, std::size_t size);
  /// The last handshake/read/write waits for the socket to become writable (else readable).
  bool wantsWrite() const { return wantsWrite_; }
  /// Sends close_notify once, best effort (never waits); only after the handshake.
  void closeNotify();
  /// Raw bytes read from the socket so far (0: the client has not sent its ClientHello yet).
  std::uint64_t rawBytesRead() const;
  /// After a failed handshake: the client spoke plain HTTP to the TLS port.
  bool sawPlainHttp() const { return plainHttp_; }
  /// After a failed handshake: OpenSSL's reason, e.g. "wrong version number".
  const std::string& failure() const { return failure_; }

 private:
  ssize_t result(int ret, const char* call);

  SSL* ssl_ = nullptr;
  bool established_ = false;
  bool wantsWrite_ = false;
  bool closed_ = false;
  bool plainHttp_ = false;
  std::string failure_;
};

}  // namespace zerohop::stream
