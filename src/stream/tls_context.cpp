#include "stream/tls_context.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop::stream {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// OpenSSL's reason for the first error queued on this thread ("no start line"), or `fallback`.
std::string opensslReason(const char* fallback) {
  const unsigned long e = ERR_peek_error();  // the first: the cause, not the callers that passed it on
  const char* reason = e != 0 ? ERR_reason_error_string(e) : nullptr;
  return reason ? reason : fallback;
}

// A PEM file opened for reading, or an Error naming the option, the file and errno's words.
// `what` names the file in the library's terms ("the TLS key"); `setting` is its SettingError setting.
BioPtr openPem(const char* what, const char* setting, const std::string& path) {
  errno = 0;
  BioPtr bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) {
    const int err = errno != 0 ? errno : ENOENT;
    throw SettingError(Errc::kInvalidArgument, setting,
                       std::string(what) + " " + path + ": cannot be read (" + std::strerror(err) +
                           "); give the path of a PEM file this user can read");
  }
  return bio;
}

std::string timeText(const ASN1_TIME* t) {
  BioPtr mem(BIO_new(BIO_s_mem()));
  if (!mem || ASN1_TIME_print(mem.get(), t) != 1) return "?";
  char* data = nullptr;
  const long n = BIO_get_mem_data(mem.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

// Never prompts on the terminal for a pass phrase (the default would): an encrypted key fails instead.
int noPassphrase(char*, int, int, void*) { return 0; }

int selectHttp11(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned int inlen,
                 void*) {
  static constexpr unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outlen, kHttp11, sizeof kHttp11, in, inlen) != OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;  // no http/1.1 offered: no ALPN at all (the client falls back to HTTP/1.1)
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

// Socket I/O for OpenSSL through send(MSG_NOSIGNAL)/recv: OpenSSL's own socket BIO write()s, and a
// client that resets its connection would end the process with SIGPIPE.
struct SocketBio {
  int fd = -1;
  std::uint64_t rawRead = 0;
};

int bioWrite(BIO* b, const char* data, int size) {
  auto* s = static_cast<SocketBio*>(BIO_get_data(b));
  BIO_clear_retry_flags(b);
  const ssize_t n = ::send(s->fd, data, static_cast<std::size_t>(size), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n >= 0) return static_cast<int>(n);
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_write(b);
  return -1;
}

int bioRead(BIO* b, char* data, int size) {
  auto* s = static_cast<SocketBio*>(BIO_get_data(b));
  BIO_clear_retry_flags(b);
  const ssize_t n = ::recv(s->fd, data, static_cast<std::size_t>(size), MSG_DONTWAIT);
  if (n > 0) s->rawRead += static_cast<std::uint64_t>(n);
  if (n >= 0) return static_cast<int>(n);
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_read(b);
  return -1;
}

long bioCtrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int bioCreate(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

int bioDestroy(BIO* b) {
  delete static_cast<SocketBio*>(BIO_get_data(b));
  BIO_set_data(b, nullptr);
  return 1;
}

const BIO_METHOD* socketBioMethod() {
  static const BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "zerohop socket");
    if (m) {
      BIO_meth_set_write(m, bioWrite);
      BIO_meth_set_read(m, bioRead);
      BIO_meth_set_ctrl(m, bioCtrl);
      BIO_meth_set_create(m, bioCreate);
      BIO_meth_set_destroy(m, bioDestroy);
    }
    return m;
  }();
  return method;
}

}  // namespace

TlsContext::TlsContext(const std::string& certFile, const std::string& keyFile) {
  ERR_clear_error();
  ctx_ = SSL_CTX_new(TLS_server_method());
  if (!ctx_) throw Error(Errc::kInternal, "SSL_CTX_new failed: " + opensslReason("out of memory"));
  try {
    SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx_, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_default_passwd_cb(ctx_, noPassphrase);
    SSL_CTX_set_alpn_select_cb(ctx_, selectHttp11, nullptr);

    (void)openPem("the TLS certificate", setting::kTlsCert, certFile);  // the errno of a missing/unreadable file, before OpenSSL's words
    if (SSL_CTX_use_certificate_chain_file(ctx_, certFile.c_str()) != 1) {
      throw SettingError(Errc::kInvalidArgument, setting::kTlsCert,
                         "the TLS certificate " + certFile + ": not a PEM certificate (" + opensslReason("unreadable") +
                             "); give the PEM chain that begins with -----BEGIN CERTIFICATE----- (Let's Encrypt's "
                             "fullchain.pem; a DER file converts with openssl x509 -inform der -in FILE -out FILE.pem)");
    }
    X509* cert = SSL_CTX_get0_certificate(ctx_);

    BioPtr keyBio = openPem("the TLS key", setting::kTlsKey, keyFile);
    ERR_clear_error();
    PkeyPtr key(PEM_read_bio_PrivateKey(keyBio.get(), nullptr, noPassphrase, nullptr));
    if (!key) {
      // "BEGIN ENCRYPTED PRIVATE KEY" (PKCS#8) or "Proc-Type: 4,ENCRYPTED" (traditional PEM).
      std::ostringstream text;
      text << std::ifstream(keyFile).rdbuf();
      const bool encrypted = text.str().find("ENCRYPTED") != std::string::npos;
      throw SettingError(Errc::kInvalidArgument, setting::kTlsKey,
                         "the TLS key " + keyFile +
                             (encrypted ? ": the private key is encrypted; give it unencrypted (openssl pkey -in " +
                                              keyFile + " -out key.pem), readable only by this user"
                                        : ": not a PEM private key (" + opensslReason("unreadable") +
                                              "); give the key that begins with -----BEGIN PRIVATE KEY----- (Let's "
                                              "Encrypt's privkey.pem)"));
    }
    if (X509_check_private_key(cert, key.get()) != 1 || SSL_CTX_use_PrivateKey(ctx_, key.get()) != 1 ||
        SSL_CTX_check_private_key(ctx_) != 1) {
      throw SettingError(Errc::kInvalidArgument, setting::kTlsKey,
                         "the TLS key " + keyFile + " does not match the TLS certificate " + certFile + " (" +
                             opensslReason("key values mismatch") +
                             "); give the key the certificate was issued for (Let's Encrypt: privkey.pem with "
                             "fullchain.pem of the same directory)");
    }
    const std::string notBefore = timeText(X509_get0_notBefore(cert));
    const std::string notAfter = timeText(X509_get0_notAfter(cert));
    if (X509_cmp_current_time(X509_get0_notAfter(cert)) < 0) {
      validityWarning_ = "the TLS certificate " + certFile + " expired on " + notAfter +
                         ": browsers will refuse it; renew it (certbot renew) and start the server again";
    } else if (X509_cmp_current_time(X509_get0_notBefore(cert)) > 0) {
      validityWarning_ = "the TLS certificate " + certFile + " is not valid before " + notBefore +
                         ": browsers will refuse it until then; check this machine's clock";
    }
  } catch (...) {
    SSL_CTX_free(ctx_);
    ERR_clear_error();
    throw;
  }
  ERR_clear_error();
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

TlsConnection::TlsConnection(const TlsContext& context, int fd) {
  ERR_clear_error();
  ssl_ = SSL_new(context.native());
  BIO* bio = socketBioMethod() ? BIO_new(socketBioMethod()) : nullptr;
  if (!ssl_ || !bio) {
    BIO_free(bio);
    SSL_free(ssl_);
    throw Error(Errc::kInternal, "SSL_new failed: " + opensslReason("out of memory"));
  }
  BIO_set_data(bio, new SocketBio{fd, 0});
  SSL_set_bio(ssl_, bio, bio);  // ssl_ owns it
  SSL_set_accept_state(ssl_);
}

TlsConnection::~TlsConnection() { SSL_free(ssl_); }

std::uint64_t TlsConnection::rawBytesRead() const {
  const auto* s = static_cast<const SocketBio*>(BIO_get_data(SSL_get_rbio(ssl_)));
  return s ? s->rawRead : 0;
}

// OpenSSL's verdict on `ret` as the return value of read/write: bytes, 0 (closed) or -1 and errno.
ssize_t TlsConnection::result(int ret, const char* call) {
  if (ret > 0) return ret;
  const int e = SSL_get_error(ssl_, ret);
  wantsWrite_ = e == SSL_ERROR_WANT_WRITE;
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
    errno = EAGAIN;
    return -1;
  }
  if (e == SSL_ERROR_ZERO_RETURN) return 0;  // close_notify
  failure_ = std::string(call) + ": " + opensslReason("the connection closed");
  closed_ = true;  // no close_notify after a fatal error
  ERR_clear_error();
  errno = ECONNRESET;
  return -1;
}

TlsConnection::Step TlsConnection::handshake() {
  if (established_) return Step::kDone;
  if (closed_) return Step::kFailed;
  ERR_clear_error();
  const int ret = SSL_do_handshake(ssl_);
  if (ret == 1) {
    established_ = true;
    wantsWrite_ = false;
    return Step::kDone;
  }
  const int e = SSL_get_error(ssl_, ret);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
    wantsWrite_ = e == SSL_ERROR_WANT_WRITE;
    return wantsWrite_ ? Step::kWantWrite : Step::kWantRead;
  }
  const int reason = ERR_GET_REASON(ERR_peek_error());
  plainHttp_ = reason == SSL_R_HTTP_REQUEST || reason == SSL_R_HTTPS_PROXY_REQUEST;
  failure_ = opensslReason("the client closed the connection");
  closed_ = true;
  ERR_clear_error();
  return Step::kFailed;
}

ssize_t TlsConnection::read(char* data, std::size_t size) {
  ERR_clear_error();
  return result(SSL_read(ssl_, data, static_cast<int>(std::min<std::size_t>(size, 1u << 30))), "SSL_read");
}

ssize_t TlsConnection::write(const char* data, std::size_t size) {
  ERR_clear_error();
  return result(SSL_write(ssl_, data, static_cast<int>(std::min<std::size_t>(size, 1u << 30))), "SSL_write");
}

void TlsConnection::closeNotify() {
  if (!established_ || closed_) return;
  closed_ = true;
  ERR_clear_error();
  (void)SSL_shutdown(ssl_);  // queues close_notify; never waits for the peer's
  ERR_clear_error();
}

}  // namespace zerohop::stream
