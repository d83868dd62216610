// Temporary files for the tests.
#include "tests/common/temp_files.h"

#include <gtest/gtest.h>

#include <fstream>

namespace visa::test {

std::string TempPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  EXPECT_TRUE(out.good()) << "writing " << path;
}

}  // namespace visa::test
