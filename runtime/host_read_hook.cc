// HostReadHook: one process-wide hook, empty unless a distributed backend sets it.
#include "runtime/host_read_hook.h"

#include <utility>

namespace visa {
namespace {

HostReadHook& Hook() {
  static HostReadHook* hook = new HostReadHook();  // lives as long as the process
  return *hook;
}

}  // namespace

void SetHostReadHook(HostReadHook hook) { Hook() = std::move(hook); }

absl::Status BeforeHostRead(const DeviceTensor& src) {
  const HostReadHook& hook = Hook();
  return hook ? hook(src) : absl::OkStatus();
}

}  // namespace visa
