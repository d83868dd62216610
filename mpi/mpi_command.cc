// MpiCommand: held-back output compared across ranks, printed by rank 0.
#include "mpi/mpi_command.h"

#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace visa::mpi {
namespace {

// The exchanges' bandwidth against MPI's own for messages of their mean size.
void Report(Session& session) {
  const ExchangeStats stats = session.stats();
  const int64_t mean = stats.received > 0 ? stats.bytes / stats.received : 0;
  absl::StatusOr<double> reference = session.PointToPointBandwidth(std::max<int64_t>(mean, 1), 20);
  if (session.rank() != 0) return;
  std::cerr << absl::StrFormat("mpi: %d ranks, %d ops agreed (%d round trips: the ranks waited for each other at ops "
                               "that exchange data, host read-backs and the end; the others noted); rank 0 sent %d "
                               "chip moves, received %d (%d bytes, %.6f s)\n",
                               session.ranks(), stats.agreements, stats.round_trips, stats.sent, stats.received,
                               stats.bytes, stats.seconds);
  std::cerr << absl::StrFormat("mpi: rank 0 skipped %d ops (they write only other ranks' chips), ran %d moves for its "
                               "own chips alone; %d tensors gathered across ranks, %d bytes received\n",
                               stats.skipped, stats.split, stats.gathers, stats.gathered_bytes);
  std::cerr << absl::StrFormat("mpi: rank 0 ran %d pipelines for its own chips alone (split; %d per-chip parts made, "
                               "%d run again as kept), %d over several ranks' chips whole (their inputs gathered)\n",
                               stats.split_pipelines, stats.pipeline_parts_made, stats.pipeline_parts_reused,
                               stats.whole_pipelines);
  std::cerr << absl::StrFormat("mpi: output digest %016x (every op's output bytes, all chips, in op order)\n",
                               stats.output_digest);
  if (stats.received > 0 && reference.ok() && *reference > 0) {
    const double ours = static_cast<double>(stats.bytes) / std::max(stats.seconds, 1e-12);
    std::cerr << absl::StrFormat("mpi: exchange %.1f MB/s, MPI point-to-point %.1f MB/s for %d-byte messages: %.0f %%\n",
                                 ours / 1e6, *reference / 1e6, mean, 100 * ours / *reference);
  }
}

}  // namespace

MpiCommand::MpiCommand() : session_(Session::Launched()) {
  if (session_ != nullptr) standard_output_ = std::cout.rdbuf(held_.rdbuf());
}

MpiCommand::~MpiCommand() {
  if (standard_output_ != nullptr) std::cout.rdbuf(standard_output_);
}

int MpiCommand::Finish(int exit_code) {
  if (session_ == nullptr) return exit_code;
  std::cout.flush();
  std::cout.rdbuf(standard_output_);
  standard_output_ = nullptr;
  const std::string output = held_.str();
  // Not the text: a sample's line may hold timings, which differ between ranks.
  absl::Status agreed = session_->Agree(TextHash(absl::StrCat(exit_code)), "the end (exit code)");
  // Each rank holds the digests of its own chips: folded together once every rank got here.
  if (agreed.ok() && session_->reporting()) agreed = session_->CombineDigests();
  if (session_->rank() == 0) std::cout << output << std::flush;
  if (!agreed.ok()) {
    std::cerr << "error: rank " << session_->rank() << ": " << agreed.message() << "\n" << std::flush;
    session_->End(/*clean=*/false);
    return 2;
  }
  if (session_->reporting()) Report(*session_);
  session_->End(/*clean=*/true);
  return exit_code;
}

}  // namespace visa::mpi
