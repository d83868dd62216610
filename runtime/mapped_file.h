// MappedFile: a whole file mapped read-only into memory, so a weights file of many gigabytes is
// read through the page cache once instead of being copied into a buffer first.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace visa {

class MappedFile {
 public:
  // Maps `path` (an empty file maps to an empty span). NotFound / PermissionDenied / Internal
  // naming the path and the system's reason when it cannot be opened or mapped.
  static absl::StatusOr<MappedFile> Open(const std::string& path);

  const std::string& path() const { return path_; }
  // Valid as long as any copy of this MappedFile lives (copies share the mapping).
  std::span<const uint8_t> bytes() const { return bytes_; }

 private:
  struct Region;
  MappedFile(std::string path, std::shared_ptr<const Region> region, std::span<const uint8_t> bytes)
      : path_(std::move(path)), region_(std::move(region)), bytes_(bytes) {}

  std::string path_;
  std::shared_ptr<const Region> region_;
  std::span<const uint8_t> bytes_;
};

}  // namespace visa
