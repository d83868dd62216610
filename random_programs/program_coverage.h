// Coverage of the differential test: the kinds of things a program exercises (stage kinds, fetch
// conversions, adapters, switch topologies, contraction types, register-file loads, DMA kinds...),
// named the same way whether they come from a traced Program (what actually ran) or from what a
// generator drew (random_programs/random_program.h), so that a kind drawn but never run shows.
#pragma once

#include <compare>
#include <string>
#include <vector>

#include "runtime/program.h"

namespace visa::samples {

// One row of the coverage table: a category ("stage", "fetch", "switch", "dma", ...) and the kind
// within it ("collect", "i8->i32", "Broadcast01", "DM->HBM", ...).
struct CoverageKey {
  std::string category, kind;
  auto operator<=>(const CoverageKey&) const = default;
  std::string ToString() const { return category + " " + kind; }
};

// The kinds a traced program exercises, sorted, without duplicates:
//   stage     begin, begin_interleaved and every engine call (fetch, switch, collect, align,
//             contract, accumulate, cast, transpose, commit, to_trf, to_vrf)
//   context   main, sub (a sub-context pipeline that is not a weights load), weights (to_trf of an
//             operand some align reads)
//   fetch     the conversion "<DM type>-><stream type>" of every fetch
//   adapter   plain, masked, table, zero_point, zero_points (one per interleaved tensor)
//   switch    the topology; contraction: the stream type at align; reduce: Add / Max;
//   accumulate Interleaved / Sequential; cast "<from>-><to>"; transpose: the stream type
//   load      trf:Full, trf:FirstHalf, trf:SecondHalf, vrf
//   commit    all (every slice) or bitmap
//   dma       "<source tier>-><destination tier>" (host for a host image)
std::vector<CoverageKey> ProgramCoverage(const Program& program);

// The same names, for generators describing what they drew.
std::string ConversionKind(DType from, DType to);  // "i8->i32"

}  // namespace visa::samples
