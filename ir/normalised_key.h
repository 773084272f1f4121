// The normalised key of a fused subgraph: what stays of it when the model's batch, image
// size, sequence length and element-wise epilogue are set aside. Two subgraphs with one
// normalised key are of one shape family (a convolution of ResNet-50 at batch 1 and at batch
// 4, or with and without its ReLU): a language model held out of a family is trained on
// none of them, which an exact workload key (ir/te.h) cannot say.
//
// It is readable text, the subgraph's anchor operator and the extents that shape its weights
// or its reduction:
//   Conv, ConvTranspose   "Conv cin=64 cout=64 kernel=3x3 stride=1x1 pads=1,1,1,1
//                         dilation=1x1 groups=1" (channels from the weight, whatever the
//                         activations' layout; strides, pads and dilations the model leaves
//                         out at their defaults, so that writing them or not is one family)
//   MatMul, Gemm          "MatMul k=768 n=3072" for a product by a weight; the batch
//                         count of a weight with batch axes, "batches=12"; a product of
//                         two activations, "MatMul of activations k=64 n=128 batches=12",
//                         where the batch count leaves out the first batch axis (the
//                         model's batch) when there are several
//   pools                 "MaxPool kernel=3x3 stride=2x2 pads=1,1,1,1 dilation=1x1
//                         ceil_mode=0" (AveragePool: count_include_pad, no dilation);
//                         GlobalAveragePool its reduced extents, "over=7x7"
//   Softmax, LayerNormalization, Reduce*
//                         "Softmax over=1000": the extents it reduces over
// A subgraph without an anchor (an element-wise or injective chain, a view, a Split) is
// named by its operators alone, in node order: "chain Add,Relu".
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace tlmc::ir {

// The normalised key of the subgraph of `g` made of `nodes` (a verified graph's node ids,
// as scheduler::partition_graph groups them).
std::string normalised_key(const Graph& g, const std::vector<int>& nodes);

}  // namespace tlmc::ir
