// MpiBackend: runs a program's ops under an mpirun launch (issue 32). Every rank records the same
// program; the ranks compare a hash of each op's text (a rank that recorded another program, or
// stopped, is named with the op): they wait for each other's only before an op that exchanges
// data (and a host read-back); the other ops' hashes are posted and compared at the next wait.
//
// Each rank executes the ops that write its own chips (mpi::ShareOf): an op whose output lies
// only on chips other ranks own is skipped here (the executor still marks it written, so the
// uninitialized-read tracking stays that of one process), so those chips' pages are never
// committed on this rank. An op is SPMD over chips unless it moves data between them, so a
// rank's copy of another rank's chip may be stale; the moves that read one are exchanged first:
// - a move from one chip to another (a chip shuffle's moves): the source chip's owner posts its
//   bytes (MPI_Isend, not waited for) and the destination's owner writes them straight into the
//   destination chip, in place of the move (it keeps no copy of the other rank's chip);
// - any other move that reads chips of several ranks (a relayout across chips), and every host
//   read-back (runtime/host_read_hook.h): each owner sends its chips' part of the tensor read to
//   every other rank, all blocks of the op at once, nonblocking.
// A move between two tensors on every chip that keeps each element on its chip (staging HBM into
// DM, DM back to HBM, into HBM or SRAM) runs only this rank's chips' parts (mpi/chip_range_move.h).
// A pipeline over several ranks' chips that is SPMD over the chips runs only this rank's chips'
// parts on the JIT (mpi/chip_range_pipeline.h); any other such pipeline, and every one on the
// interpreter (whose parts fail on a broadcast fetch), first gathers the other chips of what it
// reads from their owners and runs whole, so it computes what one process does (a whole pipeline
// on another rank's stale SRAM could fail a value check: a Branch Vrf's execution ids). See
// docs/multi_process.md, "What is missing".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mpi/chip_range_pipeline.h"
#include "mpi/mpi_session.h"
#include "runtime/backend.h"
#include "runtime/host_tensor.h"

namespace visa::mpi {

class MpiBackend : public Backend {
 public:
  // Installs the host read-back gather (runtime/host_read_hook.h) for as long as it lives.
  MpiBackend(Backend& inner, Session& session);
  ~MpiBackend() override;
  MpiBackend(const MpiBackend&) = delete;
  MpiBackend& operator=(const MpiBackend&) = delete;

  const char* name() const override { return inner_.name(); }
  bool executes() const override { return inner_.executes(); }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override;
  absl::Status Run(const DmaOp& op, const DmaTensors& tensors) override;

  // Whether SPMD pipelines run for this rank's chips alone (mpi/chip_range_pipeline.h), on either
  // backend. On by default (VISA_MPI_SPLIT_PIPELINES=0 turns it off: every pipeline over several
  // ranks' chips then gathers its inputs and runs whole, as before the split). Split, the SRAM
  // pages a rank commits divide by the ranks as its HBM does (docs/multi_process.md). `visa check`
  // turns it off on both backends: it compares their outputs on every chip.
  void set_split_pipelines(bool split) { split_pipelines_ = split; }

  int64_t ops() const { return ops_; }
  // Ops this rank skipped because they write only other ranks' chips.
  int64_t skipped() const { return skipped_; }

  // Every chip part of `tensor` this rank does not own, from its owner (every rank calls it for
  // the same tensor: each sends its own chips' parts to all others). `what` names the op.
  absl::Status GatherChips(const DeviceTensor& tensor, const std::string& what);

 private:
  // Compares this op's text across ranks (`text` is OpText of the op): waiting for every rank
  // (Session::Agree) when the op `exchanges` data, else noted and compared at the next wait.
  absl::Status AgreeOn(const std::string& text, bool exchanges);
  // A read of a move that other ranks' chips take part in: a chip move from `from_chip` to
  // `to_chip` (the source's owner sends it to the destination's), or (-1, -1) a tensor whose chip
  // parts every rank gathers.
  struct Read {
    const DeviceTensor* tensor;
    int from_chip, to_chip;
  };
  // The reads of the move to exchange (see the top comment): the same on every rank.
  absl::StatusOr<std::vector<Read>> ReadsToExchange(const DmaOp& op, const DmaTensors& tensors) const;
  // Brings them to this rank; a chip move's source chip, on its destination's owner, as `received`.
  absl::Status Exchange(const std::vector<Read>& reads, const std::string& what, std::optional<HostTensor>& received);
  // The source chip's bytes from its owner to the destination chip's owner, which gets them (in
  // the layout of the source's own chip); nullopt on every other rank.
  absl::StatusOr<std::optional<HostTensor>> ExchangeChipMove(const DeviceTensor& src, int from_chip, int to_chip,
                                                             const std::string& what);
  // Whether this rank runs only its own chips' parts of the move: it spans other ranks' chips and
  // keeps each element on its chip (mpi/chip_range_move.h).
  absl::StatusOr<bool> RunsOwnChipsOnly(const DmaOp& op, const DmaTensors& tensors) const;
  // Whether `output` lies on chips of several ranks.
  bool SpansRanks(const DeviceTensor& output) const;
  // Every chip part of what the pipeline reads, from its owner (before a pipeline runs whole).
  absl::Status GatherReads(const PipelineTensors& tensors, const std::string& what);
  // Whether this rank owns none of the chips `output` lies on (the op is then skipped).
  bool WritesOnlyOthersChips(const DeviceTensor& output) const;
  // Folds the op's output bytes on this rank's chips into the session's digests (when it reports).
  absl::Status Digest(const DeviceTensor& output);

  Backend& inner_;
  Session& session_;
  int64_t ops_ = 0;
  int64_t skipped_ = 0;
  bool split_pipelines_ = false;
  ChipRangePipelines pipelines_;  // the pipelines run for this rank's chips, kept by op and chip
};

}  // namespace visa::mpi
