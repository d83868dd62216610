// Replays fuzz inputs through a libFuzzer target without libFuzzer: the normal (gcc) build links
// each tests/fuzz/NAME_fuzz.cc with this main, so ctest runs every seed and every kept finding on
// every commit, each within a time budget (a finding that was slow must stay fast).
//
// Usage: NAME_fuzz_replay [--max-seconds-per-input S] PATH...   (a PATH may be a directory)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::filesystem::path> InputsUnder(const std::filesystem::path& path) {
  std::vector<std::filesystem::path> inputs;
  if (std::filesystem::is_directory(path)) {
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      if (entry.is_regular_file() && entry.path().extension() != ".md") inputs.push_back(entry.path());
    }
  } else {
    inputs.push_back(path);
  }
  return inputs;
}

}  // namespace

int main(int argc, char** argv) {
  double max_seconds = 0;  // 0: no budget
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--max-seconds-per-input" && i + 1 < argc) {
      max_seconds = std::atof(argv[++i]);
      continue;
    }
    for (auto& input : InputsUnder(arg)) inputs.push_back(std::move(input));
  }
  int slow = 0;
  for (const auto& input : inputs) {
    std::ifstream file(input, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    auto start = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (max_seconds > 0 && seconds > max_seconds) {
      std::fprintf(stderr, "slow input: %s took %.2f s (budget %.2f s)\n", input.c_str(), seconds, max_seconds);
      ++slow;
    }
  }
  std::printf("replayed %zu inputs, %d over budget\n", inputs.size(), slow);
  return slow == 0 ? 0 : 1;
}
