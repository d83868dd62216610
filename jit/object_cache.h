// ObjectCache: the JIT's compiled kernels kept on disk, so that a later process building the same
// IR links the stored object instead of optimizing and generating code again.
//
// An entry is named by ObjectKey: a hash of the kernel's unoptimized IR and of everything else the
// object depends on (LLVM version, host CPU and features, optimization levels). Keying by the IR
// rather than by the kernel's key string means a changed IR generator can never load a stale
// object. Entries are written to a temporary file and renamed, so concurrent processes see a whole
// entry or none; each carries its length and checksum, so a truncated or corrupt file is a miss.
// The directory: an explicit one, else $VISA_CACHE_DIR, $XDG_CACHE_HOME/visa/jit or
// $HOME/.cache/visa/jit. VISA_JIT_CACHE=off turns the cache off whatever the options say.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace llvm {
class ObjectCache;
}  // namespace llvm

namespace visa::jit {

// What a compiled object depends on besides its IR.
struct CodegenConfig {
  std::string llvm_version;  // LLVM_VERSION_STRING
  std::string cpu;           // the host CPU the code is tuned for, e.g. "znver4"
  std::string features;      // its feature string, e.g. "+avx2,+avx512f,..."
  std::string optimization;  // what the levels depend on besides each module's own flag (compiler.cc)
};

// The cache key of `ir` (a module's bitcode before optimization) compiled under `config`: 64 hex
// digits.
std::string ObjectKey(const CodegenConfig& config, absl::string_view ir);

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

  // The object stored under `key`; nullopt when it is absent, unreadable or corrupt (a miss).
  std::optional<std::string> Load(absl::string_view key);
  // Stores `object` under `key` atomically (temporary file, then rename), creating the directory.
  absl::Status Store(absl::string_view key, absl::string_view object);

  // This cache as ORC's ObjectCache. A module is keyed by its identifier, which Compiler sets to
  // the module's ObjectKey before optimizing; modules named otherwise are neither loaded nor stored.
  llvm::ObjectCache& orc() { return *orc_; }

  std::string PathOf(absl::string_view key) const;
  const std::string& directory() const { return directory_; }
  int64_t hits() const { return hits_; }
  int64_t writes() const { return writes_; }

 private:
  std::string directory_;
  std::unique_ptr<llvm::ObjectCache> orc_;
  int64_t hits_ = 0;
  int64_t writes_ = 0;
};

}  // namespace visa::jit
