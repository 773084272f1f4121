// Lays out the constant inputs a schedule packs (Pack decisions) in the order its loop nest
// reads them, as Ansor's layout rewrite does: one dimension per loop digit indexing the input,
// outer loops first, so that a tile's operands are contiguous and the vector loop reads
// consecutive elements. Needs a verified loop program; rewrites the packed inputs' loads and
// gives their buffers the Packing that whoever passes the data applies to it. An input whose
// index is not affine in loop digits, or whose copy would exceed twice its size, keeps its
// layout (the decision then changes nothing).
#pragma once

#include <vector>

#include "ir/loop.h"

namespace tlmc::scheduler {

// `buffers`: ids of Param input buffers of `p` holding constants.
void pack_constants(ir::LoopProgram& p, const std::vector<int>& buffers);

}  // namespace tlmc::scheduler
