// AddressBook: which device tensor owns which bytes, collisions (clobbering) and free-range search.
//
// The manual leaves placement to the programmer ("Addresses must not collide, but they can be
// non-contiguous", Overview, "Execution Contexts"). Writing over another tensor is not an error by
// itself (the manual's own examples reuse addresses of tensors that are dead); reading a tensor
// whose bytes were overwritten by another one is. So every write claims its byte ranges: the
// previous owners of overlapping bytes are marked clobbered (by whom, where), and a later read of
// a clobbered range fails with a message naming both tensors and both ranges.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "runtime/tier.h"

namespace visa {

// A half-open byte range [begin, end).
struct ByteRange {
  int64_t begin = 0;
  int64_t end = 0;
  bool Overlaps(const ByteRange& other) const { return begin < other.end && other.begin < end; }
  bool operator==(const ByteRange&) const = default;
};

// The address space of a tier: SPM lives inside DM, so both share DM's byte space.
Tier SpaceOf(Tier tier);
// Where address 0 of `tier` lies in its space (kSpmOffsetInDm for SPM, else 0).
int64_t SpaceOffset(Tier tier);

// "chip 0", "chip 0 cluster 1 slice 7", "chip 0 cluster 1 slice 7 row 3" for a unit of `space`.
std::string UnitName(Tier space, int64_t unit);

class AddressBook {
 public:
  AddressBook();
  AddressBook(const AddressBook&) = delete;
  AddressBook& operator=(const AddressBook&) = delete;

  // Registers a tensor (owning nothing yet); returns its id.
  int64_t Add(std::string name, Tier tier);

  // A token whose destruction forgets `id` (see Forget): every handle of a tensor holds it, so
  // that a tensor no handle names any more (a previous run's outputs and scratch) leaves no
  // record behind. Harmless after the book is gone.
  std::shared_ptr<const void> Lease(int64_t id);
  // The book a lease was given by, or null once that book (its Device) is gone.
  static const AddressBook* BookOf(const std::shared_ptr<const void>& lease);
  // Releases `id` and drops its record: nothing can name it any more. Collision messages naming
  // it as the writer of other tensors' bytes keep its name.
  void Forget(int64_t id);
  // Tensors on record (released ones included, forgotten ones not).
  int64_t size() const { return static_cast<int64_t>(tensors_.size()); }

  // A tensor a Trace made (its outputs and scratch, not its inputs): a placeholder for what each
  // launch of the program makes again, holding no data of its own.
  void MarkTraced(int64_t id);
  bool IsTraced(int64_t id) const;

  void SetName(int64_t id, std::string name);
  const std::string& Name(int64_t id) const;
  bool Contains(int64_t id) const { return tensors_.contains(id); }

  // Makes `id` the owner of `range` (in its tier's own addresses) in every unit of `units`,
  // marking the previous owners of overlapping bytes clobbered.
  void Claim(int64_t id, absl::Span<const int64_t> units, ByteRange range);

  // OK unless `id` was released, or another tensor overwrote part of `range` (own addresses) in
  // one of `units`; the error names both tensors and both ranges.
  absl::Status CheckReadable(int64_t id, absl::Span<const int64_t> units, ByteRange range) const;

  // Forgets the tensor's ranges: they become free for Address::Any() and no longer clobber-track.
  // A released range stays on record as a free piece, so that the next claim of exactly that
  // range (a program run again places its tensors where the previous run's were) updates it in
  // place instead of erasing and reinserting it.
  void Release(int64_t id);

  // The lowest multiple of `alignment` a with [a, a + bytes) free in every unit of `units` and
  // a + bytes <= limit (own addresses of `tier`), or nullopt.
  std::optional<int64_t> FindFree(Tier tier, absl::Span<const int64_t> units, int64_t bytes,
                                  int64_t alignment, int64_t limit) const;

  // The tensors owning bytes of `range` (own addresses of `tier`) in some unit of `units`, each
  // once, increasing (released ranges own nothing).
  std::vector<int64_t> OwnersOf(Tier tier, absl::Span<const int64_t> units, ByteRange range) const;

  // Unit claims that found exactly their range on record (owned or free) and took it over in
  // place, and those that cut the pieces they overlap and inserted their own.
  int64_t claims_in_place() const { return claims_in_place_; }
  int64_t claims_inserted() const { return claims_inserted_; }
  // Pieces (owned and free) on record for a unit of `space`.
  int64_t pieces(Tier space, int64_t unit) const;

 private:
  struct Clobber {
    int64_t writer = 0;
    std::shared_ptr<const std::string> writer_name;  // outlives the writer's record
    Tier writer_tier = Tier::kHbm;
    int64_t unit = 0;      // the units [unit, unit_end): one record for a writer's consecutive units
    int64_t unit_end = 0;
    ByteRange victim;  // the victim's claimed range (space addresses)
    ByteRange writer_range;
  };
  struct Record {
    std::shared_ptr<std::string> name = std::make_shared<std::string>();
    Tier tier = Tier::kHbm;
    ByteRange claim;  // space addresses
    std::vector<int64_t> units;
    bool released = false;
    bool traced = false;
    std::vector<Clobber> clobbers;
  };
  // The owner of a free piece: tensor ids start at 1.
  static constexpr int64_t kFree = 0;
  struct Owned {
    int64_t end = 0;
    int64_t id = 0;  // kFree for a released range
  };
  struct UnitMap {
    std::map<int64_t, Owned> pieces;  // begin -> (end, owner), non-overlapping
    int64_t free_pieces = 0;
  };

  // Removes [range] from the unit's ownership map, reporting each removed piece's owner (kFree
  // for free pieces).
  template <typename Fn>
  static void Cut(UnitMap& map, ByteRange range, Fn&& on_piece);
  // Merges adjacent free pieces once they outnumber the owned ones, so that free pieces left by
  // ranges never claimed again cannot accumulate.
  static void CompactFree(UnitMap& map);
  // Makes the pieces `id` owns inside `claim` free.
  static void FreeOwnPieces(UnitMap& map, int64_t id, ByteRange claim);
  std::string Describe(int64_t id, int64_t unit, ByteRange space_range) const;
  static std::string Describe(const std::string& name, Tier tier, int64_t unit, ByteRange space_range);

  int64_t next_id_ = 1;
  int64_t claims_in_place_ = 0;
  int64_t claims_inserted_ = 0;
  absl::flat_hash_map<int64_t, Record> tensors_;
  // Each space's units by index (units are small dense numbers: chips, slices, TRF rows), so that
  // a claim over a cluster's 256 slices finds each unit's map without hashing.
  struct Space {
    std::vector<UnitMap> units;
    UnitMap& At(int64_t unit) {
      if (unit >= static_cast<int64_t>(units.size())) units.resize(unit + 1);
      return units[unit];
    }
    const UnitMap* Find(int64_t unit) const {
      return unit >= 0 && unit < static_cast<int64_t>(units.size()) ? &units[unit] : nullptr;
    }
  };
  absl::flat_hash_map<Tier, Space> spaces_;
  static constexpr int64_t kMaxUnits = int64_t{1} << 24;  // far above any device's units
  // What leases reach the book through: expires with the book.
  std::shared_ptr<AddressBook*> self_;
};

}  // namespace visa
