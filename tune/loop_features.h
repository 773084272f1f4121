// Features of a lowered loop nest for the search's cost model: a fixed-length vector per
// program, built from each store statement's loop shape (vector, unroll, parallel extents),
// its arithmetic, and per buffer access the strides, bytes touched and traffic at each cache
// level of the target. One definition, versioned (STYLE.md §7): the names below are the
// layout of the vector.
#pragma once

#include <string>
#include <vector>

#include "ir/loop.h"
#include "ir/target.h"

namespace tlmc::tune {

// Bumped whenever the meaning or order of a feature changes.
constexpr int kLoopFeatureVersion = 1;

// The name of each feature, in vector order ("s0.vector_extent", "s1.a2.traffic_l1", ...).
const std::vector<std::string>& loop_feature_names();

// The features of `program` as `target` runs it; loop_feature_names().size() values.
std::vector<float> loop_features(const ir::LoopProgram& program, const ir::Target& target);

}  // namespace tlmc::tune
