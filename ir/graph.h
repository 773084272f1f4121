// The graph IR: tensors and ONNX-semantics operator nodes, as read from a model. A Graph
// is built by a frontend, checked by verify_graph (ir/graph_verify.h) and afterwards
// treated as immutable: passes build a new Graph rather than edit one in place.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/dtype.h"

namespace tlmc::ir {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& s);
std::string shape_str(const Shape& s);  // "[1, 3, 224, 224]"

// The numeric limits of a model (docs/driver.md, "Limits"), checked by the readers before
// they allocate and by verify_graph on every tensor and integer attribute: beyond them a
// model is refused rather than compiled into code whose sizes overflow or cannot be run.
constexpr int64_t kMaxDimension = (int64_t{1} << 31) - 1;           // one axis of a tensor
constexpr int64_t kMaxElements = (int64_t{1} << 32);                // one tensor (16 GiB of float)
constexpr int64_t kMaxAttributeMagnitude = (int64_t{1} << 31) - 1;  // |an integer attribute|
// All of a model's weights together, in bytes: checked as they are read, before each is
// allocated, and again on what a library embeds (addressed with 32-bit offsets).
constexpr int64_t kMaxWeightBytes = int64_t{2} << 30;
// Why a shape is beyond the limits ("its axis 2 is 1099511627776, beyond 2^31 - 1"), or
// empty when it is within them.
std::string shape_beyond_limits(const Shape& s);

struct TensorType {
  DType dtype = DType::Float32;
  Shape shape;
  int64_t numel() const { return shape_numel(shape); }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  bool operator==(const TensorType& o) const { return dtype == o.dtype && shape == o.shape; }
};

enum class TensorKind { Input, Weight, Intermediate };

struct Tensor {
  std::string name;
  TensorType type;
  TensorKind kind = TensorKind::Intermediate;
  // Weights only: the raw little-endian bytes, type.bytes() long.
  std::shared_ptr<const std::vector<uint8_t>> data;
  SourceLoc loc;  // where the tensor is declared or produced
};

// An attribute value of one of the ONNX attribute types tlmc supports.
using AttrValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

enum class AttrKind { Int, Float, String, Ints, Floats };
AttrKind attr_kind(const AttrValue& v);
std::string_view attr_kind_name(AttrKind k);

struct Attr {
  AttrValue value;
  SourceLoc loc;
};

struct Node {
  std::string name;          // optional, used in messages
  std::string op;            // ONNX operator name
  std::vector<int> inputs;   // tensor ids; -1 for an omitted optional input
  std::vector<int> outputs;  // tensor ids
  // After verification every attribute of the operator's schema is present (defaults
  // filled in), so passes read them without repeating the defaults.
  std::map<std::string, Attr> attrs;
  SourceLoc loc;

  int64_t attr_int(const std::string& key) const;
  double attr_float(const std::string& key) const;
  const std::string& attr_string(const std::string& key) const;
  const std::vector<int64_t>& attr_ints(const std::string& key) const;
  const std::vector<double>& attr_floats(const std::string& key) const;
  // "Conv 'conv1'" or "Conv" for messages.
  std::string describe() const;
};

struct Graph {
  std::string name;  // C identifier
  int opset = 17;
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;   // topologically ordered once verified
  std::vector<int> inputs;   // tensor ids, in API order
  std::vector<int> outputs;  // tensor ids, in API order
  // Files the model was read from (the model, weight files): what a build must watch.
  std::vector<std::string> source_files;

  const Tensor& tensor(int id) const { return tensors.at(static_cast<size_t>(id)); }
  const TensorType& type(int id) const { return tensor(id).type; }
  // -1 when no tensor has that name.
  int find_tensor(const std::string& name) const;
  // For each tensor, the node producing it (-1 for inputs and weights).
  std::vector<int> producers() const;
  // For each tensor, the nodes reading it (in node order).
  std::vector<std::vector<int>> consumers() const;
  bool is_output(int tensor_id) const;
};

// Reads a weight's elements as doubles (any dtype); for constant folding and reference use.
std::vector<double> weight_values(const Tensor& t);
std::vector<int64_t> weight_ints(const Tensor& t);
// A weight tensor holding the given float32 values.
std::shared_ptr<const std::vector<uint8_t>> float_bytes(const std::vector<float>& v);

}  // namespace tlmc::ir

namespace tlmc::ir {
// Readable text of the graph (--dump=graph): inputs, weights, nodes with types, outputs.
std::string graph_str(const Graph& g);
}  // namespace tlmc::ir
