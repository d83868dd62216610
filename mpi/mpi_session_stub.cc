// MpiSession in a build without MPI (CMake found none): never launched.
#include "mpi/mpi_session.h"

namespace visa::mpi {

Session* Session::Launched() { return nullptr; }

absl::Status Session::Agree(uint64_t, absl::string_view) { return absl::UnimplementedError("MPI: not built"); }
void Session::Note(uint64_t, absl::string_view) {}
void Session::PostHash(bool) {}
absl::Status Session::Send(int, absl::Span<const uint8_t>, absl::string_view) {
  return absl::UnimplementedError("MPI: not built");
}
absl::StatusOr<std::vector<uint8_t>> Session::Receive(int, absl::string_view) {
  return absl::UnimplementedError("MPI: not built");
}
absl::StatusOr<double> Session::PointToPointBandwidth(int64_t, int) {
  return absl::UnimplementedError("MPI: not built");
}
absl::StatusOr<double> Session::SingleMessageBandwidth(int64_t) {
  return absl::UnimplementedError("MPI: not built");
}
void Session::End(bool) {}
struct Session::Pending {};
Session::~Session() = default;
void Session::Post(int, std::vector<uint8_t>) {}
absl::Status Session::Flush(absl::string_view) { return absl::UnimplementedError("MPI: not built"); }
absl::Status Session::ReceiveInto(int, absl::Span<uint8_t>, absl::string_view) {
  return absl::UnimplementedError("MPI: not built");
}
absl::Status Session::ExchangeBlocks(absl::Span<const Outgoing>, absl::Span<const Incoming>, absl::string_view) {
  return absl::UnimplementedError("MPI: not built");
}
absl::Status Session::CombineDigests() { return absl::UnimplementedError("MPI: not built"); }

}  // namespace visa::mpi
