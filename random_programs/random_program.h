// Random valid kernels for differential testing (the JIT against the interpreter): one seed draws
// one program, printable as a reproducer, that exercises the Tensor Unit's engines in random but
// rule-abiding combinations.
//
// A draw is one of two chains over a random DM input (and, for a contraction, random TRF weights):
//   movement:    fetch (plain, cast, table, zero point, masked; one tensor or two interleaved)
//                -> [switch] -> collect -> [cast] -> [transpose] -> commit (maybe into some slices
//                only) or to_trf / to_vrf, with DMA moves before (DM -> DM, HBM -> HBM) and after
//                (DM -> HBM, DM -> SPM)
//   contraction: weights fetched by the sub context `to_trf`; fetch -> [switch] -> collect ->
//                align -> contract -> accumulate -> [cast] -> [transpose] -> commit, in bf16, f8,
//                i8 or i4 (with a lookup table or, on request, zero points)
// Every choice is made from the seed before any mapping is built, so the description printed for
// a seed is exactly the program that runs. Draws are valid by construction as far as the
// generator knows the rules; the tracer is the judge, and a draw it rejects is a finding of the
// generator (or of the tracer), counted and reported by the caller, never drawn again.
// Random programs have no host reference: they are checked by comparing backends.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/program.h"
#include "random_programs/program_coverage.h"
#include "samples/sample.h"

namespace visa::samples {

// The features a program can exercise, as `visa fuzz-diff --features` spells them.
const std::vector<std::string>& RandomProgramFeatures();

// OK when every name is one of RandomProgramFeatures(); otherwise an InvalidArgument naming it.
absl::Status CheckFeatureNames(const std::vector<std::string>& names);

struct DrawOptions {
  // Features the draw includes whenever its other choices allow (the caller filters the rest).
  std::vector<std::string> require;
};

struct RandomProgram {
  uint64_t seed = 0;
  Sample sample;            // runs the program on a backend (sample.runner); no host reference
  std::string description;  // the drawn program, one engine call per line
  std::vector<CoverageKey> drawn;  // what the draw calls for, named as ProgramCoverage names it
};

// The kinds the generator draws when no feature is required (the must-run set of a coverage
// check): a long enough run must have run each of them on both backends, zero-point contractions
// (the staging types i9 / i5) included.
std::vector<CoverageKey> AllDrawnKinds();

// The kinds of AllDrawnKinds() the generator can still draw when `options` requires features (all
// of them when it requires none): those a census of the draws under the options that have every
// required feature (the others are filtered, never run) calls for.
std::vector<CoverageKey> DrawnKinds(const DrawOptions& options);

// Whether a draw calling for `drawn` exercises `feature` (one of RandomProgramFeatures()), as
// ProgramFeatures would find in its traced program.
bool CallsForFeature(const std::vector<CoverageKey>& drawn, const std::string& feature);

// The program seed `seed` draws; the same seed and options always give the same program.
RandomProgram DrawRandomProgram(uint64_t seed, const DrawOptions& options = {});

// What a traced program exercises: the feature names above, plus details "switch:<topology>",
// "contraction:<dtype>", "reduce:<op>", "accumulate:<kind>" and "load:trf:<mode>" / "load:vrf"
// (register-file loads, weights included). Sorted, without duplicates.
std::vector<std::string> ProgramFeatures(const Program& program);

}  // namespace visa::samples
