#pragma once
// A self-signed P-256 certificate for 127.0.0.1 (subjectAltName IP:127.0.0.1, CN localhost) and its
// key, written as PEM files, made with OpenSSL's API: the HTTPS tests trust it as their CA.
// Thread-safety: reentrant.

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

namespace zerohop::test {

struct CertFiles {
  std::string cert;
  std::string key;
};

/// Writes DIR/NAME.crt and DIR/NAME.key; valid from now + `fromSeconds` to now + `toSeconds`
/// (negative: in the past). Throws std::runtime_error when OpenSSL fails.
inline CertFiles writeSelfSignedCert(const std::string& dir, const std::string& name, long fromSeconds = -60,
                                     long toSeconds = 86400) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> x(X509_new(), X509_free);
  if (!key || !x) throw std::runtime_error("EVP_EC_gen/X509_new failed");
  X509_set_version(x.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(x.get()), fromSeconds);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), toSeconds);
  X509_set_pubkey(x.get(), key.get());
  X509_NAME* subject = X509_get_subject_name(x.get());
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1, -1,
                             0);
  X509_set_issuer_name(x.get(), subject);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x.get(), x.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] : {std::pair{NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"},
                                   std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    if (!ext) throw std::runtime_error("X509V3_EXT_conf_nid failed");
    X509_add_ext(x.get(), ext, -1);
    X509_EXTENSION_free(ext);
  }
  if (X509_sign(x.get(), key.get(), EVP_sha256()) == 0) throw std::runtime_error("X509_sign failed");
  CertFiles files{dir + "/" + name + ".crt", dir + "/" + name + ".key"};
  auto write = [](const std::string& path, auto&& body) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw std::runtime_error("cannot write " + path);
    const bool ok = body(f);
    std::fclose(f);
    if (!ok) throw std::runtime_error("PEM_write failed for " + path);
  };
  write(files.cert, [&](std::FILE* f) { return PEM_write_X509(f, x.get()) == 1; });
  write(files.key, [&](std::FILE* f) {
    return PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  });
  return files;
}

}  // namespace zerohop::test
