// Reference kernels of the neural-network operators: matrix products, convolutions, pools,
// normalisations and Softmax. Plain loops in the ONNX definitions' terms, accumulating in
// double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/shape_rules.h"
#include "reference/kernels.h"

namespace tlmc::reference {
namespace {

using ir::Shape;

// acc[j] = sum over p of x[p] * y[p * n + j], in double, p ascending: each sum in the order
// of the textbook loop, with the rows of y read in turn (the order vectorises over j).
void row_times_matrix(const float* x, const float* y, int64_t k, int64_t n,
                      std::vector<double>& acc) {
  std::fill(acc.begin(), acc.end(), 0.0);
  double* a = acc.data();
  for (int64_t p = 0; p < k; ++p) {
    const double xp = x[p];
    const float* row = y + p * n;
    for (int64_t j = 0; j < n; ++j) a[j] += xp * row[j];
  }
}

// The [cols, rows] matrix m holds, row-major: m's transpose.
std::vector<float> transposed(const float* m, int64_t rows, int64_t cols) {
  std::vector<float> t(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = m[r * cols + c];
  return t;
}

// numpy matmul: a 1-D left operand is a row [1, K], a 1-D right operand a column [K, 1];
// batch dimensions broadcast.
void matmul(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  const Shape& a_shape = in[0]->type.shape;
  const Shape& b_shape = in[1]->type.shape;
  const Shape a = a_shape.size() == 1 ? Shape{1, a_shape[0]} : a_shape;
  const Shape b = b_shape.size() == 1 ? Shape{b_shape[0], 1} : b_shape;
  const int64_t m = a[a.size() - 2], k = a[a.size() - 1], n = b[b.size() - 1];
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const Shape batch = *ir::broadcast_shapes(a_batch, b_batch);
  const std::vector<int64_t> a_strides = broadcast_strides(a_batch, batch);
  const std::vector<int64_t> b_strides = broadcast_strides(b_batch, batch);
  const FloatOperand x_operand(*in[0]), y_operand(*in[1]);
  const float* x = x_operand.data();
  const float* y = y_operand.data();
  float* z = out.f32();
  std::vector<double> acc(static_cast<size_t>(n));
  for (int64_t bi = 0; bi < ir::shape_numel(batch); ++bi) {
    const std::vector<int64_t> coords = unravel(bi, batch);
    const float* xa = x + offset_of(coords, a_strides) * m * k;
    const float* yb = y + offset_of(coords, b_strides) * k * n;
    for (int64_t i = 0; i < m; ++i) {
      row_times_matrix(xa + i * k, yb, k, n, acc);
      for (int64_t j = 0; j < n; ++j) z[(bi * m + i) * n + j] = static_cast<float>(acc[j]);
    }
  }
}

// Y = alpha * A' B' + beta * C, A' = transA ? A^T : A, B' likewise; C broadcasts to [M, N].
void gemm(const ir::Graph&, const ir::Node& node, const KernelInputs& in, HostTensor& out) {
  const bool trans_a = node.attr_int("transA") != 0, trans_b = node.attr_int("transB") != 0;
  const double alpha = node.attr_float("alpha"), beta = node.attr_float("beta");
  const Shape& as = in[0]->type.shape;
  const int64_t m = out.type.shape[0], n = out.type.shape[1], k = trans_a ? as[0] : as[1];
  const FloatOperand a_operand(*in[0]), b_operand(*in[1]);
  const float* a = a_operand.data();
  const float* b = b_operand.data();
  // A' [M, K] and B' [K, N] in row-major order.
  std::vector<float> a_rows, b_rows;
  if (trans_a) a = (a_rows = transposed(a, k, m)).data();
  if (trans_b) b = (b_rows = transposed(b, n, k)).data();
  std::vector<int64_t> c_strides;
  if (in.size() > 2 && in[2]) c_strides = broadcast_strides(in[2]->type.shape, {m, n});
  std::vector<double> acc(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    row_times_matrix(a + i * k, b, k, n, acc);
    for (int64_t j = 0; j < n; ++j) {
      double y = alpha * acc[j];
      if (!c_strides.empty()) y += beta * in[2]->f32()[offset_of({i, j}, c_strides)];
      out.f32()[i * n + j] = static_cast<float>(y);
    }
  }
}

// Every kernel position's coordinates, in row-major order of the kernel.
std::vector<std::vector<int64_t>> kernel_positions(const ir::SpatialGeometry& geo) {
  std::vector<std::vector<int64_t>> positions;
  for (int64_t i = 0; i < ir::shape_numel(geo.kernel); ++i)
    positions.push_back(unravel(i, geo.kernel));
  return positions;
}

// The input position (flat within the spatial extents) that output position `o` reads at
// kernel position `k` in a forward window, or -1 when it falls into the padding.
int64_t window_input(const ir::SpatialGeometry& geo, const std::vector<int64_t>& o,
                     const std::vector<int64_t>& k) {
  int64_t flat = 0;
  for (size_t d = 0; d < o.size(); ++d) {
    const int64_t p = o[d] * geo.strides[d] - geo.pads_begin[d] + k[d] * geo.dilations[d];
    if (p < 0 || p >= geo.input[d]) return -1;
    flat = flat * geo.input[d] + p;
  }
  return flat;
}

// window_input for every output position (rows) and kernel position (columns): computed
// once per operator rather than once per multiply-add, which made the reference the slow
// part of a large network's tuning.
std::vector<int64_t> window_inputs(const ir::SpatialGeometry& geo) {
  const std::vector<std::vector<int64_t>> kernel = kernel_positions(geo);
  const int64_t out_size = ir::shape_numel(geo.output);
  std::vector<int64_t> table;
  table.reserve(static_cast<size_t>(out_size) * kernel.size());
  for (int64_t o = 0; o < out_size; ++o) {
    const std::vector<int64_t> oc = unravel(o, geo.output);
    for (const std::vector<int64_t>& k : kernel) table.push_back(window_input(geo, oc, k));
  }
  return table;
}

// y[n, m, o] = B[m] + sum over c in m's group, k: x[n, c, o * s - pb + k * d] * w[m, c, k]
void conv(const ir::Graph& g, const ir::Node& node, const KernelInputs& in, HostTensor& out) {
  const ir::SpatialGeometry geo = ir::spatial_geometry(g, node);
  const Shape& xs = in[0]->type.shape;
  const int64_t batch = xs[0], channels = xs[1], maps = out.type.shape[1];
  const int64_t group = node.attr_int("group");
  const int64_t channels_per_group = channels / group, maps_per_group = maps / group;
  const int64_t in_size = ir::shape_numel(geo.input), out_size = ir::shape_numel(geo.output);
  const int64_t kernel_size = ir::shape_numel(geo.kernel);
  const std::vector<int64_t> sources = window_inputs(geo);
  const FloatOperand x_operand(*in[0]), w_operand(*in[1]);
  const float* x = x_operand.data();
  const float* w = w_operand.data();
  const float* bias = in.size() > 2 && in[2] ? in[2]->f32() : nullptr;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t m = 0; m < maps; ++m) {
      const int64_t first_channel = (m / maps_per_group) * channels_per_group;
      for (int64_t o = 0; o < out_size; ++o) {
        const int64_t* source = &sources[static_cast<size_t>(o * kernel_size)];
        double acc = bias ? bias[m] : 0.0;
        for (int64_t c = 0; c < channels_per_group; ++c) {
          const float* xc = x + (n * channels + first_channel + c) * in_size;
          const float* wc = w + (m * channels_per_group + c) * kernel_size;
          for (int64_t k = 0; k < kernel_size; ++k)
            if (source[k] >= 0) acc += double(xc[source[k]]) * wc[k];
        }
        out.f32()[(n * maps + m) * out_size + o] = static_cast<float>(acc);
      }
    }
}

// The transpose of conv: input position i scatters x[n, c, i] * w[c, m, k] onto output
// position i * s - pb + k * d. Computed here as a gather: output o receives from every k
// with (o + pb - k * d) a multiple of s whose quotient is an input position.
void conv_transpose(const ir::Graph& g, const ir::Node& node, const KernelInputs& in,
                    HostTensor& out) {
  const ir::SpatialGeometry geo = ir::spatial_geometry(g, node);
  const Shape& xs = in[0]->type.shape;
  const int64_t batch = xs[0], channels = xs[1], maps = out.type.shape[1];
  const int64_t group = node.attr_int("group");
  const int64_t channels_per_group = channels / group, maps_per_group = maps / group;
  const int64_t in_size = ir::shape_numel(geo.input), out_size = ir::shape_numel(geo.output);
  const int64_t kernel_size = ir::shape_numel(geo.kernel);
  const std::vector<std::vector<int64_t>> kernel = kernel_positions(geo);
  const FloatOperand x_operand(*in[0]), w_operand(*in[1]);
  const float* x = x_operand.data();
  const float* w = w_operand.data();
  const float* bias = in.size() > 2 && in[2] ? in[2]->f32() : nullptr;
  auto source = [&](const std::vector<int64_t>& o, const std::vector<int64_t>& k) -> int64_t {
    int64_t flat = 0;
    for (size_t d = 0; d < o.size(); ++d) {
      const int64_t t = o[d] + geo.pads_begin[d] - k[d] * geo.dilations[d];
      if (t < 0 || t % geo.strides[d] != 0 || t / geo.strides[d] >= geo.input[d]) return -1;
      flat = flat * geo.input[d] + t / geo.strides[d];
    }
    return flat;
  };
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t m = 0; m < maps; ++m) {
      const int64_t first_channel = (m / maps_per_group) * channels_per_group;
      const int64_t map_in_group = m % maps_per_group;
      for (int64_t o = 0; o < out_size; ++o) {
        const std::vector<int64_t> oc = unravel(o, geo.output);
        double acc = bias ? bias[m] : 0.0;
        for (int64_t c = first_channel; c < first_channel + channels_per_group; ++c)
          for (int64_t k = 0; k < kernel_size; ++k) {
            const int64_t i = source(oc, kernel[static_cast<size_t>(k)]);
            if (i < 0) continue;
            acc += double(x[(n * channels + c) * in_size + i]) *
                   w[(c * maps_per_group + map_in_group) * kernel_size + k];
          }
        out.f32()[(n * maps + m) * out_size + o] = static_cast<float>(acc);
      }
    }
}

// Max over the window's positions inside the input: the padding is -inf.
void max_pool(const ir::Graph& g, const ir::Node& node, const KernelInputs& in, HostTensor& out) {
  const ir::SpatialGeometry geo = ir::spatial_geometry(g, node);
  const int64_t planes = in[0]->type.shape[0] * in[0]->type.shape[1];
  const int64_t in_size = ir::shape_numel(geo.input), out_size = ir::shape_numel(geo.output);
  const std::vector<std::vector<int64_t>> kernel = kernel_positions(geo);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t o = 0; o < out_size; ++o) {
      const std::vector<int64_t> oc = unravel(o, geo.output);
      float best = -std::numeric_limits<float>::infinity();
      for (const std::vector<int64_t>& k : kernel) {
        const int64_t i = window_input(geo, oc, k);
        if (i >= 0) best = std::max(best, in[0]->f32()[p * in_size + i]);
      }
      out.f32()[p * out_size + o] = best;
    }
}

// Mean over the window: of its positions inside the input (count_include_pad 0), or of
// those inside the padded input [-pads_begin, extent + pads_end) (count_include_pad 1).
// Positions beyond the end padding (reached with ceil_mode) never count.
void average_pool(const ir::Graph& g, const ir::Node& node, const KernelInputs& in,
                  HostTensor& out) {
  const ir::SpatialGeometry geo = ir::spatial_geometry(g, node);
  const bool count_pad = node.attr_int("count_include_pad") != 0;
  const int64_t planes = in[0]->type.shape[0] * in[0]->type.shape[1];
  const int64_t in_size = ir::shape_numel(geo.input), out_size = ir::shape_numel(geo.output);
  const std::vector<std::vector<int64_t>> kernel = kernel_positions(geo);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t o = 0; o < out_size; ++o) {
      const std::vector<int64_t> oc = unravel(o, geo.output);
      double sum = 0;
      int64_t inside = 0, inside_padded = 0;
      for (const std::vector<int64_t>& k : kernel) {
        bool in_padded = true;
        for (size_t d = 0; d < oc.size(); ++d) {
          const int64_t q = oc[d] * geo.strides[d] - geo.pads_begin[d] + k[d] * geo.dilations[d];
          in_padded = in_padded && q >= -geo.pads_begin[d] && q < geo.input[d] + geo.pads_end[d];
        }
        inside_padded += in_padded;
        const int64_t i = window_input(geo, oc, k);
        if (i < 0) continue;
        sum += in[0]->f32()[p * in_size + i];
        ++inside;
      }
      const int64_t count = count_pad ? inside_padded : inside;
      out.f32()[p * out_size + o] = static_cast<float>(sum / static_cast<double>(count));
    }
}

void global_average_pool(const ir::Graph&, const ir::Node&, const KernelInputs& in,
                         HostTensor& out) {
  const Shape& xs = in[0]->type.shape;
  const int64_t planes = xs[0] * xs[1], size = in[0]->type.numel() / planes;
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0;
    for (int64_t i = 0; i < size; ++i) sum += in[0]->f32()[p * size + i];
    out.f32()[p] = static_cast<float>(sum / static_cast<double>(size));
  }
}

// y = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + B[c], c the dimension-1 index.
void batch_normalization(const ir::Graph&, const ir::Node& node, const KernelInputs& in,
                         HostTensor& out) {
  const Shape& xs = in[0]->type.shape;
  const int64_t channels = xs[1], inner = in[0]->type.numel() / (xs[0] * channels);
  const double epsilon = static_cast<float>(node.attr_float("epsilon"));
  for (int64_t i = 0; i < in[0]->type.numel(); ++i) {
    const int64_t c = (i / inner) % channels;
    const double normalized =
        (in[0]->f32()[i] - double(in[3]->f32()[c])) / std::sqrt(double(in[4]->f32()[c]) + epsilon);
    out.f32()[i] = static_cast<float>(normalized * in[1]->f32()[c] + in[2]->f32()[c]);
  }
}

// Normalises over axes [axis, rank): y = (x - mean) / sqrt(var + epsilon) * Scale + B, with
// Scale and B broadcast to X's shape.
void layer_normalization(const ir::Graph&, const ir::Node& node, const KernelInputs& in,
                         HostTensor& out) {
  const Shape& xs = in[0]->type.shape;
  const int axis = *ir::normalize_axis(node.attr_int("axis"), static_cast<int64_t>(xs.size()));
  const int64_t inner = ir::shape_numel(Shape(xs.begin() + axis, xs.end()));
  const int64_t outer = in[0]->type.numel() / inner;
  const double epsilon = static_cast<float>(node.attr_float("epsilon"));
  const std::vector<int64_t> scale_strides = broadcast_strides(in[1]->type.shape, xs);
  const bool has_bias = in.size() > 2 && in[2];
  const std::vector<int64_t> bias_strides =
      has_bias ? broadcast_strides(in[2]->type.shape, xs) : std::vector<int64_t>{};
  const float* x = in[0]->f32();
  for (int64_t o = 0; o < outer; ++o) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i) mean += x[o * inner + i];
    mean /= static_cast<double>(inner);
    for (int64_t i = 0; i < inner; ++i)
      var += (x[o * inner + i] - mean) * (x[o * inner + i] - mean);
    var /= static_cast<double>(inner);
    const double inv_std = 1.0 / std::sqrt(var + epsilon);
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t flat = o * inner + i;
      const std::vector<int64_t> coords = unravel(flat, xs);
      double y = (x[flat] - mean) * inv_std * in[1]->f32()[offset_of(coords, scale_strides)];
      if (has_bias) y += in[2]->f32()[offset_of(coords, bias_strides)];
      out.f32()[flat] = static_cast<float>(y);
    }
  }
}

// Softmax-13: over the one axis, exp(x - max) / sum(exp(x - max)).
void softmax(const ir::Graph&, const ir::Node& node, const KernelInputs& in, HostTensor& out) {
  const Shape& xs = in[0]->type.shape;
  const int axis = *ir::normalize_axis(node.attr_int("axis"), static_cast<int64_t>(xs.size()));
  const int64_t extent = xs[static_cast<size_t>(axis)];
  const int64_t inner = ir::shape_numel(Shape(xs.begin() + axis + 1, xs.end()));
  const int64_t outer = in[0]->type.numel() / (extent * inner);
  const float* x = in[0]->f32();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * extent + j) * inner + i; };
      double max = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t j = 0; j < extent; ++j) max = std::max(max, double(x[at(j)]));
      for (int64_t j = 0; j < extent; ++j) sum += std::exp(x[at(j)] - max);
      for (int64_t j = 0; j < extent; ++j)
        out.f32()[at(j)] = static_cast<float>(std::exp(x[at(j)] - max) / sum);
    }
}

}  // namespace

void add_nn_kernels(KernelTable& table) {
  table["MatMul"] = matmul;
  table["Gemm"] = gemm;
  table["Conv"] = conv;
  table["ConvTranspose"] = conv_transpose;
  table["MaxPool"] = max_pool;
  table["AveragePool"] = average_pool;
  table["GlobalAveragePool"] = global_average_pool;
  table["BatchNormalization"] = batch_normalization;
  table["LayerNormalization"] = layer_normalization;
  table["Softmax"] = softmax;
}

}  // namespace tlmc::reference
