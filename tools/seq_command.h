// `visa seq`: the sequencer configuration a buffer mapping and a stream (Time, Packet) produce.
#pragma once

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"

namespace visa::cli {

struct SeqOptions {
  std::string axes;
  std::string buf;
  std::string time = "1";
  std::string packet = "1";
  std::string dtype = "i8";
  std::string context = "main";  // main | sub
  bool write = false;             // a commit (stream -> buffer) instead of a fetch
  bool dma = false;
  std::string src, dst;
  std::string src_tier = "hbm", dst_tier = "hbm";
  bool labels = false;  // print which stream digit each entry came from
  bool cycles = false;  // --dma: print the DMA's requests and cycle estimate
  std::string indirect;  // "W:K": a fetch whose IndirectLoop reads rows W by the index axis K
};

// Exit codes: 0 success, 2 error (a rule the mappings break, or bad input), printed as `error: ...`.
int RunSeq(const SeqOptions& options, std::ostream& out, std::ostream& err);

void AddSeqCommand(CLI::App& app, SeqOptions& options, int& exit_code);

}  // namespace visa::cli
