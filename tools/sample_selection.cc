// `--all`'s samples (sample_selection.h).
#include "tools/sample_selection.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace visa::cli {

SampleSelection SelectAllSamples(bool include_slow) {
  SampleSelection selection;
  for (const samples::Sample& sample : samples::AllSamples()) {
    if (sample.slow && !include_slow) {
      selection.skipped_slow.push_back(sample.name);
    } else {
      selection.chosen.push_back(&sample);
    }
  }
  return selection;
}

std::string SkippedSlowNote(const SampleSelection& selection) {
  const size_t n = selection.skipped_slow.size();
  if (n == 0) return "";
  return absl::StrCat("skipped ", n, n == 1 ? " slow sample" : " slow samples",
                      " (run by name, or add --include-slow): ", absl::StrJoin(selection.skipped_slow, ", "));
}

}  // namespace visa::cli
