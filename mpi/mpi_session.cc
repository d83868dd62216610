// MpiSession over Open MPI: nonblocking sends and receives polled against a deadline.
#include "mpi/mpi_session.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"

namespace visa::mpi {
namespace {

// One tag per kind of message: messages of one kind from one rank arrive in order, and a rank that
// ran ahead to another kind of exchange is never mistaken for an answer.
constexpr int kAgreeTag = 101;
constexpr int kVerdictTag = 102;
constexpr int kDataTag = 103;
constexpr int kBenchTag = 104;
constexpr int kBlockTag = 105;

using Clock = std::chrono::steady_clock;

bool LaunchedByMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

double TimeoutFromEnvironment() {
  double seconds = 600;
  if (const char* text = std::getenv("VISA_MPI_TIMEOUT"); text != nullptr) {
    double parsed = 0;
    if (absl::SimpleAtod(text, &parsed) && parsed > 0) seconds = parsed;
  }
  return seconds;
}

// The pause between two polls of a wait. The first polls only yield (an answer usually comes
// within microseconds when the other rank is running); later ones sleep, doubling from 16 us to
// kLongestPause: on a machine with fewer cores than ranks (CI runs --oversubscribe, and this
// project's 2 cores are shared) a rank that spins on sched_yield keeps a core the rank it waits
// for needs, and every wait became as long as the scheduler's slice. Before this, each wait
// yielded only (docs/multi_process.md, "Time per decode token").
class Backoff {
 public:
  void Pause() {
    if (++polls_ <= kYields) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(pause_);
    pause_ = std::min(pause_ * 2, kLongestPause);
  }

 private:
  static constexpr int kYields = 64;
  static constexpr std::chrono::microseconds kLongestPause{500};
  int polls_ = 0;
  std::chrono::microseconds pause_{16};
};

Clock::time_point DeadlineIn(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Polls `request` until it completes or `timeout` seconds pass; on timeout the request is
// cancelled and false returned.
bool WaitUntil(MPI_Request& request, double timeout) {
  const Clock::time_point deadline = DeadlineIn(timeout);
  Backoff backoff;
  int done = 0;
  while (true) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if (Clock::now() > deadline) break;
    backoff.Pause();
  }
  MPI_Cancel(&request);
  MPI_Request_free(&request);
  return false;
}

absl::Status NoAnswer(int rank, absl::string_view what, double timeout) {
  return absl::DeadlineExceededError(absl::StrFormat(
      "MPI: rank %d did not answer at %s within %g s (it died, hung or ran another program; VISA_MPI_TIMEOUT "
      "sets the wait)", rank, what, timeout));
}

}  // namespace

Session* Session::Launched() {
  static Session* session = [] () -> Session* {
    if (!LaunchedByMpirun()) return nullptr;
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) MPI_Init(nullptr, nullptr);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const char* report = std::getenv("VISA_MPI_REPORT");
    return new Session(rank, ranks, TimeoutFromEnvironment(), report != nullptr && std::string(report) == "1");  // lives as long as the process
  }();
  return session;
}

struct Session::Pending {
  MPI_Request request;
  int to;
  std::vector<uint8_t> bytes;
};

// A hash on its way to rank 0: its place in the sender's sequence, the hash, and whether it is
// the one an Agree waits on.
struct HashMessage {
  uint64_t sequence;
  uint64_t hash;
  uint64_t last;
};

void Session::PostHash(bool last) {
  const HashMessage message{sequence_, noted_.back().hash, last ? 1u : 0u};
  std::vector<uint8_t> bytes(sizeof(message));
  std::memcpy(bytes.data(), &message, sizeof(message));
  auto pending = std::make_shared<Pending>(Pending{MPI_REQUEST_NULL, 0, std::move(bytes)});
  MPI_Isend(pending->bytes.data(), static_cast<int>(pending->bytes.size()), MPI_BYTE, 0, kAgreeTag, MPI_COMM_WORLD,
            &pending->request);
  pending_.push_back(std::move(pending));
}

void Session::Note(uint64_t hash, absl::string_view what) {
  ++stats_.agreements;
  if (ranks_ == 1) return;
  noted_.push_back({hash, std::string(what)});
  ++sequence_;
  if (rank_ != 0) PostHash(/*last=*/false);
  // Rank 0 reads the others' hashes at the next Agree; every rank frees its completed sends.
  if (pending_.size() >= 64) ForgetCompletedSends();
}

absl::Status Session::Agree(uint64_t hash, absl::string_view what) {
  ++stats_.agreements;
  ForgetCompletedSends();
  if (ranks_ == 1) return absl::OkStatus();
  ++stats_.round_trips;
  noted_.push_back({hash, std::string(what)});
  ++sequence_;
  // Rank 0 reads every rank's hashes since the last agreement, in order (one tag, one sender: they
  // arrive in the order sent), and answers every rank with a verdict: {0, -} all agree,
  // {r + 1, i} rank r differs first at entry i, {-(r + 1), -} rank r did not answer.
  int64_t verdict[2] = {0, 0};
  const int64_t entries = static_cast<int64_t>(noted_.size());
  if (rank_ == 0) {
    for (int from = 1; from < ranks_ && verdict[0] == 0; ++from) {
      for (int64_t i = 0; i < entries; ++i) {
        HashMessage theirs{};
        MPI_Request request;
        MPI_Irecv(&theirs, sizeof(theirs), MPI_BYTE, from, kAgreeTag, MPI_COMM_WORLD, &request);
        if (!WaitUntil(request, timeout_seconds_)) {
          verdict[0] = -(from + 1);
          break;
        }
        const bool last = i + 1 == entries;
        if (theirs.hash != noted_[static_cast<size_t>(i)].hash || (theirs.last != 0) != last) {
          verdict[0] = from + 1;
          verdict[1] = i;
          // The rest of its hashes to its own agreement are read (and dropped), so a later
          // exchange starts in step (the sessions' tests go on after a difference).
          while (theirs.last == 0) {
            MPI_Irecv(&theirs, sizeof(theirs), MPI_BYTE, from, kAgreeTag, MPI_COMM_WORLD, &request);
            if (!WaitUntil(request, timeout_seconds_)) break;
          }
          break;
        }
      }
    }
    for (int to = 1; to < ranks_; ++to) {
      MPI_Request request;
      MPI_Isend(verdict, 2, MPI_INT64_T, to, kVerdictTag, MPI_COMM_WORLD, &request);
      WaitUntil(request, timeout_seconds_ / ranks_);  // a rank that is gone cannot block the rest
    }
  } else {
    PostHash(/*last=*/true);
    MPI_Request answer;
    MPI_Irecv(verdict, 2, MPI_INT64_T, 0, kVerdictTag, MPI_COMM_WORLD, &answer);
    if (!WaitUntil(answer, timeout_seconds_)) {
      noted_.clear();
      return NoAnswer(0, what, timeout_seconds_);
    }
    ForgetCompletedSends();  // answered, so rank 0 has them
  }
  std::string differs_at;
  if (verdict[0] > 0 && verdict[1] >= 0 && verdict[1] < entries) differs_at = noted_[static_cast<size_t>(verdict[1])].what;
  noted_.clear();
  if (verdict[0] > 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "MPI: rank %d recorded a different program from rank 0's at %s (every rank must run the same program)",
        verdict[0] - 1, differs_at.empty() ? std::string(what) : differs_at));
  }
  if (verdict[0] < 0) return NoAnswer(static_cast<int>(-verdict[0] - 1), what, timeout_seconds_);
  return absl::OkStatus();
}

absl::Status Session::Send(int to, absl::Span<const uint8_t> bytes, absl::string_view what) {
  MPI_Request request;
  MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, kDataTag, MPI_COMM_WORLD, &request);
  if (!WaitUntil(request, timeout_seconds_)) return NoAnswer(to, what, timeout_seconds_);
  ++stats_.sent;
  return absl::OkStatus();
}

absl::StatusOr<int> Session::AwaitMessage(int from, absl::string_view what) {
  const Clock::time_point deadline = DeadlineIn(timeout_seconds_);
  Backoff backoff;
  int arrived = 0;
  MPI_Status status;
  while (true) {
    MPI_Iprobe(from, kDataTag, MPI_COMM_WORLD, &arrived, &status);
    if (arrived) break;
    if (Clock::now() > deadline) return NoAnswer(from, what, timeout_seconds_);
    ForgetCompletedSends();  // progress this rank's own sends while it waits (two ranks may swap chips)
    backoff.Pause();
  }
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  return count;
}

void Session::ReceiveArrived(int from, absl::Span<uint8_t> into) {
  // Timed from the message's arrival (before it the sender was still computing), into a buffer
  // already allocated.
  const Clock::time_point arrived_at = Clock::now();
  MPI_Recv(into.data(), static_cast<int>(into.size()), MPI_BYTE, from, kDataTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  ++stats_.received;
  stats_.bytes += static_cast<int64_t>(into.size());
  stats_.seconds += std::chrono::duration<double>(Clock::now() - arrived_at).count();
}

absl::StatusOr<std::vector<uint8_t>> Session::Receive(int from, absl::string_view what) {
  ASSIGN_OR_RETURN(const int count, AwaitMessage(from, what));
  std::vector<uint8_t> bytes(static_cast<size_t>(count));
  ReceiveArrived(from, absl::MakeSpan(bytes));
  return bytes;
}

absl::StatusOr<double> Session::PointToPointBandwidth(int64_t bytes, int repeats) {
  if (ranks_ < 2) return 0.0;
  MPI_Bcast(&bytes, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);  // rank 0's size for everyone
  if (rank_ > 1) return 0.0;
  std::vector<uint8_t> buffer(static_cast<size_t>(bytes), 1);
  const int count = static_cast<int>(bytes);
  auto round = [&](int sends) {
    for (int i = 0; i < sends; ++i) {
      if (rank_ == 0) {
        MPI_Send(buffer.data(), count, MPI_BYTE, 1, kBenchTag, MPI_COMM_WORLD);
      } else {
        MPI_Recv(buffer.data(), count, MPI_BYTE, 0, kBenchTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    }
    uint8_t done = 0;  // the receiver has everything when rank 0 hears back
    if (rank_ == 0) {
      MPI_Recv(&done, 1, MPI_BYTE, 1, kBenchTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Send(&done, 1, MPI_BYTE, 0, kBenchTag, MPI_COMM_WORLD);
    }
  };
  round(2);  // warm-up: connections and registration
  double best = 0;  // the best of 5 rounds: the cores are shared, and a round may be descheduled
  for (int attempt = 0; attempt < 5; ++attempt) {
    const Clock::time_point start = Clock::now();
    round(repeats);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::max(best, static_cast<double>(bytes) * repeats / seconds);
  }
  return best;
}

Session::~Session() = default;

void Session::ForgetCompletedSends() {
  std::erase_if(pending_, [](const std::shared_ptr<Pending>& p) {
    int done = 0;
    MPI_Test(&p->request, &done, MPI_STATUS_IGNORE);
    return done != 0;
  });
}

void Session::Post(int to, std::vector<uint8_t> bytes) {
  auto pending = std::make_shared<Pending>(Pending{MPI_REQUEST_NULL, to, std::move(bytes)});
  MPI_Isend(pending->bytes.data(), static_cast<int>(pending->bytes.size()), MPI_BYTE, to, kDataTag, MPI_COMM_WORLD,
            &pending->request);
  ++stats_.sent;
  pending_.push_back(std::move(pending));
}

absl::Status Session::Flush(absl::string_view what) {
  for (std::shared_ptr<Pending>& p : pending_) {
    if (!WaitUntil(p->request, timeout_seconds_)) {
      const int to = p->to;
      pending_.clear();
      return NoAnswer(to, what, timeout_seconds_);
    }
  }
  pending_.clear();
  return absl::OkStatus();
}

absl::Status Session::ReceiveInto(int from, absl::Span<uint8_t> into, absl::string_view what) {
  ASSIGN_OR_RETURN(const int count, AwaitMessage(from, what));
  if (count != static_cast<int64_t>(into.size())) {
    return absl::InternalError(absl::StrCat("MPI: at ", what, " rank ", from, " sent ", count, " bytes, ",
                                            into.size(), " expected"));
  }
  ReceiveArrived(from, into);
  return absl::OkStatus();
}

absl::Status Session::ExchangeBlocks(absl::Span<const Outgoing> sends, absl::Span<const Incoming> receives,
                                     absl::string_view what) {
  std::vector<MPI_Request> requests;
  std::vector<int> peers;
  for (const Incoming& in : receives) {
    requests.emplace_back();
    MPI_Irecv(in.bytes.data(), static_cast<int>(in.bytes.size()), MPI_BYTE, in.from, kBlockTag, MPI_COMM_WORLD,
              &requests.back());
    peers.push_back(in.from);
  }
  for (const Outgoing& out : sends) {
    requests.emplace_back();
    MPI_Isend(out.bytes.data(), static_cast<int>(out.bytes.size()), MPI_BYTE, out.to, kBlockTag, MPI_COMM_WORLD,
              &requests.back());
    peers.push_back(out.to);
  }
  const Clock::time_point deadline = DeadlineIn(timeout_seconds_);
  Backoff backoff;
  while (true) {
    int done = 0;
    MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (done) break;
    if (Clock::now() > deadline) {
      int late = -1;
      for (size_t i = 0; i < requests.size(); ++i) {
        if (requests[i] == MPI_REQUEST_NULL) continue;
        if (late < 0) late = peers[i];
        MPI_Cancel(&requests[i]);
        MPI_Request_free(&requests[i]);
      }
      return NoAnswer(late, what, timeout_seconds_);
    }
    backoff.Pause();
  }
  ++stats_.gathers;
  for (const Incoming& in : receives) stats_.gathered_bytes += static_cast<int64_t>(in.bytes.size());
  return absl::OkStatus();
}

absl::Status Session::CombineDigests() {
  uint64_t mine[ExchangeStats::kDigestSlots] = {};
  uint64_t all[ExchangeStats::kDigestSlots] = {};
  for (int slot = 0; slot < ExchangeStats::kDigestSlots; ++slot) {
    // The host slot is the same on every rank: rank 0's counts.
    const bool counts = stats_.kept[slot] && (slot + 1 < ExchangeStats::kDigestSlots || rank_ == 0);
    mine[slot] = counts ? stats_.chip_digests[slot] : 0;
  }
  if (MPI_Allreduce(mine, all, ExchangeStats::kDigestSlots, MPI_UINT64_T, MPI_BOR, MPI_COMM_WORLD) != MPI_SUCCESS) {
    return absl::InternalError("MPI: combining the output digests failed");
  }
  stats_.output_digest = 0xcbf29ce484222325ull;
  stats_.output_digest = FoldHash(stats_.output_digest, absl::Span<const uint8_t>(
                                                            reinterpret_cast<const uint8_t*>(all), sizeof(all)));
  return absl::OkStatus();
}

absl::StatusOr<double> Session::SingleMessageBandwidth(int64_t bytes) {
  if (ranks_ < 2) return 0.0;
  MPI_Bcast(&bytes, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);  // rank 0's size for everyone
  if (rank_ > 1) return 0.0;
  std::vector<uint8_t> buffer(static_cast<size_t>(bytes), 1);
  const int count = static_cast<int>(bytes);
  double best = 0;
  for (int attempt = 0; attempt < 6; ++attempt) {  // the first is a warm-up
    if (rank_ == 1) {
      MPI_Send(buffer.data(), count, MPI_BYTE, 0, kBenchTag, MPI_COMM_WORLD);
      continue;
    }
    int arrived = 0;
    MPI_Status status;
    while (!arrived) MPI_Iprobe(1, kBenchTag, MPI_COMM_WORLD, &arrived, &status);
    const Clock::time_point start = Clock::now();
    MPI_Recv(buffer.data(), count, MPI_BYTE, 1, kBenchTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (attempt > 0) best = std::max(best, static_cast<double>(bytes) / seconds);
  }
  return rank_ == 0 ? best : 0.0;
}

void Session::End(bool clean) {
  if (clean) {
    (void)Flush("the end");  // the posted sends complete before MPI ends
    MPI_Finalize();
  } else {
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

}  // namespace visa::mpi
