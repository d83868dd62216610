// Which samples `--all` means for `visa check` and `visa bench`: every sample but the slow ones
// (the manual's full sizes, e.g. a whole 70B layer: seconds to minutes each and gigabytes of
// memory, on both backends), unless `--include-slow`. The skipped ones are named, never dropped
// silently.
#pragma once

#include <string>
#include <vector>

#include "samples/sample.h"

namespace visa::cli {

struct SampleSelection {
  std::vector<const samples::Sample*> chosen;
  std::vector<std::string> skipped_slow;  // names, in registry order
};

SampleSelection SelectAllSamples(bool include_slow);

// "skipped 1 slow sample (run it by name, or add --include-slow): llama70b_layer_decode", or empty.
std::string SkippedSlowNote(const SampleSelection& selection);

}  // namespace visa::cli
