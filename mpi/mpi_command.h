// MpiCommand: a `visa` command under mpirun (issue 32). Every rank runs the command; their
// standard output is held back, the ranks compare their exit codes (and output digests, when
// reporting) at the end, and only rank 0 prints its output, so `mpirun -np 4 visa run SAMPLE`
// prints what `visa run SAMPLE` does, once.
// VISA_MPI_REPORT=1 adds the exchange figures (and MPI's own point-to-point bandwidth for the
// same message size, measured in the same run) to rank 0's standard error.
#pragma once

#include <memory>
#include <sstream>
#include <streambuf>

#include "mpi/mpi_session.h"

namespace visa::mpi {

class MpiCommand {
 public:
  // Nothing happens unless the process was launched by mpirun.
  MpiCommand();
  ~MpiCommand();
  MpiCommand(const MpiCommand&) = delete;
  MpiCommand& operator=(const MpiCommand&) = delete;

  // The command's exit code once the ranks compared theirs (rank 0 prints its output); a
  // difference is an error naming the rank. Ends MPI.
  int Finish(int exit_code);

 private:
  Session* session_;
  std::ostringstream held_;
  std::streambuf* standard_output_ = nullptr;
};

}  // namespace visa::mpi
