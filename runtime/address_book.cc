// AddressBook: ownership maps per unit, clobber records, collision errors, free-range search.
#include "runtime/address_book.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/checked_math.h"
#include "dsl/status_macros.h"

namespace visa {

Tier SpaceOf(Tier tier) { return tier == Tier::kSpm ? Tier::kDm : tier; }

int64_t SpaceOffset(Tier tier) { return tier == Tier::kSpm ? kSpmOffsetInDm : 0; }

std::string UnitName(Tier space, int64_t unit) {
  switch (space) {
    case Tier::kHbm:
      return absl::StrCat("chip ", unit);
    case Tier::kTrf: {
      int64_t slice_unit = unit / kTrfRows;
      return absl::StrCat("chip ", slice_unit / kSlicesPerChip, " cluster ",
                          slice_unit % kSlicesPerChip / kSlicesPerCluster, " slice ",
                          slice_unit % kSlicesPerCluster, " row ", unit % kTrfRows);
    }
    default:
      return absl::StrCat("chip ", unit / kSlicesPerChip, " cluster ",
                          unit % kSlicesPerChip / kSlicesPerCluster, " slice ",
                          unit % kSlicesPerCluster);
  }
}

AddressBook::AddressBook() : self_(std::make_shared<AddressBook*>(this)) {}

int64_t AddressBook::Add(std::string name, Tier tier) {
  int64_t id = next_id_++;
  Record& record = tensors_[id];
  *record.name = std::move(name);
  record.tier = tier;
  return id;
}

namespace {

// Forgets its tensor when the last handle holding it goes, if the book still exists.
struct LeaseToken {
  LeaseToken(std::weak_ptr<AddressBook*> book, int64_t id) : book(std::move(book)), id(id) {}
  LeaseToken(const LeaseToken&) = delete;
  LeaseToken& operator=(const LeaseToken&) = delete;
  std::weak_ptr<AddressBook*> book;
  int64_t id = 0;
  ~LeaseToken() {
    if (std::shared_ptr<AddressBook*> alive = book.lock()) (*alive)->Forget(id);
  }
};

}  // namespace

std::shared_ptr<const void> AddressBook::Lease(int64_t id) {
  VISA_CHECK(tensors_.contains(id), "leasing an unknown tensor");
  return std::make_shared<const LeaseToken>(self_, id);
}

const AddressBook* AddressBook::BookOf(const std::shared_ptr<const void>& lease) {
  if (lease == nullptr) return nullptr;
  std::shared_ptr<AddressBook*> alive = static_cast<const LeaseToken*>(lease.get())->book.lock();
  return alive ? *alive : nullptr;
}

void AddressBook::Forget(int64_t id) {
  if (!tensors_.contains(id)) return;
  Release(id);
  tensors_.erase(id);
}

void AddressBook::MarkTraced(int64_t id) {
  auto it = tensors_.find(id);
  if (it != tensors_.end()) it->second.traced = true;
}

bool AddressBook::IsTraced(int64_t id) const {
  auto it = tensors_.find(id);
  return it != tensors_.end() && it->second.traced;
}

void AddressBook::SetName(int64_t id, std::string name) {
  auto it = tensors_.find(id);
  VISA_CHECK(it != tensors_.end(), "naming an unknown tensor");
  *it->second.name = std::move(name);
}

const std::string& AddressBook::Name(int64_t id) const {
  auto it = tensors_.find(id);
  VISA_CHECK(it != tensors_.end(), "an unknown tensor id");
  return *it->second.name;
}

template <typename Fn>
void AddressBook::Cut(UnitMap& unit_map, ByteRange range, Fn&& on_piece) {
  std::map<int64_t, Owned>& map = unit_map.pieces;
  auto it = map.upper_bound(range.begin);
  if (it != map.begin()) --it;
  while (it != map.end() && it->first < range.end) {
    ByteRange piece{it->first, it->second.end};
    if (!piece.Overlaps(range)) {
      ++it;
      continue;
    }
    Owned owned = it->second;
    on_piece(owned.id, piece);
    it = map.erase(it);
    if (owned.id == kFree) --unit_map.free_pieces;
    // Keep the parts of the piece outside `range` for their owner.
    if (piece.begin < range.begin) {
      map[piece.begin] = Owned{range.begin, owned.id};
      if (owned.id == kFree) ++unit_map.free_pieces;
    }
    if (piece.end > range.end) {
      it = map.emplace(range.end, Owned{piece.end, owned.id}).first;
      if (owned.id == kFree) ++unit_map.free_pieces;
    }
  }
}

void AddressBook::CompactFree(UnitMap& unit_map) {
  const int64_t owned = static_cast<int64_t>(unit_map.pieces.size()) - unit_map.free_pieces;
  if (unit_map.free_pieces <= 2 * owned + 8) return;
  std::map<int64_t, Owned>& map = unit_map.pieces;
  for (auto it = map.begin(); it != map.end();) {
    auto next = std::next(it);
    if (it->second.id == kFree && next != map.end() && next->second.id == kFree && next->first == it->second.end) {
      it->second.end = next->second.end;
      map.erase(next);
      --unit_map.free_pieces;
      continue;
    }
    it = next;
  }
}

int64_t AddressBook::pieces(Tier space, int64_t unit) const {
  auto space_it = spaces_.find(space);
  if (space_it == spaces_.end()) return 0;
  const UnitMap* map = space_it->second.Find(unit);
  return map == nullptr ? 0 : static_cast<int64_t>(map->pieces.size());
}

void AddressBook::Claim(int64_t id, absl::Span<const int64_t> units, ByteRange range) {
  auto it = tensors_.find(id);
  VISA_CHECK(it != tensors_.end(), "claiming for an unknown tensor");
  Record& record = it->second;
  const Tier space = SpaceOf(record.tier);
  const int64_t shift = SpaceOffset(record.tier);
  ByteRange space_range{range.begin + shift, range.end + shift};
  record.claim = space_range;
  record.units.assign(units.begin(), units.end());
  Space& unit_maps = spaces_[space];
  // A program run again claims in every unit exactly the range the previous run's tensor owned:
  // the victim is looked up once, and its clobbers of consecutive units share one record.
  int64_t last_owner = 0;
  Record* last_victim = nullptr;
  auto clobber = [&](int64_t owner, int64_t unit) {
    if (owner == id || owner == kFree) return;
    if (owner != last_owner) {
      last_owner = owner;
      last_victim = &tensors_.at(owner);
    }
    std::vector<Clobber>& clobbers = last_victim->clobbers;
    if (!clobbers.empty()) {
      Clobber& previous = clobbers.back();
      if (previous.writer == id && previous.unit_end == unit && previous.victim == last_victim->claim &&
          previous.writer_range == space_range) {
        previous.unit_end = unit + 1;
        return;
      }
    }
    clobbers.push_back(Clobber{id, record.name, record.tier, unit, unit + 1, last_victim->claim, space_range});
  };
  for (int64_t unit : units) {
    VISA_CHECK(unit >= 0 && unit < kMaxUnits, "claiming in a unit the device cannot have");
    UnitMap& map = unit_maps.At(unit);
    if (auto exact = map.pieces.find(space_range.begin);
        exact != map.pieces.end() && exact->second.end == space_range.end) {
      if (exact->second.id == kFree) --map.free_pieces;
      clobber(exact->second.id, unit);
      exact->second.id = id;
      ++claims_in_place_;
      continue;
    }
    Cut(map, space_range, [&](int64_t owner, ByteRange) { clobber(owner, unit); });
    map.pieces[space_range.begin] = Owned{space_range.end, id};
    ++claims_inserted_;
  }
}

std::string AddressBook::Describe(int64_t id, int64_t unit, ByteRange space_range) const {
  const Record& record = tensors_.at(id);
  return Describe(*record.name, record.tier, unit, space_range);
}

std::string AddressBook::Describe(const std::string& name, Tier tier, int64_t unit, ByteRange space_range) {
  const int64_t shift = SpaceOffset(tier);
  return absl::StrFormat("tensor `%s` (%s %s, bytes [0x%x, 0x%x))", name, TierName(tier),
                         UnitName(SpaceOf(tier), unit), space_range.begin - shift, space_range.end - shift);
}

absl::Status AddressBook::CheckReadable(int64_t id, absl::Span<const int64_t> units,
                                        ByteRange range) const {
  auto it = tensors_.find(id);
  VISA_CHECK(it != tensors_.end(), "reading an unknown tensor");
  const Record& record = it->second;
  if (record.released) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Released tensor: tensor `", *record.name, "` was released; its bytes may hold other data"));
  }
  const int64_t shift = SpaceOffset(record.tier);
  ByteRange space_range{range.begin + shift, range.end + shift};
  std::vector<int64_t> sorted(units.begin(), units.end());
  std::sort(sorted.begin(), sorted.end());
  for (const Clobber& c : record.clobbers) {
    if (!c.writer_range.Overlaps(space_range)) continue;
    auto read = std::lower_bound(sorted.begin(), sorted.end(), c.unit);
    if (read == sorted.end() || *read >= c.unit_end) continue;
    const int64_t unit = *read;
    return absl::FailedPreconditionError(absl::StrCat(
        "Address Collision: addresses must not collide (manual, \"Execution Contexts\"): ",
        Describe(id, unit, c.victim), " was overwritten by ", Describe(*c.writer_name, c.writer_tier, unit, c.writer_range),
        ", so it can no longer be read; place the two tensors at non-overlapping addresses (or "
        "use Address::Any())"));
  }
  return absl::OkStatus();
}

void AddressBook::FreeOwnPieces(UnitMap& unit_map, int64_t id, ByteRange claim) {
  std::map<int64_t, Owned>& map = unit_map.pieces;
  auto it = map.upper_bound(claim.begin);
  if (it != map.begin()) --it;
  for (; it != map.end() && it->first < claim.end; ++it) {
    if (it->second.id != id || !ByteRange{it->first, it->second.end}.Overlaps(claim)) continue;
    // A piece reaching outside the claim (the tensor claimed another range before) keeps its
    // outer parts for the tensor, as the claim alone is released.
    if (it->first < claim.begin) {
      const int64_t end = it->second.end;
      it->second.end = claim.begin;
      it = map.emplace(claim.begin, Owned{end, id}).first;
    }
    if (it->second.end > claim.end) map.emplace(claim.end, Owned{it->second.end, id});
    it->second = Owned{std::min(it->second.end, claim.end), kFree};
    ++unit_map.free_pieces;
  }
  CompactFree(unit_map);
}

void AddressBook::Release(int64_t id) {
  auto it = tensors_.find(id);
  VISA_CHECK(it != tensors_.end(), "releasing an unknown tensor");
  Record& record = it->second;
  if (record.released) return;
  record.released = true;
  auto space_it = spaces_.find(SpaceOf(record.tier));
  if (space_it == spaces_.end()) return;
  for (int64_t unit : record.units) {
    if (unit < static_cast<int64_t>(space_it->second.units.size())) {
      FreeOwnPieces(space_it->second.units[unit], id, record.claim);
    }
  }
  // Keep only the name: long-running programs release many tensors.
  record.units = {};
  record.clobbers = {};
}

std::optional<int64_t> AddressBook::FindFree(Tier tier, absl::Span<const int64_t> units,
                                             int64_t bytes, int64_t alignment,
                                             int64_t limit) const {
  VISA_CHECK(alignment > 0, "alignment must be positive");
  const int64_t shift = SpaceOffset(tier);
  auto space_it = spaces_.find(SpaceOf(tier));
  int64_t candidate = 0;
  // Range checks that cannot wrap: `alignment` and `bytes` come from the caller.
  while (RangeWithin(candidate, bytes, limit)) {
    ByteRange want{candidate + shift, candidate + bytes + shift};
    int64_t next = -1;  // the end of the furthest overlapping owned range
    if (space_it != spaces_.end()) {
      for (int64_t unit : units) {
        const UnitMap* unit_map = space_it->second.Find(unit);
        if (unit_map == nullptr) continue;
        const std::map<int64_t, Owned>& map = unit_map->pieces;
        auto it = map.upper_bound(want.begin);
        if (it != map.begin()) --it;
        for (; it != map.end() && it->first < want.end; ++it) {
          if (it->second.id != kFree && ByteRange{it->first, it->second.end}.Overlaps(want)) {
            next = std::max(next, it->second.end - shift);
          }
        }
      }
    }
    if (next < 0) return candidate;
    const std::optional<int64_t> up = CheckedAdd(next, alignment - 1);
    if (!up) return std::nullopt;
    candidate = *up / alignment * alignment;
  }
  return std::nullopt;
}

std::vector<int64_t> AddressBook::OwnersOf(Tier tier, absl::Span<const int64_t> units, ByteRange range) const {
  std::vector<int64_t> owners;
  auto space_it = spaces_.find(SpaceOf(tier));
  if (space_it == spaces_.end()) return owners;
  const int64_t shift = SpaceOffset(tier);
  const ByteRange want{range.begin + shift, range.end + shift};
  for (int64_t unit : units) {
    const UnitMap* unit_map = space_it->second.Find(unit);
    if (unit_map == nullptr) continue;
    const std::map<int64_t, Owned>& map = unit_map->pieces;
    auto it = map.upper_bound(want.begin);
    if (it != map.begin()) --it;
    for (; it != map.end() && it->first < want.end; ++it) {
      if (it->second.id != kFree && ByteRange{it->first, it->second.end}.Overlaps(want)) owners.push_back(it->second.id);
    }
  }
  std::sort(owners.begin(), owners.end());
  owners.erase(std::unique(owners.begin(), owners.end()), owners.end());
  return owners;
}

}  // namespace visa
