// MpiBackend: runs a program's ops under an mpirun launch (issue 32). Every rank records the same
// program; before each op the ranks compare a hash of its text (a rank that recorded another
// program, or stopped, is named with the op), and a DMA move from one chip to a chip another rank
// owns (the moves of a chip shuffle) carries the source chip's bytes from their owner to the
// destination's owner with MPI point-to-point, which writes them into its copy of the source
// before the move runs.
//
// What is distributed today is the data of cross-chip moves and the agreement on the program;
// every rank still executes every chip's share of each op (docs/multi_process.md says what is
// missing for memory per rank to shrink).
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "mpi/mpi_session.h"
#include "runtime/backend.h"

namespace visa::mpi {

class MpiBackend : public Backend {
 public:
  MpiBackend(Backend& inner, Session& session) : inner_(inner), session_(session) {}

  const char* name() const override { return inner_.name(); }
  bool executes() const override { return inner_.executes(); }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override;
  absl::Status Run(const DmaOp& op, const DmaTensors& tensors) override;

  int64_t ops() const { return ops_; }

 private:
  // Compares this op's text across ranks; `text` is OpText of the op.
  absl::Status AgreeOn(const std::string& text);
  // The source chip's bytes from its owner to the destination chip's owner.
  absl::Status Exchange(const DmaOp& op, const DmaTensors& tensors, const std::string& what);
  // Folds the op's output bytes into the session's digest (when it reports).
  absl::Status Digest(const DeviceTensor& output);

  Backend& inner_;
  Session& session_;
  int64_t ops_ = 0;
};

}  // namespace visa::mpi
