// `visa seq`: prints sequencer configurations, access sizes and cycle counts.
#include "tools/seq_command.h"

#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/fetch_engine.h"
#include "dsl/indirect_fetch.h"
#include "dsl/mapping_parser.h"
#include "dsl/sequencer.h"
#include "dsl/status_macros.h"
#include "runtime/dma_stream_cycles.h"
#include "runtime/dtype.h"

namespace visa::cli {
namespace {

absl::StatusOr<MemoryTier> ParseTier(const std::string& name) {
  std::string lower = absl::AsciiStrToLower(name);
  if (lower == "hbm") return MemoryTier::kHbm;
  if (lower == "dm") return MemoryTier::kDm;
  if (lower == "spm") return MemoryTier::kSpm;
  return absl::InvalidArgumentError(absl::StrCat("unknown memory tier `", name, "` (hbm, dm, spm)"));
}

std::string Config(const SequencerConfig& config, bool labels) {
  return labels ? config.ToLabeledString() : config.ToString();
}

// Flags that mean nothing for the kind of sequencer asked for (a fetch / commit, or a DMA) are
// refused rather than ignored: the user expects them to change the answer.
absl::Status CheckFlagCombination(const SeqOptions& options) {
  if (!options.indirect.empty() && (options.dma || options.write)) {
    return absl::InvalidArgumentError("--indirect is a fetch's IndirectLoop; it takes neither --dma nor --write");
  }
  if (options.dma) {
    if (!options.buf.empty()) {
      return absl::InvalidArgumentError("--buf is the fetch / commit buffer; a DMA takes --src and --dst instead");
    }
    if (options.write) {
      return absl::InvalidArgumentError("--write selects a commit; a DMA always pairs a read and a write sequencer");
    }
    if (options.context != "main") {
      return absl::InvalidArgumentError("--context is a Tensor Unit context; a DMA runs on the DMA engine");
    }
    return absl::OkStatus();
  }
  for (const auto& [flag, value] : {std::pair<const char*, const std::string*>{"--src", &options.src},
                                    {"--dst", &options.dst}}) {
    if (!value->empty()) return absl::InvalidArgumentError(absl::StrCat(flag, " describes a DMA; add --dma"));
  }
  if (options.src_tier != "hbm" || options.dst_tier != "hbm") {
    return absl::InvalidArgumentError("--src-tier and --dst-tier describe a DMA; add --dma");
  }
  return absl::OkStatus();
}

// `--indirect W:K`: the fetch of --buf (one slice's DM Element) as fetch_indirect plans it, the
// IndirectLoop over rows W numbered by K in place of W's entry (dsl/indirect_fetch.h).
absl::Status RunIndirect(const SeqOptions& options, const Axes& axes, DType dtype, const Mapping& buf,
                         const Mapping& time, const Mapping& packet, std::ostream& out) {
  const size_t colon = options.indirect.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == options.indirect.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--indirect takes ROWS:INDEX (e.g. W:K), got `", options.indirect, "`"));
  }
  const std::string rows = options.indirect.substr(0, colon);
  ASSIGN_OR_RETURN(Mapping key, ParseMapping(options.indirect.substr(colon + 1), axes));
  if (key.kind() != Mapping::Kind::kSymbol) {
    return absl::InvalidArgumentError(absl::StrCat("--indirect: the index axis `", key.ToString(), "` must be one axis"));
  }
  ASSIGN_OR_RETURN(Mapping one, ParseMapping("1", axes));
  ASSIGN_OR_RETURN(Mapping cluster, ParseMapping("1 # 2", axes));
  ASSIGN_OR_RETURN(Mapping slice, ParseMapping("1 # 256", axes));
  const StreamShape begin{dtype, one, cluster, slice, one, buf, std::nullopt};
  const ContextKind context = options.context == "sub" ? ContextKind::kSub : ContextKind::kMain;
  ASSIGN_OR_RETURN(FetchStage stage, PlanIndirectFetchStage(begin, context, dtype, rows, key.axis(), time, packet));
  const IndirectLoop& loop = stage.indirect->loop;
  std::string config = loop.sequencer;
  if (!options.labels) {  // the manual's unlabeled form: the IndirectLoop first, then `size : stride`
    std::vector<std::string> entries = {absl::StrCat("(", loop.limit, ", [index[", loop.key_axis, "] x ", loop.row_stride, "])")};
    for (size_t i = 1; i < stage.sequencer.entries.size(); ++i) {
      entries.push_back(absl::StrCat(stage.sequencer.entries[i].size, " : ", stage.sequencer.entries[i].stride));
    }
    config = absl::StrCat("[", absl::StrJoin(entries, ", "), "] : ", stage.sequencer.packet_size);
    if (stage.sequencer.base_offset != 0) absl::StrAppend(&config, " @ base_addr = ", stage.sequencer.base_offset);
  }
  out << "config: " << config << "\n";
  out << "indirect: limit " << loop.limit << ", offsets index[" << loop.key_axis << "] x " << loop.row_stride
      << " elements, rows " << loop.table_axis << " = " << loop.table_size << "\n";
  out << "contiguous_bytes: " << stage.access.contiguous_bytes << "\n";
  out << "access_bytes: " << stage.access.access_bytes << "\n";
  out << "cycles: " << stage.access.cycles << "\n";
  return absl::OkStatus();
}

absl::Status Run(const SeqOptions& options, std::ostream& out) {
  RETURN_IF_ERROR(CheckFlagCombination(options));
  ASSIGN_OR_RETURN(Axes axes, Axes::Parse(options.axes));
  ASSIGN_OR_RETURN(DType dtype, ParseDType(options.dtype));
  if (IsStaging(dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Scalar Type: ", Name(dtype), " is a staging type of zero-point subtraction and never sits in "
        "memory; sequence the stored type (i4 or i8)"));
  }
  ElementBits element{Bits(dtype)};
  ASSIGN_OR_RETURN(Mapping time, ParseMapping(options.time, axes));
  ASSIGN_OR_RETURN(Mapping packet, ParseMapping(options.packet, axes));
  if (options.dma) {
    if (options.src.empty() || options.dst.empty()) {
      return absl::InvalidArgumentError("--dma needs --src and --dst mappings");
    }
    ASSIGN_OR_RETURN(Mapping src, ParseMapping(options.src, axes));
    ASSIGN_OR_RETURN(Mapping dst, ParseMapping(options.dst, axes));
    ASSIGN_OR_RETURN(MemoryTier src_tier, ParseTier(options.src_tier));
    ASSIGN_OR_RETURN(MemoryTier dst_tier, ParseTier(options.dst_tier));
    ASSIGN_OR_RETURN(DmaConfig dma, DeriveDma(src, src_tier, dst, dst_tier, time, packet, element));
    out << "read: " << Config(dma.read, options.labels) << "\n";
    out << "write: " << Config(dma.write, options.labels) << "\n";
    out << "packet_bytes: " << dma.packet_bytes << "\n";
    if (options.cycles) out << EstimateDmaStream(dma, src_tier, dst_tier, element.bits).ToText(src_tier, dst_tier);
    return absl::OkStatus();
  }
  if (options.buf.empty()) return absl::InvalidArgumentError("--buf is required (or use --dma)");
  if (options.context != "main" && options.context != "sub") {
    return absl::InvalidArgumentError(absl::StrCat("unknown context `", options.context, "` (main, sub)"));
  }
  ContextKind context = options.context == "sub" ? ContextKind::kSub : ContextKind::kMain;
  ASSIGN_OR_RETURN(Mapping buf, ParseMapping(options.buf, axes));
  if (!options.indirect.empty()) return RunIndirect(options, axes, dtype, buf, time, packet, out);
  SequencerMode mode = options.write ? SequencerMode::kCommit : SequencerMode::kRead;
  ASSIGN_OR_RETURN(SequencerConfig config,
                   DeriveSequencer(buf, time, packet, mode, std::max(1, 64 / element.bits)));
  ASSIGN_OR_RETURN(AccessPlan plan, options.write ? PlanCommit(config, element, context)
                                                  : PlanFetch(config, element, context));
  out << "config: " << Config(config, options.labels) << "\n";
  out << "contiguous_bytes: " << plan.contiguous_bytes << "\n";
  out << "access_bytes: " << plan.access_bytes << "\n";
  out << "cycles: " << plan.cycles << "\n";
  return absl::OkStatus();
}

}  // namespace

int RunSeq(const SeqOptions& options, std::ostream& out, std::ostream& err) {
  absl::Status status = Run(options, out);
  if (!status.ok()) {
    err << "error: " << status.message() << "\n";
    return 2;
  }
  return 0;
}

void AddSeqCommand(CLI::App& app, SeqOptions& options, int& exit_code) {
  CLI::App* seq = app.add_subcommand("seq", "Sequencer configuration of a buffer and a stream");
  seq->add_option("--axes", options.axes, "Axis sizes, e.g. A=8,B=8,C=8")->required();
  seq->add_option("--buf", options.buf, "Buffer (memory) mapping, e.g. \"A, B, C # 32\"");
  seq->add_option("--time", options.time, "Stream Time mapping (default 1)");
  seq->add_option("--packet", options.packet, "Stream Packet mapping (default 1)");
  seq->add_option("--dtype", options.dtype, "Element type: i4 i8 i16 i32 f8e4m3 f8e5m2 bf16 f16 f32");
  seq->add_option("--context", options.context, "Tensor Unit context: main or sub");
  seq->add_flag("--write", options.write, "Commit (stream to buffer) instead of fetch");
  seq->add_flag("--dma", options.dma, "A DMA: paired read and write sequencers");
  seq->add_option("--src", options.src, "DMA source mapping");
  seq->add_option("--dst", options.dst, "DMA destination mapping");
  CLI::Option* dma = seq->get_option("--dma");
  // Given explicitly without --dma (even as the default `hbm`) they are refused at parsing.
  seq->add_option("--src-tier", options.src_tier, "DMA source tier: hbm, dm or spm")->needs(dma);
  seq->add_option("--dst-tier", options.dst_tier, "DMA destination tier: hbm, dm or spm")->needs(dma);
  seq->add_flag("--labels", options.labels, "Name the stream digit of every entry");
  seq->add_option("--indirect", options.indirect,
                  "ROWS:INDEX, e.g. W:K: a fetch whose outermost entry is the IndirectLoop over rows W, "
                  "numbered by the index axis K (Time starts with K)");
  seq->add_flag("--cycles", options.cycles, "With --dma: the DMA's requests, HBM channels and cycle estimate")->needs(dma);
  seq->callback([&options, &exit_code] { exit_code = RunSeq(options, std::cout, std::cerr); });
}

}  // namespace visa::cli
