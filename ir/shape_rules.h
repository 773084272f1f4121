// Shape rules shared by shape inference (ir/op_schema_*.cc), lowering and the reference
// interpreter: numpy broadcasting, axis normalisation, and the resolved spatial geometry of
// convolutions and pools (every ONNX default and auto_pad applied).
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace tlmc::ir {

// ONNX multidirectional (numpy) broadcasting; nullopt when the shapes do not broadcast.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);
// ONNX unidirectional broadcasting: true when `from` broadcasts to exactly `to`.
bool broadcasts_to(const Shape& from, const Shape& to);
// An axis in [-rank, rank) as one in [0, rank); nullopt when out of range.
std::optional<int> normalize_axis(int64_t axis, int64_t rank);

// The geometry of a Conv, ConvTranspose, MaxPool or AveragePool node, one entry per spatial
// axis (input dimensions 2, 3, ...). Defaults are filled in (strides and dilations 1, pads 0,
// kernel from W for the convolutions) and auto_pad / output_shape are resolved to pads.
struct SpatialGeometry {
  std::vector<int64_t> input;           // input spatial extents
  std::vector<int64_t> kernel;          // kernel extents
  std::vector<int64_t> strides;         // >= 1
  std::vector<int64_t> dilations;       // >= 1 (always 1 for AveragePool at opset 17)
  std::vector<int64_t> pads_begin;      // >= 0
  std::vector<int64_t> pads_end;        // >= 0
  std::vector<int64_t> output_padding;  // ConvTranspose only; zeros otherwise
  std::vector<int64_t> output;          // output spatial extents, >= 1
  int rank() const { return static_cast<int>(input.size()); }
};

// Throws a Diagnostic at the node when its attributes do not fit its input shapes.
// Pools with ceil_mode drop a last window that would start in the end padding, as ONNX
// shape inference (onnx/onnx#5741), PyTorch and ONNX Runtime do.
SpatialGeometry spatial_geometry(const Graph& g, const Node& n);

// The input axes a ReduceMean or ReduceSum node reduces, normalised, sorted and unique
// (all axes when none are given). Empty when ReduceSum has no axes and
// noop_with_empty_axes = 1: the node is then an identity. Throws a Diagnostic on bad axes.
std::vector<int> reduce_axes(const Graph& g, const Node& n);

}  // namespace tlmc::ir
