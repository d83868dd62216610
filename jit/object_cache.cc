// ObjectCache: keys, the directory, entries with their key, length and checksum, atomic writes.
#include "jit/object_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/xxhash.h"

namespace visa::jit {
namespace {

// Bumped when the entry layout or the meaning of a key changes, so old entries are never read.
// Version 2: keys name kernels by their spec, not their IR.
constexpr absl::string_view kKeyVersion = "visa-jit-object 2";
// Version 2 entries carry their own key: a file copied or renamed to another key's name is a miss.
constexpr char kMagic[8] = {'V', 'I', 'S', 'A', 'O', 'B', 'J', '2'};
constexpr size_t kKeyBytes = 64;
constexpr size_t kHeaderBytes = sizeof(kMagic) + kKeyBytes + 16;  // magic, key, payload length, checksum
// Objects of a kernel are kilobytes; anything far larger is not an entry this cache wrote.
constexpr int64_t kMaxEntryBytes = int64_t{1} << 30;

const char* NonEmptyEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetU64(absl::string_view in) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}

// The checksum covers the key too, so a header whose key was edited is as corrupt as its payload.
uint64_t Checksum(absl::string_view key, absl::string_view payload) {
  return llvm::xxh3_64bits(llvm::StringRef(payload.data(), payload.size())) ^
         (llvm::xxh3_64bits(llvm::StringRef(key.data(), key.size())) * 0x9e3779b97f4a7c15ull);
}

std::string Wrap(absl::string_view key, absl::string_view payload) {
  std::string entry(kMagic, sizeof(kMagic));
  entry.append(key.data(), key.size());
  PutU64(entry, payload.size());
  PutU64(entry, Checksum(key, payload));
  entry.append(payload.data(), payload.size());
  return entry;
}

// The payload inside a whole, intact entry of `key`; nullopt for anything else (a truncated write,
// another format, another key's entry, bit rot).
std::optional<std::string> Unwrap(absl::string_view key, std::string entry) {
  if (entry.size() < kHeaderBytes || std::memcmp(entry.data(), kMagic, sizeof(kMagic)) != 0) return std::nullopt;
  const absl::string_view header(entry.data(), kHeaderBytes);
  if (header.substr(sizeof(kMagic), kKeyBytes) != key) return std::nullopt;
  const absl::string_view sizes = header.substr(sizeof(kMagic) + kKeyBytes);
  const uint64_t size = GetU64(sizes);
  if (size != entry.size() - kHeaderBytes) return std::nullopt;
  if (Checksum(key, absl::string_view(entry).substr(kHeaderBytes)) != GetU64(sizes.substr(8))) return std::nullopt;
  entry.erase(0, kHeaderBytes);
  return entry;
}

// The bytes of a regular file; nullopt when it cannot be read whole.
std::optional<std::string> ReadFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat info;
  std::optional<std::string> bytes;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size <= kMaxEntryBytes) {
    bytes.emplace(static_cast<size_t>(info.st_size), '\0');
    size_t done = 0;
    while (done < bytes->size()) {
      const ssize_t n = ::read(fd, bytes->data() + done, bytes->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    if (done != bytes->size()) bytes.reset();
  }
  ::close(fd);
  return bytes;
}

bool WriteAll(int fd, absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

absl::Status ErrnoError(absl::string_view what, const std::string& path) {
  return absl::UnavailableError(absl::StrCat("JIT object cache: ", what, " `", path, "`: ", std::strerror(errno)));
}

}  // namespace

std::string ObjectKey(const CodegenConfig& config, absl::string_view identity) {
  llvm::BLAKE3 hasher;
  // Each part length-prefixed, so no two different part lists hash the same bytes.
  for (absl::string_view part : {kKeyVersion, absl::string_view(config.llvm_version), absl::string_view(config.cpu),
                                absl::string_view(config.features), absl::string_view(config.optimization),
                                absl::string_view(config.generator), identity}) {
    hasher.update(absl::StrCat(part.size(), ":"));
    hasher.update(llvm::StringRef(part.data(), part.size()));
  }
  const auto digest = hasher.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

bool IsObjectKey(absl::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(c) && !(c >= 'a' && c <= 'f')) return false;
  }
  return true;
}

std::optional<std::string> CacheDirectory(const std::string& explicit_dir) {
  if (!explicit_dir.empty()) return explicit_dir;
  if (const char* dir = NonEmptyEnv("VISA_CACHE_DIR")) return std::string(dir);
  // The XDG base directory spec: a relative XDG_CACHE_HOME is invalid and ignored.
  if (const char* xdg = NonEmptyEnv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return absl::StrCat(xdg, "/visa/jit");
  }
  if (const char* home = NonEmptyEnv("HOME")) return absl::StrCat(home, "/.cache/visa/jit");
  return std::nullopt;
}

bool DiskCacheDisabledByEnvironment() {
  const char* value = NonEmptyEnv("VISA_JIT_CACHE");
  if (value == nullptr) return false;
  for (const char* off : {"off", "0", "false", "no"}) {
    if (absl::EqualsIgnoreCase(value, off)) return true;
  }
  return false;
}

DiskObjectCache::DiskObjectCache(std::string directory) : directory_(std::move(directory)) {}

DiskObjectCache::~DiskObjectCache() = default;

std::string DiskObjectCache::PathOf(absl::string_view key) const { return absl::StrCat(directory_, "/", key, ".o"); }

std::optional<std::string> DiskObjectCache::Load(absl::string_view key) {
  if (!IsObjectKey(key)) return std::nullopt;
  std::optional<std::string> entry = ReadFile(PathOf(key));
  if (!entry) return std::nullopt;
  std::optional<std::string> payload = Unwrap(key, *std::move(entry));
  if (payload) ++hits_;
  return payload;
}

absl::Status DiskObjectCache::Store(absl::string_view key, absl::string_view bytes) {
  if (!IsObjectKey(key)) return absl::InvalidArgumentError(absl::StrCat("JIT object cache: bad key `", key, "`"));
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("JIT object cache: cannot create `", directory_, "`: ", error.message()));
  }
  // A unique temporary name per writer: processes storing the same key never share a file, and
  // the rename publishes a whole entry at once.
  std::string temp = absl::StrCat(directory_, "/.", key, ".XXXXXX");
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return ErrnoError("cannot create", temp);
  const bool written = WriteAll(fd, Wrap(key, bytes));
  const bool closed = ::close(fd) == 0;
  const std::string path = PathOf(key);
  if (!written || !closed || std::rename(temp.c_str(), path.c_str()) != 0) {
    absl::Status status = ErrnoError("cannot write", path);
    ::unlink(temp.c_str());
    return status;
  }
  ++writes_;
  return absl::OkStatus();
}

}  // namespace visa::jit
