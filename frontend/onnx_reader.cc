#include "frontend/onnx_reader.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "frontend/compute_shapes.h"
#include "frontend/external_data_path.h"
#include "frontend/model_name.h"
#include "ir/graph_verify.h"
#include "ir/op_schema.h"

namespace tlmc::frontend {
namespace {

namespace fs = std::filesystem;
using ir::DType;

constexpr int kOldestOpset = 11;

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

// The tlmc dtype of an ONNX element type; nullopt for the ones tlmc has no type for.
std::optional<DType> dtype_of(int onnx_type) {
  switch (onnx_type) {
    case onnx::TensorProto::FLOAT:
      return DType::Float32;
    case onnx::TensorProto::DOUBLE:
      return DType::Float64;
    case onnx::TensorProto::FLOAT16:
      return DType::Float16;
    case onnx::TensorProto::BFLOAT16:
      return DType::BFloat16;
    case onnx::TensorProto::INT32:
      return DType::Int32;
    case onnx::TensorProto::INT64:
      return DType::Int64;
    case onnx::TensorProto::INT8:
      return DType::Int8;
    case onnx::TensorProto::UINT8:
      return DType::UInt8;
    case onnx::TensorProto::BOOL:
      return DType::Bool;
    default:
      return std::nullopt;
  }
}

std::string onnx_type_name(int onnx_type) {
  const auto* d = onnx::TensorProto_DataType_descriptor();
  const auto* v = d->FindValueByNumber(onnx_type);
  return v ? v->name() : "type " + std::to_string(onnx_type);
}

// Collects everything the model uses that tlmc does not support, to report all at once.
class Unsupported {
 public:
  void add(const std::string& what, const std::string& where) {
    auto& places = items_[what];
    if (std::find(places.begin(), places.end(), where) == places.end()) places.push_back(where);
  }
  bool empty() const { return items_.empty(); }
  std::string text() const {
    std::string out;
    for (const auto& [what, places] : items_) {
      out += "\n  " + what + " (";
      for (size_t i = 0; i < places.size() && i < 8; ++i) out += (i ? ", " : "") + places[i];
      if (places.size() > 8) out += ", and " + std::to_string(places.size() - 8) + " more";
      out += ")";
    }
    return out;
  }

 private:
  std::map<std::string, std::vector<std::string>> items_;
};

class OnnxReader {
 public:
  OnnxReader(std::string path, const OnnxOptions& options)
      : path_(std::move(path)), options_(options) {}

  ir::Graph read() {
    onnx::ModelProto model = parse();
    // Before the checker, which opens external files itself.
    check_external_locations(model.graph());
    refuse_what_inference_cannot_take(model.graph());
    check(model);
    opset_ = model_opset(model);
    const onnx::GraphProto& graph = model.graph();
    g_.name =
        c_identifier_from(graph.name().empty() ? fs::path(path_).stem().string() : graph.name());
    if (!graph.name().empty() && !is_c_identifier(g_.name)) g_.name = name_from_path(path_);
    g_.opset = ir::kMaxOpset;  // nodes are rewritten to the opset-17 forms below
    g_.source_files.push_back(path_);
    for (const onnx::TensorProto& t : graph.initializer())
      add_weight(t.name(), t, "initializer " + in_quotes(t.name()));
    read_inputs(graph);
    for (int i = 0; i < graph.node_size(); ++i) read_node(graph.node(i), i);
    for (const onnx::ValueInfoProto& o : graph.output()) {
      auto it = ids_.find(o.name());
      if (it == ids_.end())
        fail("graph output " + in_quotes(o.name()) + " is not computed by any node");
      g_.outputs.push_back(it->second);
    }
    if (!unsupported_.empty())
      fail("the model (opset " + std::to_string(opset_) + ") uses what tlmc does not support:" +
           unsupported_.text() + "\nsupported operators: " + ir::supported_op_list());
    narrow_float64_constants();
    ir::Graph g = verify_computing_shapes(std::move(g_));
    return old_softmax_.empty() ? g : rewrite_old_softmax(std::move(g));
  }

 private:
  // Exporters write scalars of float operators as DOUBLE constants (Pow's exponent, whose
  // type ONNX lets differ from the base's; an Add's operand in models ONNX's checker would
  // refuse), and tlmc computes nothing in float64 but Cast, Max, Min and Where. A float64
  // weight is kept as such where one of those reads it or it is an output of the graph;
  // read by other operators alone, it becomes float32 (rounded to nearest), as they compute.
  void narrow_float64_constants() {
    std::vector<bool> keep(g_.tensors.size(), false);
    for (int t : g_.outputs) keep[static_cast<size_t>(t)] = true;
    for (const ir::Node& n : g_.nodes)
      if (n.op == "Cast" || n.op == "Max" || n.op == "Min" || n.op == "Where")
        for (int t : n.inputs)
          if (t >= 0) keep[static_cast<size_t>(t)] = true;
    for (size_t t = 0; t < g_.tensors.size(); ++t) {
      ir::Tensor& w = g_.tensors[t];
      if (w.kind != ir::TensorKind::Weight || w.type.dtype != DType::Float64 || keep[t] || !w.data)
        continue;
      const std::vector<double> values = ir::weight_values(w);
      w.type.dtype = DType::Float32;
      w.data = ir::float_bytes(std::vector<float>(values.begin(), values.end()));
    }
  }

  // Before opset 13, Softmax and LogSoftmax work on the input flattened to 2-D at `axis`:
  // unless that axis is the last one, Flatten, Softmax over the last axis, Reshape back.
  ir::Graph rewrite_old_softmax(ir::Graph g) {
    std::vector<ir::Node> nodes;
    for (ir::Node& n : g.nodes) {
      const bool old = (n.op == "Softmax" || n.op == "LogSoftmax") &&
                       std::find(old_softmax_.begin(), old_softmax_.end(),
                                 g.tensor(n.outputs[0]).name) != old_softmax_.end();
      const ir::Shape shape = g.type(n.inputs[0]).shape;
      const int64_t rank = static_cast<int64_t>(shape.size());
      int64_t axis = old ? n.attr_int("axis") : 0;
      if (axis < 0) axis += rank;
      if (!old || axis == rank - 1) {
        nodes.push_back(n);
        continue;
      }
      auto tensor = [&](const std::string& base, ir::DType dt) {
        ir::Tensor t;
        t.name = base;
        for (int k = 2; g.find_tensor(t.name) >= 0; ++k) t.name = base + "." + std::to_string(k);
        t.type.dtype = dt;
        t.loc = n.loc;
        g.tensors.push_back(t);
        return static_cast<int>(g.tensors.size()) - 1;
      };
      const std::string& y = g.tensor(n.outputs[0]).name;
      const int flat = tensor(y + ".flat", ir::DType::Float32),
                soft = tensor(y + ".2d", ir::DType::Float32);
      const int shape_const = tensor(y + ".shape", ir::DType::Int64);
      ir::Tensor& sc = g.tensors[static_cast<size_t>(shape_const)];
      sc.kind = ir::TensorKind::Weight;
      sc.type.shape = {rank};
      auto bytes = std::make_shared<std::vector<uint8_t>>(shape.size() * 8);
      if (!shape.empty()) std::memcpy(bytes->data(), shape.data(), bytes->size());
      sc.data = bytes;
      ir::Node flatten{n.name, "Flatten", {n.inputs[0]}, {flat}, {{"axis", ir::Attr{axis, n.loc}}},
                       n.loc};
      ir::Node softmax{n.name, n.op, {flat}, {soft}, {{"axis", ir::Attr{int64_t{-1}, n.loc}}},
                       n.loc};
      ir::Node reshape{n.name, "Reshape", {soft, shape_const}, {n.outputs[0]}, {}, n.loc};
      nodes.push_back(flatten);
      nodes.push_back(softmax);
      nodes.push_back(reshape);
    }
    g.nodes = std::move(nodes);
    return ir::verify_graph(std::move(g));
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw Diagnostic(SourceLoc{path_, 0, 0}, message);
  }

  onnx::ModelProto parse() {
    std::error_code ec;
    if (!fs::exists(path_, ec)) fail("cannot read the model: no such file");
    if (fs::is_directory(path_, ec)) fail("cannot read the model: it is a folder");
    if (fs::file_size(path_, ec) >= (uint64_t{2} << 30))
      fail(
          "the file is 2 GiB or larger, beyond what protobuf can parse: save the model with its "
          "weights as "
          "external data (onnx.save_model(..., save_as_external_data=True))");
    std::ifstream in(path_, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in && !in.eof()) fail("cannot read the model");
    onnx::ModelProto model;
    if (bytes.empty() || !model.ParseFromString(bytes) || !model.has_graph())
      fail("not a readable ONNX model: the file is truncated, corrupt, or of another type");
    return model;
  }

  // Attributes that ONNX's own shape inference (libonnx 1.12) cannot take without
  // crashing: a pooling stride of 0 is a division by zero in it (SIGFPE), so strides,
  // dilations and block sizes below 1 are refused before it runs, in every graph.
  void refuse_what_inference_cannot_take(const onnx::GraphProto& graph) const {
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto& n = graph.node(i);
      for (const onnx::AttributeProto& a : n.attribute()) {
        const bool per_axis = a.name() == "strides" || a.name() == "dilations";
        for (int64_t v : a.ints())
          if (per_axis && v < 1)
            fail(n.op_type() + " " + node_label(n, i) + " has " + a.name() + " " +
                 std::to_string(v) + ": each must be at least 1");
        if (a.name() == "blocksize" && a.type() == onnx::AttributeProto::INT && a.i() < 1)
          fail(n.op_type() + " " + node_label(n, i) + " has blocksize " + std::to_string(a.i()) +
               ": it must be at least 1");
        if (a.has_g()) refuse_what_inference_cannot_take(a.g());
        for (const onnx::GraphProto& g : a.graphs()) refuse_what_inference_cannot_take(g);
      }
    }
  }

  // ONNX's checker and shape inference, on the model with its symbolic inputs fixed.
  void check(onnx::ModelProto& model) {
    try {
      // The file form: it resolves external data relative to the model's folder.
      onnx::checker::check_model(path_);
    } catch (const std::exception& e) {
      fail(std::string("the ONNX checker rejects the model: ") + e.what());
    }
    fix_input_shapes(*model.mutable_graph());
    try {
      onnx::shape_inference::InferShapes(model);
    } catch (const std::exception& e) {
      // What tlmc cannot read anyway is reported with everything else it does not support.
      if (unsupported_.empty())
        fail(std::string("ONNX shape inference fails on the model: ") + e.what());
    }
  }

  int model_opset(const onnx::ModelProto& model) const {
    int opset = -1;
    for (const onnx::OperatorSetIdProto& o : model.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
    if (opset < 0) fail("the model imports no version of the default ONNX operator set");
    if (opset < kOldestOpset || opset > ir::kMaxOpset)
      fail("the model uses opset " + std::to_string(opset) + "; tlmc reads opsets " +
           std::to_string(kOldestOpset) + " to " + std::to_string(ir::kMaxOpset) +
           " (convert it with onnx.version_converter)");
    return opset;
  }

  bool is_initializer(const onnx::GraphProto& graph, const std::string& name) const {
    for (const onnx::TensorProto& t : graph.initializer())
      if (t.name() == name) return true;
    return false;
  }

  // Applies --input-shape to the graph's inputs, and checks every input has a static shape.
  void fix_input_shapes(onnx::GraphProto& graph) {
    std::set<std::string> used;
    for (onnx::ValueInfoProto& in : *graph.mutable_input()) {
      if (is_initializer(graph, in.name())) continue;
      if (!in.type().has_tensor_type()) {
        unsupported_.add("graph inputs that are not tensors (sequences, optionals, maps)",
                         "input " + in_quotes(in.name()));
        continue;
      }
      onnx::TensorShapeProto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
      auto given = options_.input_shapes.find(in.name());
      if (given != options_.input_shapes.end()) {
        used.insert(in.name());
        const ir::Shape& s = given->second;
        if (shape->dim_size() != static_cast<int>(s.size()))
          fail("--input-shape " + in.name() + " gives " + std::to_string(s.size()) +
               " dimensions; the input has " + std::to_string(shape->dim_size()));
        for (int d = 0; d < shape->dim_size(); ++d) {
          onnx::TensorShapeProto::Dimension* dim = shape->mutable_dim(d);
          if (dim->has_dim_value() && dim->dim_value() != s[static_cast<size_t>(d)])
            fail("--input-shape " + in.name() + " sets dimension " + std::to_string(d) + " to " +
                 std::to_string(s[static_cast<size_t>(d)]) + ", but the model fixes it at " +
                 std::to_string(dim->dim_value()));
          dim->set_dim_value(s[static_cast<size_t>(d)]);
        }
      }
      for (int d = 0; d < shape->dim_size(); ++d) {
        const onnx::TensorShapeProto::Dimension& dim = shape->dim(d);
        if (dim.has_dim_value() && dim.dim_value() >= 0) continue;
        const std::string what = dim.has_dim_param()
                                     ? "symbolic dimension " + in_quotes(dim.dim_param())
                                     : "unknown dimension";
        fail("graph input " + in_quotes(in.name()) + " has a " + what + " (dimension " +
             std::to_string(d) + "): fix it with --input-shape " + in.name() +
             "=D0xD1x... (every dimension, e.g. 1x3x224x224)");
      }
    }
    for (const auto& [name, shape] : options_.input_shapes)
      if (!used.count(name))
        fail("--input-shape names " + in_quotes(name) + ", which is not an input of the model");
  }

  // A weight whose bytes are all zero: false, 0, 0.0.
  bool is_constant_false(int tensor) const {
    const ir::Tensor& t = g_.tensor(tensor);
    if (t.kind != ir::TensorKind::Weight || !t.data) return false;
    for (uint8_t b : *t.data)
      if (b != 0) return false;
    return true;
  }

  void read_inputs(const onnx::GraphProto& graph) {
    for (const onnx::ValueInfoProto& in : graph.input()) {
      if (is_initializer(graph, in.name())) continue;
      if (!in.type().has_tensor_type()) {  // listed as unsupported; defined so readers resolve
        ir::Tensor t;
        t.name = in.name();
        t.kind = ir::TensorKind::Input;
        define(std::move(t));
        continue;
      }
      const onnx::TypeProto_Tensor& tt = in.type().tensor_type();
      const std::optional<DType> dt = dtype_of(tt.elem_type());
      if (!dt)
        unsupported_.add("element type " + onnx_type_name(tt.elem_type()),
                         "input " + in_quotes(in.name()));
      ir::Tensor t;
      t.name = in.name();
      t.kind = ir::TensorKind::Input;
      t.type.dtype = dt.value_or(DType::Float32);
      for (const auto& d : tt.shape().dim()) t.type.shape.push_back(d.dim_value());
      t.loc = SourceLoc{path_, 0, 0};
      g_.inputs.push_back(define(t));
    }
  }

  int define(ir::Tensor t) {
    if (ids_.count(t.name)) fail("tensor " + in_quotes(t.name) + " is defined twice");
    const int id = static_cast<int>(g_.tensors.size());
    ids_[t.name] = id;
    g_.tensors.push_back(std::move(t));
    return id;
  }

  struct ExternalData {
    std::string location;
    int64_t offset = 0;
    int64_t length = -1;  // -1: not given
  };

  // A tensor's external-data entries, read and checked, and its file opened (checked to lie
  // in the model's folder: external_data_path.h).
  std::pair<ExternalData, ExternalDataFile> external_data(const onnx::TensorProto& t,
                                                          const std::string& where) const {
    ExternalData d;
    auto number = [&](const std::string& key, const std::string& text) {
      int64_t v = -1;
      const char* end = text.data() + text.size();
      const auto [p, ec] = std::from_chars(text.data(), end, v);
      if (ec != std::errc() || p != end || v < 0)
        fail(where + ": its external data has the " + key + " " + in_quotes(text) +
             ", which is not a byte count");
      return v;
    };
    for (const onnx::StringStringEntryProto& e : t.external_data()) {
      if (e.key() == "location") d.location = e.value();
      if (e.key() == "offset") d.offset = number("offset", e.value());
      if (e.key() == "length") d.length = number("length", e.value());
    }
    std::variant<ExternalDataFile, RefusedLocation> file = open_external_data(path_, d.location);
    if (const auto* refused = std::get_if<RefusedLocation>(&file))
      fail(where + ": its external data " + refused->reason);
    return {d, std::move(std::get<ExternalDataFile>(file))};
  }

  // Every external location of the graph's initializers and Constant nodes, checked.
  void check_external_locations(const onnx::GraphProto& graph) const {
    for (const onnx::TensorProto& t : graph.initializer())
      if (t.data_location() == onnx::TensorProto::EXTERNAL)
        external_data(t, "initializer " + in_quotes(t.name()));
    for (const onnx::NodeProto& n : graph.node())
      for (const onnx::AttributeProto& a : n.attribute())
        if (a.has_t() && a.t().data_location() == onnx::TensorProto::EXTERNAL)
          external_data(a.t(), "the " + in_quotes(a.name()) + " of node " + in_quotes(n.name()));
  }

  // The `bytes` bytes of a tensor stored as external data, read from the one descriptor
  // that was checked; the file's size is compared with them before anything is allocated.
  std::vector<uint8_t> external_bytes(const onnx::TensorProto& t, size_t bytes,
                                      const std::string& where) {
    const auto [ext, file] = external_data(t, where);
    if (ext.length >= 0 && static_cast<size_t>(ext.length) != bytes)
      fail(where + ": its external data has " + std::to_string(ext.length) +
           " bytes, its shape needs " + std::to_string(bytes));
    if (file.size() < static_cast<uint64_t>(ext.offset) + bytes)
      fail(where + ": external file " + in_quotes(ext.location) + " is too short (" +
           std::to_string(file.size()) + " bytes, needs " +
           std::to_string(static_cast<uint64_t>(ext.offset) + bytes) + ")");
    std::vector<uint8_t> out(bytes);
    if (!file.read(static_cast<uint64_t>(ext.offset), out.data(), bytes))
      fail(where + ": cannot read external file " + in_quotes(ext.location));
    const std::string named = file.named().string();
    if (std::find(g_.source_files.begin(), g_.source_files.end(), named) == g_.source_files.end())
      g_.source_files.push_back(named);
    return out;
  }

  // A tensor's raw_data, which must hold exactly `bytes` bytes.
  std::vector<uint8_t> raw_bytes(const onnx::TensorProto& t, size_t bytes,
                                 const std::string& where) const {
    if (t.raw_data().size() != bytes)
      fail(where + " has " + std::to_string(t.raw_data().size()) +
           " bytes of data, its shape needs " + std::to_string(bytes));
    return std::vector<uint8_t>(t.raw_data().begin(), t.raw_data().end());
  }

  // The bytes of a TensorProto, from raw_data, the typed fields, or an external file. The
  // declared size is compared with the bytes that exist before anything is allocated: a
  // small file must not make tlmc reserve the gigabytes its shapes claim.
  std::vector<uint8_t> tensor_bytes(const onnx::TensorProto& t, DType dt, int64_t count,
                                    const std::string& where) {
    const size_t bytes = static_cast<size_t>(count) * ir::dtype_size(dt);
    if (t.data_location() == onnx::TensorProto::EXTERNAL) return external_bytes(t, bytes, where);
    if (t.has_raw_data()) return raw_bytes(t, bytes, where);
    auto expect = [&](int have) {
      if (have != count)
        fail(where + " has " + std::to_string(have) + " values, its shape needs " +
             std::to_string(count));
    };
    std::vector<uint8_t> out;
    switch (dt) {
      case DType::Float32:
        expect(t.float_data_size());
        copy_values(&out, t.float_data().data(), bytes);
        break;
      case DType::Float64:
        expect(t.double_data_size());
        copy_values(&out, t.double_data().data(), bytes);
        break;
      case DType::Int64:
        expect(t.int64_data_size());
        copy_values(&out, t.int64_data().data(), bytes);
        break;
      case DType::Int32:
        expect(t.int32_data_size());
        copy_values(&out, t.int32_data().data(), bytes);
        break;
      case DType::Int8:
      case DType::UInt8:
      case DType::Bool:
        expect(t.int32_data_size());
        out.resize(bytes);
        for (int64_t i = 0; i < count; ++i)
          out[static_cast<size_t>(i)] = static_cast<uint8_t>(t.int32_data(static_cast<int>(i)));
        break;
      case DType::Float16:
      case DType::BFloat16:
        expect(t.int32_data_size());
        out.resize(bytes);
        for (int64_t i = 0; i < count; ++i) {
          const uint16_t h = static_cast<uint16_t>(t.int32_data(static_cast<int>(i)));
          std::memcpy(out.data() + 2 * i, &h, 2);
        }
        break;
    }
    return out;
  }

  // `bytes` bytes of typed values into `out`; none for a tensor with no elements (whose
  // field may hold no storage at all: memcpy takes no null pointer, even for 0 bytes).
  static void copy_values(std::vector<uint8_t>* out, const void* values, size_t bytes) {
    out->resize(bytes);
    if (bytes) std::memcpy(out->data(), values, bytes);
  }

  // A weight from a TensorProto (an initializer, or a Constant node's value).
  int add_weight(const std::string& name, const onnx::TensorProto& t, const std::string& where) {
    ir::Tensor w;
    w.name = name;
    w.kind = ir::TensorKind::Weight;
    w.loc = SourceLoc{path_, 0, 0};
    for (int64_t d : t.dims()) w.type.shape.push_back(d);
    const std::string beyond = ir::shape_beyond_limits(w.type.shape);  // before allocating
    if (!beyond.empty())
      fail(where + " of shape " + ir::shape_str(w.type.shape) +
           " is beyond tlmc's limits: " + beyond);
    const int64_t count = w.type.numel();
    const std::optional<DType> dt = dtype_of(t.data_type());
    if (!dt) {
      unsupported_.add("element type " + onnx_type_name(t.data_type()), where);
      w.type.dtype = DType::Float32;
      w.data = std::make_shared<const std::vector<uint8_t>>();  // refused after reading
      return define(std::move(w));
    }
    w.type.dtype = *dt;
    weight_bytes_ += w.type.bytes();  // all weights together, before this one is allocated
    if (weight_bytes_ > ir::kMaxWeightBytes)
      fail(where + " brings the model's weights to " + std::to_string(weight_bytes_) +
           " bytes; tlmc reads at most " + std::to_string(ir::kMaxWeightBytes) +
           " (2 GiB), the most a library embeds");
    w.data = std::make_shared<const std::vector<uint8_t>>(tensor_bytes(t, *dt, count, where));
    return define(std::move(w));
  }

  // A constant int64 tensor made from an attribute (axes moved to inputs).
  int add_int_constant(const std::string& name, const std::vector<int64_t>& values) {
    ir::Tensor w;
    w.name = unique_name(name);
    w.kind = ir::TensorKind::Weight;
    w.type = ir::TensorType{DType::Int64, {static_cast<int64_t>(values.size())}};
    auto bytes = std::make_shared<std::vector<uint8_t>>(values.size() * 8);
    if (!values.empty()) std::memcpy(bytes->data(), values.data(), bytes->size());
    w.data = bytes;
    w.loc = SourceLoc{path_, 0, 0};
    return define(std::move(w));
  }

  std::string unique_name(const std::string& base) {
    std::string name = base;
    for (int k = 2; ids_.count(name); ++k) name = base + "." + std::to_string(k);
    return name;
  }

  std::string node_label(const onnx::NodeProto& n, int index) const {
    return n.name().empty() ? "node " + std::to_string(index) : "node " + in_quotes(n.name());
  }

  // Converts one attribute; false (and a note in unsupported_) for the kinds tlmc has no
  // value for.
  bool convert_attr(const onnx::AttributeProto& a, const std::string& where, ir::AttrValue* out) {
    switch (a.type()) {
      case onnx::AttributeProto::INT:
        *out = static_cast<int64_t>(a.i());
        return true;
      case onnx::AttributeProto::FLOAT:
        *out = static_cast<double>(a.f());
        return true;
      case onnx::AttributeProto::STRING:
        *out = a.s();
        return true;
      case onnx::AttributeProto::INTS:
        *out = std::vector<int64_t>(a.ints().begin(), a.ints().end());
        return true;
      case onnx::AttributeProto::FLOATS:
        *out = std::vector<double>(a.floats().begin(), a.floats().end());
        return true;
      default:
        unsupported_.add("attribute " + in_quotes(a.name()) + " of type " +
                             onnx::AttributeProto_AttributeType_Name(a.type()),
                         where);
        return false;
    }
  }

  void read_node(const onnx::NodeProto& n, int index) {
    const std::string where = node_label(n, index) + " (" + n.op_type() + ")";
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      unsupported_.add("operator " + n.domain() + "::" + n.op_type(), node_label(n, index));
      define_outputs(n);
      return;
    }
    if (n.op_type() == "Constant") return read_constant(n, where);
    ir::Node node;
    node.name = n.name();
    node.op = n.op_type();
    node.loc = SourceLoc{path_, 0, 0};
    for (const std::string& in : n.input()) {
      if (in.empty()) {
        node.inputs.push_back(-1);
        continue;
      }
      auto it = ids_.find(in);
      if (it == ids_.end())
        fail(where + " reads " + in_quotes(in) + ", which no node, input or initializer defines");
      node.inputs.push_back(it->second);
    }
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (n.op_type() == "ConstantOfShape" && a.name() == "value") {
        convert_constant_of_shape_value(a, where, node);
        continue;
      }
      ir::AttrValue v;
      if (convert_attr(a, where, &v)) node.attrs[a.name()] = ir::Attr{v, node.loc};
    }
    node_output_name_ = n.output_size() ? n.output(0) : "";
    wants_second_output_ = n.output_size() > 1 && !n.output(1).empty();
    normalise(node, where);
    if (!ir::find_op(node.op)) unsupported_.add("operator " + node.op, node_label(n, index));
    for (const std::string& out : n.output()) {
      if (out.empty()) {
        node.outputs.push_back(-1);
        continue;
      }
      ir::Tensor t;
      t.name = out;
      t.kind = ir::TensorKind::Intermediate;
      t.loc = node.loc;
      node.outputs.push_back(define(std::move(t)));
    }
    emit(std::move(node));
  }

  void define_outputs(const onnx::NodeProto& n) {
    for (const std::string& out : n.output()) {
      if (out.empty()) continue;
      ir::Tensor t;
      t.name = out;
      t.loc = SourceLoc{path_, 0, 0};
      define(std::move(t));
    }
  }

  void emit(ir::Node node) { g_.nodes.push_back(std::move(node)); }

  // Constant: its value becomes a weight named after its output.
  void read_constant(const onnx::NodeProto& n, const std::string& where) {
    const std::string& out = n.output(0);
    for (const onnx::AttributeProto& a : n.attribute()) {
      onnx::TensorProto t;
      if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) {
        t = a.t();
      } else if (a.name() == "value_float") {
        t.set_data_type(onnx::TensorProto::FLOAT);
        t.add_float_data(a.f());
      } else if (a.name() == "value_floats") {
        t.set_data_type(onnx::TensorProto::FLOAT);
        t.add_dims(a.floats_size());
        for (float f : a.floats()) t.add_float_data(f);
      } else if (a.name() == "value_int") {
        t.set_data_type(onnx::TensorProto::INT64);
        t.add_int64_data(a.i());
      } else if (a.name() == "value_ints") {
        t.set_data_type(onnx::TensorProto::INT64);
        t.add_dims(a.ints_size());
        for (int64_t i : a.ints()) t.add_int64_data(i);
      } else {
        unsupported_.add("Constant attribute " + in_quotes(a.name()), where);
        define_outputs(n);
        return;
      }
      add_weight(out, t, where);
      return;
    }
    fail(where + " has no value");
  }

  // ConstantOfShape's TENSOR attribute `value` (one element) as tlmc's value + dtype.
  void convert_constant_of_shape_value(const onnx::AttributeProto& a, const std::string& where,
                                       ir::Node& node) {
    const onnx::TensorProto& t = a.t();
    const std::optional<DType> dt = dtype_of(t.data_type());
    if (!dt) {
      unsupported_.add("ConstantOfShape of element type " + onnx_type_name(t.data_type()), where);
      return;
    }
    ir::Tensor tmp;
    tmp.type = ir::TensorType{*dt, {}};
    tmp.data = std::make_shared<const std::vector<uint8_t>>(tensor_bytes(t, *dt, 1, where));
    node.attrs["value"] = ir::Attr{ir::weight_values(tmp).at(0), node.loc};
    node.attrs["dtype"] = ir::Attr{std::string(ir::dtype_name(*dt)), node.loc};
  }

  // Rewrites a node of an older opset into the form the operator table defines (opset 17):
  // attributes that became inputs move to constant inputs.
  void normalise(ir::Node& node, const std::string& where) {
    auto attr_to_input = [&](const char* attr, size_t position) {
      auto it = node.attrs.find(attr);
      if (it == node.attrs.end()) return;
      const auto* ints = std::get_if<std::vector<int64_t>>(&it->second.value);
      if (!ints) return;
      const int c = add_int_constant(where + "." + attr, *ints);
      node.attrs.erase(it);
      if (node.inputs.size() < position) node.inputs.resize(position, -1);
      node.inputs.insert(node.inputs.begin() + static_cast<long>(position), c);
    };
    const std::string& op = node.op;
    if (opset_ < 13 && (op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum"))
      attr_to_input("axes", 1);
    if (opset_ < 13 && op == "Split") attr_to_input("split", 1);
    if (op == "Dropout") {  // inference: the identity
      // Training mode drops nothing when the ratio is a constant 0.
      const bool zero_ratio =
          node.inputs.size() > 1 && node.inputs[1] >= 0 && is_constant_false(node.inputs[1]);
      const bool training = node.inputs.size() > 2 && node.inputs[2] >= 0 &&
                            !is_constant_false(node.inputs[2]) && !zero_ratio;
      if (training)
        unsupported_.add("Dropout in training mode (training_mode is not a constant false)", where);
      if (wants_second_output_) unsupported_.add("Dropout's mask output", where);
      node.op = "Identity";
      node.inputs.resize(1);
      node.attrs.clear();
    }
    if (opset_ < 13 && (op == "Softmax" || op == "LogSoftmax")) {
      // Before opset 13 Softmax works on the input flattened to 2-D at `axis` (default 1).
      // The trailing-axis case (all exporters write it) is the same as today's; others
      // would need a reshape around the node.
      auto it = node.attrs.find("axis");
      const int64_t axis = it == node.attrs.end() ? 1 : std::get<int64_t>(it->second.value);
      node.attrs["axis"] = ir::Attr{axis, node.loc};
      if (axis != -1) old_softmax_.push_back(node_output_name_);
    }
  }

  std::string path_;
  const OnnxOptions& options_;
  int opset_ = ir::kMaxOpset;
  ir::Graph g_;
  int64_t weight_bytes_ = 0;  // of the weights read so far
  std::map<std::string, int> ids_;
  Unsupported unsupported_;
  std::vector<std::string>
      old_softmax_;               // outputs of pre-13 Softmax nodes, checked once shapes are known
  std::string node_output_name_;  // the first output of the node being read
  bool wants_second_output_ = false;  // whether that node asks for a second output
};

}  // namespace

ir::Graph read_onnx_model(const std::string& path, const OnnxOptions& options) {
  return OnnxReader(path, options).read();
}

}  // namespace tlmc::frontend
