// A launch refuses to write over live tensors (launch_collisions.h).
#include "runtime/launch_collisions.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace visa {
namespace {

// The output references of an op: a pipeline's output, a move's (or memset's) destination.
const TensorRef& OutputOf(const Op& op) {
  if (const auto* pipeline = std::get_if<PipelineOp>(&op.body)) return pipeline->output;
  return std::get<DmaOp>(op.body).dst;
}

template <typename Fn>
void ForEachRef(const Op& op, Fn&& fn) {
  if (const auto* p = std::get_if<PipelineOp>(&op.body)) {
    for (const TensorRef& r : p->inputs) fn(r);
    if (p->weights) fn(*p->weights);
    for (const TensorRef& r : p->vrf_operands) fn(r);
    if (p->fetch_index) fn(*p->fetch_index);
    fn(p->output);
    return;
  }
  const DmaOp& d = std::get<DmaOp>(op.body);
  fn(d.src);
  fn(d.dst);
  if (d.index()) fn(*d.index());
  if (d.base()) fn(*d.base());
}

}  // namespace

absl::Status CheckLaunchWritesNoLiveTensor(const Program& program, const Device& device,
                                           const std::vector<DeviceTensor>& inputs) {
  absl::flat_hash_set<int64_t> traced_inputs, bound;
  for (const TensorRef& ref : program.inputs) traced_inputs.insert(ref.id);
  for (const DeviceTensor& input : inputs) bound.insert(input.id());
  absl::flat_hash_set<const Placement*> checked;
  for (size_t k = 0; k < program.ops.size(); ++k) {
    const TensorRef& out = OutputOf(program.ops[k]);
    if (!out.handle || traced_inputs.contains(out.id)) continue;  // written into an input: as traced
    const Placement& placement = out.handle->is_view() ? out.handle->owner_placement() : out.handle->placement();
    if (!checked.insert(&placement).second) continue;
    for (int64_t owner : device.book().OwnersOf(placement.tier, placement.units, placement.range())) {
      if (bound.contains(owner) || device.book().IsTraced(owner)) continue;
      return absl::FailedPreconditionError(absl::StrFormat(
          "Address Collision: Launch would write op %d's output %s at %s bytes [0x%x, 0x%x) over the live tensor "
          "`%s`, which the launch does not take as an input; a launch never overwrites a live tensor. The "
          "program's tensors sit at their traced addresses: read or copy the live tensor and drop its handles "
          "(or Release it) before launching, or place it elsewhere",
          k, out.text, std::string(TierName(placement.tier)), placement.range().begin, placement.range().end,
          device.book().Name(owner)));
    }
  }
  return absl::OkStatus();
}

void MarkTracedTensors(const Program& program) {
  absl::flat_hash_set<int64_t> inputs;
  for (const TensorRef& ref : program.inputs) inputs.insert(ref.id);
  for (const Op& op : program.ops) {
    ForEachRef(op, [&](const TensorRef& ref) {
      if (!ref.handle || inputs.contains(ref.id) || !ref.handle->CheckDeviceAlive().ok()) return;
      ref.handle->device().book().MarkTraced(ref.id);
    });
  }
}

}  // namespace visa
