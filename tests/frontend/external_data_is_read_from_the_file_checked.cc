// An ONNX tensor's external data is opened once, checked through that descriptor, and read
// from it: a name replaced by a link after the check does not change what is read.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <variant>

#include "frontend/external_data_path.h"
#include "support/test_support.h"

namespace tlmc::frontend {
namespace {

namespace fs = std::filesystem;
using test::TempDir;
using test::write_file;

std::string read_all(const ExternalDataFile& f) {
  std::string s(f.size(), '\0');
  EXPECT_TRUE(f.read(0, s.data(), s.size()));
  return s;
}

// Regression: the path was checked after resolving its links, then opened again by name, so
// a link swapped in between was followed to a file outside the model's folder.
TEST(ExternalData, ALinkSwappedInAfterTheCheckIsNotFollowed) {
  TempDir dir;
  fs::create_directories(dir.file("m"));
  write_file(dir.file("m/model.onnx"), "");
  write_file(dir.file("m/w.data"), "weights!");
  write_file(dir.file("secret"), "SECRET");
  auto opened = open_external_data(dir.file("m/model.onnx"), "w.data");
  ASSERT_TRUE(std::holds_alternative<ExternalDataFile>(opened));
  fs::remove(dir.file("m/w.data"));
  fs::create_symlink(dir.file("secret"), dir.file("m/w.data"));
  const ExternalDataFile& file = std::get<ExternalDataFile>(opened);
  EXPECT_EQ(read_all(file), "weights!");
  EXPECT_EQ(file.named(), fs::path(dir.file("m/w.data")));

  // Opened now, the link is refused, by what the descriptor leads to.
  auto again = open_external_data(dir.file("m/model.onnx"), "w.data");
  ASSERT_TRUE(std::holds_alternative<RefusedLocation>(again));
  EXPECT_EQ(std::get<RefusedLocation>(again).reason,
            "names 'w.data', a symlink to '" + fs::canonical(dir.file("secret")).string() +
                "', outside the model's folder: copy the file into the folder instead");
}

TEST(ExternalData, OnlyRegularFilesAreRead) {
  TempDir dir;
  fs::create_directories(dir.file("m/sub"));
  write_file(dir.file("m/model.onnx"), "");
  auto opened = open_external_data(dir.file("m/model.onnx"), "sub");
  ASSERT_TRUE(std::holds_alternative<RefusedLocation>(opened));
  EXPECT_EQ(std::get<RefusedLocation>(opened).reason,
            "names 'sub', which is not a regular file (looked at '" + dir.file("m/sub") + "')");
}

// A hard link is another name of the same file: inside the folder, it is read like any of
// the folder's files (docs/driver.md, "ONNX models", says what that means).
TEST(ExternalData, AHardLinkInTheFolderIsAFileOfTheFolder) {
  TempDir dir;
  fs::create_directories(dir.file("m"));
  write_file(dir.file("m/model.onnx"), "");
  write_file(dir.file("elsewhere"), "shared bytes");
  fs::create_hard_link(dir.file("elsewhere"), dir.file("m/w.data"));
  auto opened = open_external_data(dir.file("m/model.onnx"), "w.data");
  ASSERT_TRUE(std::holds_alternative<ExternalDataFile>(opened));
  EXPECT_EQ(read_all(std::get<ExternalDataFile>(opened)), "shared bytes");
}

}  // namespace
}  // namespace tlmc::frontend
