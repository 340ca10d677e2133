#include "beside_program.hpp"
#include "stream/web_assets.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "beside_program.hpp"

namespace zerohop::stream {
namespace {

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(WebAssets, EmbeddedCopyMatchesEveryFileOfWeb) {
  const std::filesystem::path web(zerohop::testing::besideProgram(ZEROHOP_WEB_DIR));
  std::size_t onDisk = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(web)) {
    if (!entry.is_regular_file()) continue;
    const std::string rel = std::filesystem::relative(entry.path(), web).generic_string();
    if (rel.front() == '.') continue;
    ++onDisk;
    const auto asset = findWebAsset("/" + rel, "");
    ASSERT_TRUE(asset.has_value()) << rel << " is not embedded (rebuild?)";
    EXPECT_EQ(asset->body, readFile(entry.path())) << rel << " differs from the embedded copy";
  }
  EXPECT_EQ(embeddedFiles().size(), onDisk);
  ASSERT_GT(onDisk, 0u);
  const auto index = findWebAsset("/", "");
  ASSERT_TRUE(index.has_value());
  EXPECT_EQ(index->contentType, "text/html; charset=utf-8");
}

TEST(WebAssets, ContentTypes) {
  EXPECT_EQ(contentTypeFor("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(contentTypeFor("viewer.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(contentTypeFor("style.css"), "text/css; charset=utf-8");
  EXPECT_EQ(contentTypeFor("a/b.json"), "application/json");
  EXPECT_EQ(contentTypeFor("logo.svg"), "image/svg+xml");
  EXPECT_EQ(contentTypeFor("logo.png"), "image/png");
  EXPECT_EQ(contentTypeFor("blob"), "application/octet-stream");
}

TEST(WebAssets, WebRootServesFromDiskAndRefusesTraversal) {
  const auto root = std::filesystem::temp_directory_path() / ("zh-webroot-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "sub");
  std::ofstream(root / "index.html") << "<p>dev</p>";
  std::ofstream(root / "sub" / "x.js") << "let x = 1;";
  std::ofstream(root.parent_path() / "zh-secret.txt") << "secret";
  const auto index = findWebAsset("/", root.string());
  ASSERT_TRUE(index.has_value());
  EXPECT_EQ(index->body, "<p>dev</p>");
  const auto js = findWebAsset("/sub/x.js", root.string());
  ASSERT_TRUE(js.has_value());
  EXPECT_EQ(js->contentType, "text/javascript; charset=utf-8");
  for (const char* bad : {"/../zh-secret.txt", "/sub/../../zh-secret.txt", "//etc/passwd", "/sub//x.js",
                          "/.hidden", "/sub/./x.js", "relative.html", "/missing.html", "/sub"}) {
    EXPECT_FALSE(findWebAsset(bad, root.string()).has_value()) << bad;
  }
  std::filesystem::remove_all(root);
  std::filesystem::remove(root.parent_path() / "zh-secret.txt");
}

// issue 22: a link to /etc served /etc/shadow. No symbolic link is followed under the root, whether
// it leads out (a file or a folder) or stays inside; a FIFO does not hang the lookup.
TEST(WebAssets, WebRootFollowsNoSymbolicLinks) {
  const auto root = std::filesystem::temp_directory_path() / ("zh-webroot-links-" + std::to_string(::getpid()));
  const auto outside = root.string() + "-outside";
  std::filesystem::create_directories(root / "sub");
  std::filesystem::create_directories(outside);
  std::ofstream(root / "sub" / "inside.js") << "ok";
  std::ofstream(outside + "/secret.txt") << "secret";
  std::filesystem::create_symlink(outside + "/secret.txt", root / "file-link.txt");
  std::filesystem::create_directory_symlink(outside, root / "dir-link");
  std::filesystem::create_symlink(root / "sub" / "inside.js", root / "inner-link.js");
  ASSERT_EQ(::mkfifo((root / "fifo.txt").c_str(), 0600), 0);
  EXPECT_TRUE(findWebAsset("/sub/inside.js", root.string()).has_value());
  for (const char* bad : {"/file-link.txt", "/dir-link/secret.txt", "/inner-link.js", "/fifo.txt"}) {
    EXPECT_FALSE(findWebAsset(bad, root.string()).has_value()) << bad;
  }
  std::filesystem::remove_all(root);
  std::filesystem::remove_all(outside);
}

}  // namespace
}  // namespace zerohop::stream
