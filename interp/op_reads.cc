// One op's reads checked for unwritten elements before a backend runs it (op_reads.h).
#include "interp/op_reads.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "interp/unwritten_reads.h"
#include "runtime/device.h"
#include "runtime/indirect_dma.h"
#include "runtime/uninitialized_reads.h"

namespace visa::interp {

absl::Status CheckOpReads(const PipelineOp& op, const PipelineTensors& tensors) {
  if (!tensors.output.device().tracks_writes()) return absl::OkStatus();
  const BeginStage* begin = nullptr;
  for (const Stage& stage : op.stages) {
    if (const auto* b = std::get_if<BeginStage>(&stage)) begin = b;
    if (const auto* fetch = std::get_if<FetchStage>(&stage); fetch != nullptr && begin != nullptr) {
      // An indirect fetch reads its index and rows through ReadIndirectRows on every backend.
      if (fetch->indirect) continue;
      const std::vector<DeviceTensor> sources(tensors.inputs.begin(), tensors.inputs.end());
      RETURN_IF_ERROR(CheckStreamReads(sources, begin->interleave, fetch->out.Full(),
                                       absl::StrCat("the fetch of a ", ContextName(op.context), "-context pipeline")));
    }
    if (const auto* align = std::get_if<AlignStage>(&stage); align != nullptr && tensors.weights) {
      RETURN_IF_ERROR(CheckStreamReads({*tensors.weights}, std::nullopt, align->out.Full(),
                                       "the TRF Sequencer (align's weights)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckOpReads(const DmaOp& op, const DmaTensors& tensors) {
  if (op.fill() || !tensors.src.device().tracks_writes()) return absl::OkStatus();  // a memset reads nothing
  const std::string context = ContextName(op.context);
  if (const IndirectLoop* loop = op.indirect()) {
    VISA_CHECK(tensors.index.has_value(), "an indirect move runs with its index tensor");
    if (!loop->scatter) {
      // A gather reads its index and the table rows the index names, not the whole table.
      return ReadIndirectRows(*loop, *tensors.index, tensors.src, absl::StrCat("a ", context, " gather")).status();
    }
    RETURN_IF_ERROR(
        CheckAllWritten(*tensors.index, absl::StrCat("the IndirectLoop's index read by a ", context, " scatter")));
  }
  // A DMA move reads every live element of its source (a move drops no index).
  return CheckAllWritten(tensors.src, absl::StrCat("a ", context, " move"));
}

}  // namespace visa::interp
