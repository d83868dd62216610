// Whole-number flags with a range: a value that is not a whole number, or lies outside the range
// (however many digits it has), is refused with the flag, the value and the range, instead of
// CLI11's "Could not convert" or a silent wrap.
#pragma once

#include <cstdint>

#include "CLI/CLI.hpp"

namespace visa::cli {

// A CLI11 check: `value` must be a whole number in [min, max]. On an option it reads
// "--threads: value `100000` is out of range: a whole number from 0 to 256".
CLI::Validator WholeNumberIn(int64_t min, int64_t max);

}  // namespace visa::cli
