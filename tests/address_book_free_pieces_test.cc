// AddressBook's free pieces: a released range stays on record as free so that claiming it again
// updates it in place; free pieces are free for Address::Any(), clobber nobody, and are merged
// before they can pile up.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/address_book.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

TEST(AddressBookFreePieces, AReleasedRangeClaimedAgainIsTakenOverInPlace) {
  AddressBook book;
  const int64_t first = book.Add("first", Tier::kDm);
  book.Claim(first, {0, 1, 2}, {64, 128});
  EXPECT_EQ(book.claims_inserted(), 3);
  book.Forget(first);
  EXPECT_EQ(book.pieces(Tier::kDm, 1), 1);  // kept, free
  const int64_t second = book.Add("second", Tier::kDm);
  book.Claim(second, {0, 1, 2}, {64, 128});
  EXPECT_EQ(book.claims_inserted(), 3);
  EXPECT_EQ(book.claims_in_place(), 3);
  EXPECT_EQ(book.pieces(Tier::kDm, 1), 1);
  EXPECT_TRUE(book.CheckReadable(second, {0, 1, 2}, {64, 128}).ok());
  // Owned again: Address::Any() looks past it.
  EXPECT_EQ(book.FindFree(Tier::kDm, {1}, 64, 64, 1024), 0);
  EXPECT_EQ(book.FindFree(Tier::kDm, {1}, 128, 64, 1024), 128);
}

TEST(AddressBookFreePieces, FreePiecesAreFreeAndClobberNobody) {
  AddressBook book;
  const int64_t gone = book.Add("gone", Tier::kDm);
  book.Claim(gone, {0}, {0, 256});
  book.Release(gone);
  EXPECT_EQ(book.FindFree(Tier::kDm, {0}, 256, 64, 1024), 0);
  // A claim cutting into the free piece leaves the rest free.
  const int64_t middle = book.Add("middle", Tier::kDm);
  book.Claim(middle, {0}, {64, 128});
  EXPECT_EQ(book.FindFree(Tier::kDm, {0}, 64, 64, 1024), 0);
  EXPECT_EQ(book.FindFree(Tier::kDm, {0}, 128, 64, 1024), 128);
  const int64_t left = book.Add("left", Tier::kDm);
  book.Claim(left, {0}, {0, 64});
  EXPECT_TRUE(book.CheckReadable(middle, {0}, {64, 128}).ok());
  EXPECT_TRUE(book.CheckReadable(left, {0}, {0, 64}).ok());
  // The released tensor itself still cannot be read.
  EXPECT_THAT(book.CheckReadable(gone, {0}, {0, 256}).message(), HasSubstr("Released tensor"));
}

TEST(AddressBookFreePieces, AClaimOverAFreePieceStillClobbersTheOwnersItOverlaps) {
  AddressBook book;
  const int64_t gone = book.Add("gone", Tier::kDm);
  book.Claim(gone, {0}, {0, 64});
  book.Release(gone);
  const int64_t victim = book.Add("victim", Tier::kDm);
  book.Claim(victim, {0}, {64, 128});
  const int64_t writer = book.Add("writer", Tier::kDm);
  book.Claim(writer, {0}, {32, 96});
  absl::Status read = book.CheckReadable(victim, {0}, {64, 128});
  EXPECT_THAT(read.message(), HasSubstr("Address Collision"));
  EXPECT_THAT(read.message(), HasSubstr("overwritten by tensor `writer`"));
}

TEST(AddressBookFreePieces, ReleasingOnlyFreesTheTensorsOwnBytes) {
  AddressBook book;
  const int64_t big = book.Add("big", Tier::kDm);
  book.Claim(big, {0}, {0, 256});
  const int64_t inner = book.Add("inner", Tier::kDm);
  book.Claim(inner, {0}, {64, 128});
  book.Release(big);
  // [0, 64) and [128, 256) are free, `inner` keeps [64, 128).
  EXPECT_EQ(book.FindFree(Tier::kDm, {0}, 64, 64, 1024), 0);
  EXPECT_EQ(book.FindFree(Tier::kDm, {0}, 128, 64, 1024), 128);
  EXPECT_TRUE(book.CheckReadable(inner, {0}, {64, 128}).ok());
}

TEST(AddressBookFreePieces, FreePiecesOfRangesNeverClaimedAgainDoNotPileUp) {
  AddressBook book;
  const int64_t keep = book.Add("keep", Tier::kDm);
  book.Claim(keep, {0}, {1 << 20, (1 << 20) + 64});
  // Ever new ranges, each released at once: adjacent free pieces get merged.
  for (int64_t k = 0; k < 10000; ++k) {
    const int64_t id = book.Add("t", Tier::kDm);
    book.Claim(id, {0}, {k * 16, k * 16 + 16});
    book.Forget(id);
  }
  EXPECT_LE(book.pieces(Tier::kDm, 0), 16);
  EXPECT_EQ(book.FindFree(Tier::kDm, {0}, 1 << 20, 64, 1 << 21), 0);
  EXPECT_EQ(book.FindFree(Tier::kDm, {0}, (1 << 20) + 1, 64, 1 << 22), (1 << 20) + 64);
}

}  // namespace
}  // namespace visa
