// The contraction sample groups, registered as one list.
#include "samples/contraction_sample.h"

namespace visa::samples {

std::vector<Sample> ContractionSamples() {
  std::vector<Sample> all;
  for (auto group : {HelloContractionSamples(), BatchedContractionSamples(), ConvolutionSamples(),
                     ScheduleSamples()}) all.insert(all.end(), group.begin(), group.end());
  return all;
}

}  // namespace visa::samples
