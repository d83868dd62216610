// MpiSession across real ranks (run by CTest under `mpiexec -np 2`): agreement, a rank that
// differs or is late named in the error, point-to-point payloads. Without mpirun every test skips.
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "mpi/mpi_session.h"

namespace visa::mpi {
namespace {

Session* TwoRanks() {
  Session* session = Session::Launched();
  if (session == nullptr || session->ranks() != 2) return nullptr;
  return session;
}

TEST(MpiSession, RanksThatAgreePass) {
  Session* session = TwoRanks();
  if (session == nullptr) GTEST_SKIP() << "needs mpiexec -np 2";
  EXPECT_TRUE(session->Agree(TextHash("op 0"), "op 0").ok());
}

TEST(MpiSession, ARankWithAnotherProgramIsNamedWithTheOp) {
  Session* session = TwoRanks();
  if (session == nullptr) GTEST_SKIP() << "needs mpiexec -np 2";
  absl::Status status = session->Agree(TextHash(session->rank() == 1 ? "op 3: dma" : "op 3: pipeline"), "op 3 (x)");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("rank 1 recorded a different program"), absl::string_view::npos) << status;
  EXPECT_NE(status.message().find("op 3 (x)"), absl::string_view::npos) << status;
}

// Ops that exchange nothing are noted, not waited for: their hashes are compared at the next
// agreement, one round trip for all of them.
TEST(MpiSession, NotedOpsAreComparedAtTheNextAgreementInOneRoundTrip) {
  Session* session = TwoRanks();
  if (session == nullptr) GTEST_SKIP() << "needs mpiexec -np 2";
  const ExchangeStats before = session->stats();
  for (int op = 0; op < 3; ++op) session->Note(TextHash(absl::StrCat("op ", op)), absl::StrCat("op ", op));
  EXPECT_TRUE(session->Agree(TextHash("op 3"), "op 3").ok());
  EXPECT_EQ(session->stats().agreements - before.agreements, 4);
  EXPECT_EQ(session->stats().round_trips - before.round_trips, 1);
}

TEST(MpiSession, ANotedOpThatDiffersIsNamedAtTheNextAgreement) {
  Session* session = TwoRanks();
  if (session == nullptr) GTEST_SKIP() << "needs mpiexec -np 2";
  session->Note(TextHash("op 20: dma"), "op 20 (a)");
  session->Note(TextHash(session->rank() == 1 ? "op 21: dma" : "op 21: pipeline"), "op 21 (b)");
  session->Note(TextHash("op 22: dma"), "op 22 (c)");
  absl::Status status = session->Agree(TextHash("op 23: dma"), "op 23 (d)");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("rank 1 recorded a different program from rank 0's at op 21 (b)"),
            absl::string_view::npos) << status;
  EXPECT_TRUE(session->Agree(TextHash("after"), "after").ok());  // the ranks meet again, in step
}

// A rank that stops noting (another program: it reached an agreement where rank 0 notes) is named
// at the first op where their hashes part.
TEST(MpiSession, ARankThatAgreesWhereAnotherNotesIsNamed) {
  Session* session = TwoRanks();
  if (session == nullptr) GTEST_SKIP() << "needs mpiexec -np 2";
  absl::Status status;
  if (session->rank() == 0) {
    session->Note(TextHash("op 30"), "op 30 (e)");
    status = session->Agree(TextHash("op 31"), "op 31 (f)");
  } else {
    status = session->Agree(TextHash("op 30"), "op 30 (e)");
  }
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("rank 1 recorded a different program from rank 0's at op 30 (e)"),
            absl::string_view::npos) << status;
  EXPECT_TRUE(session->Agree(TextHash("after"), "after").ok());
}

TEST(MpiSession, PayloadsArriveWhole) {
  Session* session = TwoRanks();
  if (session == nullptr) GTEST_SKIP() << "needs mpiexec -np 2";
  std::vector<uint8_t> payload(100000);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7);
  if (session->rank() == 0) {
    EXPECT_TRUE(session->Send(1, payload, "op 5").ok());
  } else {
    absl::StatusOr<std::vector<uint8_t>> got = session->Receive(0, "op 5");
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, payload);
  }
}

TEST(MpiSession, AReceiveNobodySendsTimesOutNamingTheRank) {
  Session* session = TwoRanks();
  if (session == nullptr) GTEST_SKIP() << "needs mpiexec -np 2";
  session->set_timeout_seconds(0.5);
  if (session->rank() == 1) {
    absl::StatusOr<std::vector<uint8_t>> got = session->Receive(0, "op 9 (dma)");
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded);
    EXPECT_NE(got.status().message().find("rank 0 did not answer at op 9 (dma)"), absl::string_view::npos)
        << got.status();
  }
  session->set_timeout_seconds(60);
  EXPECT_TRUE(session->Agree(TextHash("after"), "after").ok());  // the ranks meet again
}

TEST(MpiSession, PostedPayloadsArriveWholeAndInOrder) {
  Session* session = TwoRanks();
  if (session == nullptr) GTEST_SKIP() << "needs mpiexec -np 2";
  std::vector<uint8_t> first(200000, 1), second(300000, 2);  // above the eager limit: rendezvous
  if (session->rank() == 0) {
    session->Post(1, first);
    session->Post(1, second);
    EXPECT_TRUE(session->Flush("op 6").ok());
  } else {
    std::vector<uint8_t> a(first.size()), b(second.size());
    ASSERT_TRUE(session->ReceiveInto(0, absl::MakeSpan(a), "op 6").ok());
    ASSERT_TRUE(session->ReceiveInto(0, absl::MakeSpan(b), "op 6").ok());
    EXPECT_EQ(a, first);
    EXPECT_EQ(b, second);
  }
  EXPECT_TRUE(session->Agree(TextHash("after"), "after").ok());
}

TEST(MpiSession, BlocksSwapBothWaysAtOnce) {
  Session* session = TwoRanks();
  if (session == nullptr) GTEST_SKIP() << "needs mpiexec -np 2";
  const int other = 1 - session->rank();
  std::vector<uint8_t> mine(100000, static_cast<uint8_t>(10 + session->rank())), theirs(100000);
  const Outgoing send{other, mine};
  const Incoming receive{other, absl::MakeSpan(theirs)};
  absl::Status status = session->ExchangeBlocks({&send, 1}, {&receive, 1}, "op 10");
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(theirs, std::vector<uint8_t>(100000, static_cast<uint8_t>(10 + other)));
}

TEST(MpiSession, ABlockNobodySendsTimesOutNamingTheRank) {
  Session* session = TwoRanks();
  if (session == nullptr) GTEST_SKIP() << "needs mpiexec -np 2";
  session->set_timeout_seconds(0.5);
  if (session->rank() == 1) {
    std::vector<uint8_t> block(64);
    const Incoming receive{0, absl::MakeSpan(block)};
    absl::Status status = session->ExchangeBlocks({}, {&receive, 1}, "op 11 (host read-back)");
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
    EXPECT_NE(status.message().find("rank 0 did not answer at op 11 (host read-back)"), absl::string_view::npos)
        << status;
  }
  session->set_timeout_seconds(60);
  EXPECT_TRUE(session->Agree(TextHash("after"), "after").ok());
}

TEST(MpiSession, APayloadOfAnotherSizeIsAnError) {
  Session* session = TwoRanks();
  if (session == nullptr) GTEST_SKIP() << "needs mpiexec -np 2";
  if (session->rank() == 0) {
    session->Post(1, std::vector<uint8_t>(10, 3));
    EXPECT_TRUE(session->Flush("op 12").ok());
  } else {
    std::vector<uint8_t> into(12);
    absl::Status status = session->ReceiveInto(0, absl::MakeSpan(into), "op 12 (dma)");
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find("rank 0 sent 10 bytes, 12 expected"), absl::string_view::npos) << status;
  }
  EXPECT_TRUE(session->Agree(TextHash("after"), "after").ok());
}

// Last: the late rank's hash stays unread on rank 0, so no agreement may follow.
TEST(MpiSession, ALateRankIsNamedNotWaitedFor) {
  Session* session = TwoRanks();
  if (session == nullptr) GTEST_SKIP() << "needs mpiexec -np 2";
  session->set_timeout_seconds(1);
  if (session->rank() == 1) std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = session->Agree(TextHash("op 7"), "op 7 (late)");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("rank 1 did not answer at op 7 (late)"), absl::string_view::npos) << status;
  if (session->rank() == 0) {
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5);
  }
}

}  // namespace
}  // namespace visa::mpi

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  visa::mpi::Session* session = visa::mpi::Session::Launched();
  const int failed = RUN_ALL_TESTS();
  if (session != nullptr) session->End(/*clean=*/true);
  return failed;
}
