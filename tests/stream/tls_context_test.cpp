// TlsContext (serve --tls-cert/--tls-key) refuses unusable certificates and keys at start, naming
// the file, the cause and the fix, and warns about a certificate browsers will refuse.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "self_signed_cert.hpp"
#include "stream/tls_context.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {

class TlsContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "zerohop-tls-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The message of the Error(kInvalidArgument) TlsContext throws, or "" when it does not throw.
  static std::string refusal(const std::string& cert, const std::string& key) {
    try {
      stream::TlsContext context(cert, key);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument) << e.what();
      return e.what();
    }
    return {};
  }

  std::string dir_;
};

TEST_F(TlsContextTest, MatchingPairLoadsWithoutWarning) {
  const auto files = test::writeSelfSignedCert(dir_, "good");
  stream::TlsContext context(files.cert, files.key);
  EXPECT_NE(context.native(), nullptr);
  EXPECT_EQ(context.validityWarning(), "");
}

TEST_F(TlsContextTest, KeyOfAnotherCertificateIsRefusedNamingBothFiles) {
  const auto a = test::writeSelfSignedCert(dir_, "a");
  const auto b = test::writeSelfSignedCert(dir_, "b");
  const std::string why = refusal(a.cert, b.key);
  EXPECT_NE(why.find("does not match the TLS certificate"), std::string::npos) << why;
  EXPECT_NE(why.find(b.key), std::string::npos) << why;
  EXPECT_NE(why.find(a.cert), std::string::npos) << why;
}

TEST_F(TlsContextTest, MissingSwappedAndNonPemFilesAreRefused) {
  const auto files = test::writeSelfSignedCert(dir_, "good");
  const std::string missing = refusal(dir_ + "/nope.crt", files.key);
  EXPECT_NE(missing.find("the TLS certificate " + dir_ + "/nope.crt: cannot be read (No such file"), std::string::npos)
      << missing;
  const std::string noKey = refusal(files.cert, dir_ + "/nope.key");
  EXPECT_NE(noKey.find("the TLS key " + dir_ + "/nope.key: cannot be read"), std::string::npos) << noKey;

  std::ofstream(dir_ + "/junk.pem") << "this is not PEM\n";
  const std::string junkCert = refusal(dir_ + "/junk.pem", files.key);
  EXPECT_NE(junkCert.find("not a PEM certificate"), std::string::npos) << junkCert;
  EXPECT_NE(junkCert.find("BEGIN CERTIFICATE"), std::string::npos) << junkCert;
  const std::string junkKey = refusal(files.cert, dir_ + "/junk.pem");
  EXPECT_NE(junkKey.find("not a PEM private key"), std::string::npos) << junkKey;
  {
    std::unique_ptr<std::FILE, decltype(&std::fclose)> f(std::fopen((dir_ + "/enc.key").c_str(), "w"), std::fclose);
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
    ASSERT_TRUE(f && key);
    static char pass[] = "secret";
    ASSERT_EQ(PEM_write_PrivateKey(f.get(), key.get(), EVP_aes_256_cbc(), nullptr, 0, nullptr, pass), 1);
  }
  const std::string encrypted = refusal(files.cert, dir_ + "/enc.key");  // and no pass phrase prompt
  EXPECT_NE(encrypted.find("the private key is encrypted"), std::string::npos) << encrypted;
  const std::string swapped = refusal(files.key, files.cert);
  EXPECT_NE(swapped.find("the TLS certificate " + files.key + ": not a PEM certificate"), std::string::npos) << swapped;
}

TEST_F(TlsContextTest, ExpiredAndNotYetValidCertificatesLoadWithAWarning) {
  const auto expired = test::writeSelfSignedCert(dir_, "old", -7200, -3600);
  stream::TlsContext old(expired.cert, expired.key);
  EXPECT_NE(old.validityWarning().find("expired on"), std::string::npos) << old.validityWarning();
  EXPECT_NE(old.validityWarning().find("browsers will refuse it"), std::string::npos) << old.validityWarning();
  const auto future = test::writeSelfSignedCert(dir_, "future", 3600, 7200);
  stream::TlsContext early(future.cert, future.key);
  EXPECT_NE(early.validityWarning().find("is not valid before"), std::string::npos) << early.validityWarning();
}

}  // namespace
}  // namespace zerohop
