// Shape rules shared by shape inference (ir/op_schema_*.cc), lowering and the reference
// interpreter: numpy broadcasting, axis normalisation, and the resolved spatial geometry of
// convolutions and pools (every ONNX default and auto_pad applied).
#pragma once

#include <optional>
#include <string>
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

// Whether a Conv or pooling node has tlmc's attribute channels_last = 1: its input and output
// are [N, spatial..., C] rather than ONNX's [N, C, spatial...] (scheduler/
// channels_last_activations.h writes such nodes).
bool is_channels_last(const Node& n);

// How a Conv or pooling node lays out its input and output activations, by tlmc's attributes
// channels_last and channel_block (never ONNX's): [N, C, s...] (ONNX's); [N, s..., C]
// (channels_last = 1); or [N, C/B, s..., B] (channel_block = B >= 2: blocks of B
// consecutive channels, each block of one position contiguous).
struct ChannelLayout {
  bool last = false;
  int64_t block = 0;  // B, or 0 when the channels are not blocked
  bool channels_first() const { return !last && block == 0; }
};
ChannelLayout channel_layout(const Node& n);
// The dimension of the first spatial axis: 1 channels-last, else 2.
size_t first_spatial_axis(ChannelLayout l);
// The spatial axes of a tensor of rank `rank` in layout l.
size_t spatial_rank(size_t rank, ChannelLayout l);
// The number of channels of a tensor of shape `s` in layout l.
int64_t channel_count(const Shape& s, ChannelLayout l);
// The shape in layout l of a tensor whose ONNX shape is `channels_first` ([N, C, s...]; C a
// multiple of the block), and the inverse.
Shape layout_shape(const Shape& channels_first, ChannelLayout l);
Shape channels_first_shape(const Shape& s, ChannelLayout l);
// The dense elements of a tensor of ONNX shape `channels_first` moved to layout l
// (to_layout), or from it back to channels-first order.
std::vector<uint8_t> move_channels(const std::vector<uint8_t>& bytes, const Shape& channels_first,
                                   size_t elem_size, ChannelLayout l, bool to_layout);

// How far the values a shape is computed from may reach: as far as integer attributes
// (+-(2^31 - 1), docs/driver.md "Limits"), or any int64 where ONNX clamps them to an axis.
enum class ValueBound { AsAttributes, Clamped };
// The values of input i, a constant 1-D int64 tensor that messages call `what` ("axes",
// "pads", ...). Throws a Diagnostic at the node otherwise: "... does not support axes dtype
// int32 (supported: int64)", "... needs its axes 'a' to be a constant weight", "... needs
// its axes 'a' to be 1-D, got shape [2, 1]", "... has the value 6148914691236517207 in its
// repeats 'r', beyond tlmc's limit of +-(2^31 - 1)".
std::vector<int64_t> constant_ints(const Graph& g, const Node& n, size_t i, const std::string& what,
                                   ValueBound bound = ValueBound::AsAttributes);
// The value of input i, a constant scalar (shape [] or [1]) of any dtype: "... needs its
// delta 'd' to be a constant weight", "... needs its delta 'd' to be a scalar, got shape [2]".
double constant_scalar(const Graph& g, const Node& n, size_t i, const std::string& what);

// Shape-15: the input dimensions [begin, end) a Shape node returns, its attributes start
// and end counted from the back when negative and clamped to [0, rank].
struct DimRange {
  int64_t begin;
  int64_t end;  // >= begin
};
DimRange shape_range(const Node& n, int64_t rank);

// Slice-13 resolved on every input dimension (those not sliced read start 0, step 1, all):
// output element c reads input element start + c * step along each dimension.
struct SliceGeometry {
  std::vector<int64_t> start;  // the first index read, in [0, extent) unless nothing is read
  std::vector<int64_t> step;   // non-zero; negative walks backwards
  Shape output;                // elements read per dimension
};
// Throws a Diagnostic on bad starts, ends, axes or steps.
SliceGeometry slice_geometry(const Graph& g, const Node& n);

// Split-13: the axis and the extent of each part, one per node output (the `split` input,
// or equal parts).
struct SplitGeometry {
  int axis;
  std::vector<int64_t> sizes;
};
SplitGeometry split_geometry(const Graph& g, const Node& n);

// Pad-13 (inputs data, pads, optional constant_value).
enum class PadMode { Constant, Reflect, Edge };
struct PadGeometry {
  PadMode mode;
  std::vector<int64_t> begin;  // per dimension; a negative pad removes elements
  std::vector<int64_t> end;
  double value;  // mode constant: the fill value (input 2, default 0)
  Shape output;
};
PadGeometry pad_geometry(const Graph& g, const Node& n);

// Range-11: max(ceil((limit - start) / delta), 0) elements (the difference taken in the
// inputs' dtype, as ONNX Runtime does). Throws a Diagnostic when delta is 0.
int64_t range_count(const Graph& g, const Node& n);

// The input axes a ReduceMean or ReduceSum node reduces, normalised, sorted and unique
// (all axes when none are given). Empty when ReduceSum has no axes and
// noop_with_empty_axes = 1: the node is then an identity. Throws a Diagnostic on bad axes.
std::vector<int> reduce_axes(const Graph& g, const Node& n);

}  // namespace tlmc::ir
