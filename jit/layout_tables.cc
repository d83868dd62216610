// Tables of layouts kept by content (layout_tables.h).
#include "jit/layout_tables.h"

#include <functional>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "dsl/vector_branch_ids.h"
#include "dsl/vector_tags.h"
#include "jit/mapping_facts.h"

namespace visa::jit {
namespace {

// Past this many bytes of tables the store starts again (a caller keeps what it holds).
constexpr int64_t kBudgetBytes = int64_t{256} << 20;

template <typename T>
class Store {
 public:
  absl::StatusOr<std::shared_ptr<const std::vector<T>>> Get(
      const std::string& key, const std::function<absl::StatusOr<std::vector<T>>()>& make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = tables_.find(key);
      if (it != tables_.end()) return it->second;
    }
    absl::StatusOr<std::vector<T>> made = make();
    if (!made.ok()) return made.status();
    auto table = std::make_shared<const std::vector<T>>(*std::move(made));
    const int64_t bytes = static_cast<int64_t>(table->size() * sizeof(T));
    std::lock_guard<std::mutex> lock(mutex_);
    if (bytes_ + bytes > kBudgetBytes) {
      tables_.clear();
      bytes_ = 0;
    }
    if (tables_.emplace(key, table).second) bytes_ += bytes;
    return table;
  }

 private:
  std::mutex mutex_;
  absl::flat_hash_map<std::string, std::shared_ptr<const std::vector<T>>> tables_;
  int64_t bytes_ = 0;
};

std::string ShapeKey(const StreamShape& shape) {
  return absl::StrCat(MappingKey(shape.chip), " | ", MappingKey(shape.cluster), " | ", MappingKey(shape.slice), " | ",
                      MappingKey(shape.time), " | ", MappingKey(shape.packet));
}

}  // namespace

absl::StatusOr<std::shared_ptr<const std::vector<uint8_t>>> KeptAxisToggleTags(const Mapping& layout,
                                                                                const std::string& axis) {
  static Store<uint8_t> store;
  return store.Get(absl::StrCat("toggle ", axis, " ", MappingKey(layout)),
                   [&] { return AxisToggleTags(layout, axis); });
}

absl::StatusOr<std::shared_ptr<const std::vector<int64_t>>> KeptZipPositions(const Mapping& paired,
                                                                             const Mapping& out,
                                                                             const std::string& axis) {
  static Store<int64_t> store;
  return store.Get(absl::StrCat("zip ", axis, " ", MappingKey(paired), " -> ", MappingKey(out)),
                   [&] { return ZipPositions(paired, out, axis); });
}

absl::StatusOr<std::shared_ptr<const std::vector<uint8_t>>> KeptValidCountIds(const StreamShape& in,
                                                                               const std::string& axis) {
  static Store<uint8_t> store;
  return store.Get(absl::StrCat("valid count ", axis, " ", ShapeKey(in)), [&] { return ValidCountIds(in, axis); });
}

}  // namespace visa::jit
