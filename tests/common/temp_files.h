// Files a test writes and reads back (weights files, caches): paths in gtest's temporary
// directory and raw bytes written to them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace visa::test {

// `name` in ::testing::TempDir().
std::string TempPath(const std::string& name);

// Writes `bytes` to `path`, replacing what it held; a file that cannot be written fails the test.
void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace visa::test
