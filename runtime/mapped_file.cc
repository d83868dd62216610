// MappedFile: mmap of a whole file, unmapped when the last copy goes.
#include "runtime/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace visa {

struct MappedFile::Region {
  void* address = nullptr;
  size_t length = 0;
  ~Region() {
    if (address != nullptr) munmap(address, length);
  }
};

namespace {

absl::Status SystemError(const std::string& path, const char* what, int error) {
  std::string message = absl::StrCat("file `", path, "`: ", what, ": ", std::strerror(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  if (error == EACCES || error == EPERM) return absl::PermissionDeniedError(message);
  return absl::InternalError(message);
}

}  // namespace

absl::StatusOr<MappedFile> MappedFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SystemError(path, "cannot open", errno);
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    return SystemError(path, "cannot stat", error);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat("file `", path, "`: not a regular file"));
  }
  auto region = std::make_shared<Region>();
  region->length = static_cast<size_t>(info.st_size);
  if (region->length > 0) {
    void* address = ::mmap(nullptr, region->length, PROT_READ, MAP_PRIVATE, fd, 0);
    if (address == MAP_FAILED) {
      int error = errno;
      ::close(fd);
      return SystemError(path, "cannot map", error);
    }
    region->address = address;
  }
  ::close(fd);  // the region keeps the file's pages reachable
  std::span<const uint8_t> bytes(static_cast<const uint8_t*>(region->address), region->length);
  return MappedFile(path, std::move(region), bytes);
}

}  // namespace visa
