// Steps more than one sketch rule adds: the tiles an extent splits into, and the vectorize
// and unroll spaces of a stage's innermost loops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/sketch_rules.h"

namespace tlmc::scheduler {

// Divisors of n, ascending, up to `cap` and kLargestSpaceValue; {1} for an empty extent.
std::vector<int64_t> divisors(int64_t n, int64_t cap);
// The tiles of a loop of a stage with no reduction, ascending, up to `cap`, n and
// kLargestSpaceValue: the divisors of n, and also the powers of two and the multiples of
// `lanes` up to 8 vectors, whose last tile is shifted back to end at n (a split that leaves
// a remainder, scheduler/decision.h), so that an extent such as 50257 or 197 still gets
// tiles of whole vectors.
std::vector<int64_t> tile_sizes(int64_t n, int64_t cap, int64_t lanes);
// The auto-unroll steps a space offers (Ansor's max step).
const std::vector<int64_t>& unroll_steps();

// "parallel STAGE -": the loops of `stage` reordered as `outer` then `rest` (loop names), the
// outer ones fused into one; 0 runs it serially, 1 (the default) in parallel, 1 + k in
// parallel with outer[k] moved first, so threads split that axis (a convolution's output
// channels: each thread then reads only its share of the weights). Values that leave the
// order as it is are not listed; only 0 when there is no outer loop.
// `preferred` is the -O0 value (1 when it is not listed).
void add_outer_parallel_steps(SketchBuild& b, int stage, std::vector<std::string> outer,
                              std::vector<std::string> rest, int64_t preferred = 1);
// "vectorize STAGE -": 1 runs the stage's innermost loop over SIMD lanes.
void add_vectorize_space(SketchBuild& b, int stage, Fallback fallback);
// "unroll STAGE -": unrolls the stage's innermost loops, inner to outer, while the product of
// their iteration counts (a vectorized loop counting its vectors) is at most the value; it
// stops at a reduction loop, or at a loop longer than the code generator writes out.
void add_unroll_space(SketchBuild& b, int stage, Fallback fallback);
// "layout STAGE in<k>" for each operand k of the stage (the k-th tensor its body reads) that
// is a constant input no other stage reads: 1 passes it packed in the order the stage's
// loops read it, 0 as the model lays it out.
void add_layout_spaces(SketchBuild& b, int stage, const Fallback& fallback);

}  // namespace tlmc::scheduler
