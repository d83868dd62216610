// MpiSession: this process's place in an `mpirun` launch of visa (issue 32), and the exchanges
// between ranks with deadlines, so a rank that died, hung or recorded another program ends the
// run with an error naming the rank and the op instead of a hang.
//
// A launch is recognised by Open MPI's environment (OMPI_COMM_WORLD_SIZE) or a PMI launcher's
// (PMI_SIZE); without one, Launched() is null and nothing of MPI is ever called, so a plain
// `visa run` works as before. The chips of a device are shared out contiguously: with C chips on
// R ranks, rank r owns chips [r * C / R, (r + 1) * C / R).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace visa::mpi {

// The chips [first, first + count) of a device one rank owns.
struct ChipShare {
  int first = 0;
  int count = 0;
  bool Owns(int chip) const { return chip >= first && chip < first + count; }
};

// The share of `rank` among `ranks` of a `chips`-chip device (pure arithmetic, no MPI).
ChipShare ShareOf(int rank, int ranks, int chips);
// The rank that owns `chip`.
int OwnerOf(int chip, int ranks, int chips);

// What the exchanges moved (figures for docs/multi_process.md).
struct ExchangeStats {
  int64_t agreements = 0;   // ops whose text every rank compared
  int64_t sent = 0;         // chip-to-chip moves this rank sent to another
  int64_t received = 0;     // and received from another:
  int64_t bytes = 0;        // their payload
  double seconds = 0;       // in MPI_Recv once each arrived (not the wait for the sender)
  // With reporting on: FNV-1a over every op's output bytes (all chips), in op order, which a run
  // on one process and one on several ranks must share bit for bit.
  uint64_t output_digest = 0xcbf29ce484222325ull;
};

class Session {
 public:
  // The session of an mpirun launch (MPI initialised on the first call), or null when this
  // process was not launched by mpirun or the build has no MPI.
  static Session* Launched();

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  ChipShare Share(int chips) const { return ShareOf(rank_, ranks_, chips); }

  // Seconds an exchange waits for another rank before failing (VISA_MPI_TIMEOUT, default 600: an op may legitimately take minutes on the interpreter).
  double timeout_seconds() const { return timeout_seconds_; }
  void set_timeout_seconds(double seconds) { timeout_seconds_ = seconds; }

  // Every rank passes its hash of the same thing (`what`: "op 12 (pipeline main ...)"); fails on
  // every rank when one rank's differs or a rank does not answer in time, naming that rank.
  absl::Status Agree(uint64_t hash, absl::string_view what);
  // Point-to-point payloads of a chip-to-chip move (`what` names the op for errors).
  absl::Status Send(int to, absl::Span<const uint8_t> bytes, absl::string_view what);
  absl::StatusOr<std::vector<uint8_t>> Receive(int from, absl::string_view what);
  // MPI's own point-to-point bandwidth between ranks 0 and 1 for messages of rank 0's `bytes`
  // (bytes/s, the best of 5 rounds of `repeats` one-way sends after a warm-up), the reference the exchanges are measured
  // against; 0 on ranks other than 0 and 1. Every rank must call it.
  absl::StatusOr<double> PointToPointBandwidth(int64_t bytes, int repeats);

  ExchangeStats& stats() { return stats_; }
  // VISA_MPI_REPORT=1: the figures and the output digest are kept and printed by rank 0.
  bool reporting() const { return reporting_; }

  // Ends MPI: Finalize after a clean run, Abort (every rank stops) after a failed one, so that no
  // rank waits for one that gave up.
  void End(bool clean);

 private:
  Session(int rank, int ranks, double timeout_seconds, bool reporting)
      : rank_(rank), ranks_(ranks), timeout_seconds_(timeout_seconds), reporting_(reporting) {}

  int rank_;
  int ranks_;
  double timeout_seconds_;
  bool reporting_;
  ExchangeStats stats_;
};

// FNV-1a of text, the hash the ranks compare; FoldHash continues one over more bytes.
uint64_t TextHash(absl::string_view text);
uint64_t FoldHash(uint64_t hash, absl::Span<const uint8_t> bytes);

}  // namespace visa::mpi
