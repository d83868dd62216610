// ObjectCache: the JIT's compiled kernels kept on disk, so that a later process needing the same
// kernel links the stored object instead of building, optimizing and generating code again.
//
// An entry is named by ObjectKey: a hash of the kernel's identity (its spec key and optimization
// levels, compiler.h: KernelIdentity) and of everything else the object depends on (the IR
// generators' version and source digest, LLVM version, host CPU and features, the pipelines).
// Keying by the spec rather than by the IR lets a hit build no IR at all; the generators' version
// and digest keep a changed generator from loading a stale object. Entries are written to a
// temporary file and renamed, so concurrent processes see a whole entry or none; each carries its
// key, length and checksum, so a truncated, corrupt or misplaced file is a miss.
// The directory: an explicit one, else $VISA_CACHE_DIR, $XDG_CACHE_HOME/visa/jit or
// $HOME/.cache/visa/jit. VISA_JIT_CACHE=off turns the cache off whatever the options say.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace visa::jit {

// What a compiled object depends on besides the kernel's identity.
struct CodegenConfig {
  std::string llvm_version;  // LLVM_VERSION_STRING
  std::string cpu;           // the host CPU the code is tuned for, e.g. "znver4"
  std::string features;      // its feature string, e.g. "+avx2,+avx512f,..."
  std::string optimization;  // what the levels depend on besides each module's own flag (compiler.cc)
  std::string generator = {};  // the IR generators' version and source digest (generator_version.h)
};

// The cache key of the kernel `identity` names (compiler.h: KernelIdentity) compiled under
// `config`: 64 hex digits.
std::string ObjectKey(const CodegenConfig& config, absl::string_view identity);

// Whether `text` has the form of an ObjectKey (anything else never names a file).
bool IsObjectKey(absl::string_view text);

// The cache directory: `explicit_dir` when not empty, else from the environment (see above);
// nullopt when none can be derived (no HOME).
std::optional<std::string> CacheDirectory(const std::string& explicit_dir);

// VISA_JIT_CACHE=off (or 0, false, no): the disk cache is not used.
bool DiskCacheDisabledByEnvironment();

class DiskObjectCache {
 public:
  explicit DiskObjectCache(std::string directory);
  ~DiskObjectCache();
  DiskObjectCache(const DiskObjectCache&) = delete;
  DiskObjectCache& operator=(const DiskObjectCache&) = delete;

  // The bytes stored under `key`; nullopt when they are absent, unreadable, corrupt or stored
  // under another key (a miss).
  std::optional<std::string> Load(absl::string_view key);
  // Stores `bytes` under `key` atomically (temporary file, then rename), creating the directory.
  absl::Status Store(absl::string_view key, absl::string_view bytes);

  std::string PathOf(absl::string_view key) const;
  const std::string& directory() const { return directory_; }
  int64_t hits() const { return hits_; }
  int64_t writes() const { return writes_; }

 private:
  std::string directory_;
  int64_t hits_ = 0;
  int64_t writes_ = 0;
};

}  // namespace visa::jit
