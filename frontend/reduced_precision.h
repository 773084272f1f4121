// Reduced precision (--precision bf16): the operands of matrix products and dense
// convolutions whose second operand is a weight are rounded to bfloat16, which the products
// read and accumulate in float32; everything else (products of two activations, epilogues,
// Softmax, normalisations, reductions, the graph's inputs and outputs) stays float32.
// Needs a verified graph; returns one, in which a weight operand is converted now and an
// activation operand gets a Cast node (computed by its producer's kernel where it can be).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace tlmc::frontend {

struct PrecisionOptions {
  // Which products compute in bfloat16 (--precision-ops).
  enum class Ops { All, MatMul, Conv };
  Ops ops = Ops::All;
  // Products left in float32 by node name (--keep-fp32); each must name a product.
  std::vector<std::string> keep_fp32;
  // Where an activation rounded for products is stored (--bf16-storage): Products, in
  // bfloat16 where products alone read it, else in float32 too (the other readers read it
  // so, a kernel of its own rounding it for the products); Shared, in bfloat16 alone, which
  // every reader reads (the others widened to float32), as OpenVINO's default does.
  enum class Storage { Products, Shared };
  Storage storage = Storage::Products;
};

// Throws Diagnostic when keep_fp32 names no product of the graph.
ir::Graph demote_products_to_bf16(const ir::Graph& g, const PrecisionOptions& options);

// Why product node `n` of `g` (a graph demote_products_to_bf16 returned, or one of its
// layout plans) stayed float32 under `options`, for --dump precision: "kept by --keep-fp32",
// "its second operand is an activation ...", a window over too few channels, a depthwise
// convolution; empty where n is no product, or another product of 16-bit operands.
std::string float32_reason(const ir::Graph& g, const ir::Node& n, const PrecisionOptions& options);

// For each output of `g` (a graph demote_products_to_bf16 returned), the most products with a
// bfloat16 operand on one path to it from the graph's inputs and weights; 0 where none.
std::vector<int> bf16_products_in_series(const ir::Graph& g);

}  // namespace tlmc::frontend
