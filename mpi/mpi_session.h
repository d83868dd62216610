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
#include <memory>
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
  int64_t agreements = 0;   // ops whose text every rank compared (noted or agreed)
  int64_t round_trips = 0;  // of those, the agreements every rank waited for (Agree): one per op
                            // that exchanges data, per host read-back and at the end; the others
                            // were noted (Note) and compared at the next one
  int64_t sent = 0;         // chip-to-chip moves this rank sent to another
  int64_t received = 0;     // and received from another:
  int64_t bytes = 0;        // their payload
  double seconds = 0;       // in MPI_Recv once each arrived (not the wait for the sender)
  int64_t skipped = 0;      // ops this rank did not execute: they write only other ranks' chips
  int64_t split = 0;        // moves it ran for its own chips alone (mpi/chip_range_move.h)
  int64_t split_pipelines = 0;  // pipelines it ran for its own chips alone (mpi/chip_range_pipeline.h)
  int64_t pipeline_parts_made = 0, pipeline_parts_reused = 0;  // their per-chip parts: relabelled, or kept
  int64_t whole_pipelines = 0;  // pipelines over several ranks' chips it ran whole, their inputs gathered first
  int64_t gathers = 0;      // tensors whose chip parts every rank exchanged (host reads, relayouts)
  int64_t gathered_bytes = 0;  // the chip parts this rank received in them
  // With reporting on: FNV-1a over every op's output bytes, one per chip (each chip's part of every
  // op's output, in op order, kept by the rank that owns the chip) and one for host outputs (slot
  // kDigestSlots - 1). At the end of a run CombineDigests folds them, in chip order, into
  // output_digest, which a run on one process and one on several ranks must share bit for bit.
  static constexpr int kDigestSlots = 65;  // kMaxChips chips and the host
  uint64_t chip_digests[kDigestSlots] = {};
  bool kept[kDigestSlots] = {};  // the slots this rank folded into
  uint64_t output_digest = 0xcbf29ce484222325ull;
  // Folds `bytes` into slot `slot` (started at the FNV-1a offset basis on first use).
  void Fold(int slot, absl::Span<const uint8_t> bytes);
};

// A block of bytes one rank sends to another, or receives into, in an exchange of many at once.
struct Outgoing {
  int to;
  absl::Span<const uint8_t> bytes;
};
struct Incoming {
  int from;
  absl::Span<uint8_t> bytes;  // exactly as many bytes as the sender sends
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

  // Every rank passes its hash of the same thing (`what`: "op 12 (pipeline main ...)") and waits
  // for rank 0's verdict over it and every hash noted since the last agreement; fails on every rank
  // when one rank's differs (naming that rank and the first op where it does) or a rank does not
  // answer in time (naming the rank and this op). Every exchange of data is preceded by one.
  absl::Status Agree(uint64_t hash, absl::string_view what);
  // The same comparison without waiting: the hash goes to rank 0 (posted, nonblocking) and is
  // compared at the next Agree, which names `what` if it differs. For an op that exchanges no data,
  // so a rank runs on instead of meeting the others at every op.
  void Note(uint64_t hash, absl::string_view what);
  // Point-to-point payloads of a chip-to-chip move (`what` names the op for errors).
  absl::Status Send(int to, absl::Span<const uint8_t> bytes, absl::string_view what);
  absl::StatusOr<std::vector<uint8_t>> Receive(int from, absl::string_view what);
  // A chip move's payload sent without waiting: the send completes while this rank goes on (it is
  // tested at every agreement and waited for by Flush), so a rank that sends several moves posts
  // them all at once instead of one rendezvous per move.
  void Post(int to, std::vector<uint8_t> bytes);
  // Waits (against the deadline) for every posted send to complete.
  absl::Status Flush(absl::string_view what);
  // A payload received into `into`, which must be exactly the size sent.
  absl::Status ReceiveInto(int from, absl::Span<uint8_t> into, absl::string_view what);
  // Every send and receive of one op posted at once (nonblocking), then all waited for against
  // the deadline: the blocks of chips other ranks need.
  absl::Status ExchangeBlocks(absl::Span<const Outgoing> sends, absl::Span<const Incoming> receives,
                              absl::string_view what);
  // Every rank's digests of the chips it owns, folded in chip order into stats().output_digest on
  // every rank (a collective: every rank calls it once, at the end).
  absl::Status CombineDigests();
  // MPI's own point-to-point bandwidth between ranks 0 and 1 for messages of rank 0's `bytes`
  // (bytes/s, the best of 5 rounds of `repeats` one-way sends after a warm-up), the reference the exchanges are measured
  // against; 0 on ranks other than 0 and 1. Every rank must call it.
  absl::StatusOr<double> PointToPointBandwidth(int64_t bytes, int repeats);
  // The same for one message at a time, timed as the exchanges are: rank 1 sends one message of
  // `bytes`, rank 0 waits for it to arrive (MPI_Iprobe) and times its MPI_Recv into a buffer
  // already allocated; the best of 5. 0 on ranks other than 0. Every rank must call it.
  absl::StatusOr<double> SingleMessageBandwidth(int64_t bytes);

  ExchangeStats& stats() { return stats_; }
  // VISA_MPI_REPORT=1: the figures and the output digest are kept and printed by rank 0.
  bool reporting() const { return reporting_; }

  // Ends MPI: Finalize after a clean run, Abort (every rank stops) after a failed one, so that no
  // rank waits for one that gave up.
  void End(bool clean);

  ~Session();  // never run: the session lives as long as the process

 private:
  Session(int rank, int ranks, double timeout_seconds, bool reporting)
      : rank_(rank), ranks_(ranks), timeout_seconds_(timeout_seconds), reporting_(reporting) {}

  int rank_;
  int ranks_;
  double timeout_seconds_;
  bool reporting_;
  ExchangeStats stats_;
  // Frees the posted sends that completed (and so lets MPI progress them).
  void ForgetCompletedSends();
  // The byte count of the next data message from `from` once it has arrived, progressing this
  // rank's own sends while it waits; DeadlineExceeded naming the rank past the timeout.
  absl::StatusOr<int> AwaitMessage(int from, absl::string_view what);
  // Receives that message into `into` (its size), timed from its arrival as MPI's own figure is
  // (PointToPointBandwidth), and counts it.
  void ReceiveArrived(int from, absl::Span<uint8_t> into);
  struct Pending;  // a posted send and its buffer
  std::vector<std::shared_ptr<Pending>> pending_;  // shared_ptr: Pending is complete only in the .cc
  // The hashes noted and agreed since the last agreement, with their ops' names (every rank keeps
  // them: a verdict names the op by its place in this list), and how many were ever sent.
  struct Noted {
    uint64_t hash;
    std::string what;
  };
  std::vector<Noted> noted_;
  uint64_t sequence_ = 0;
  // Sends this rank's entry `noted_.back()` to rank 0 (`last`: the one an Agree waits on).
  void PostHash(bool last);
};

// FNV-1a of text, the hash the ranks compare; FoldHash continues one over more bytes.
uint64_t TextHash(absl::string_view text);
uint64_t FoldHash(uint64_t hash, absl::Span<const uint8_t> bytes);

}  // namespace visa::mpi
