// Labels that tell Vector Engine passes apart: the scheduler labels every pass "fetch > collect >
// vector > commit -> dm#N"; the timeline pictures (SVG, HTML viewer) show what each pass computes,
// "vector[Max reduce]", "vector[SubF Exp Add reduce]", after the kernel's `.named()` name.
#pragma once

#include <string>

#include "runtime/program.h"

namespace visa::cli {

// The functions a vector stage applies, in order, layout steps (split, pad, concat, trim,
// reinterpret) left out: "SubF Exp Add reduce"; empty for a stage of layout steps only.
std::string VectorPassSummary(const VectorStage& stage);

// `label` (the scheduler's) with each "vector" stage of a pipeline replaced by
// "vector[<summary>]"; other ops' labels unchanged.
std::string VectorPassLabel(const Op& op, const std::string& label);

}  // namespace visa::cli
