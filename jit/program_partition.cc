// ProgramPartition: longest-processing-time-first scheduling of kernels onto threads, then one
// module per level on each thread.
#include "jit/program_partition.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace visa::jit {

std::vector<std::vector<PlannedModule>> PartitionKernels(const std::vector<KernelCost>& kernels, int threads) {
  if (kernels.empty()) return {};
  auto cost = [&](size_t k) { return kernels[k].instructions + kFunctionCost; };
  int64_t total = 0;
  for (size_t k = 0; k < kernels.size(); ++k) total += cost(k);
  const int64_t useful = std::max<int64_t>(1, total / kMinInstructionsPerThread);
  const int used = static_cast<int>(std::clamp<int64_t>(std::min<int64_t>(useful, kernels.size()), 1, std::max(threads, 1)));
  std::vector<size_t> order(kernels.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cost(a) > cost(b); });
  std::vector<int64_t> load(used, 0);
  std::vector<std::map<int, std::vector<size_t>>> by_level(used);
  for (size_t k : order) {
    const size_t t = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[t] += cost(k);
    by_level[t][kernels[k].level].push_back(k);
  }
  std::vector<std::vector<PlannedModule>> plan(used);
  for (int t = 0; t < used; ++t) {
    for (auto& [level, members] : by_level[t]) {
      std::sort(members.begin(), members.end());
      plan[t].push_back(PlannedModule{level, std::move(members)});
    }
  }
  return plan;
}

}  // namespace visa::jit
