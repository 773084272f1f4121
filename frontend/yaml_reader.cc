#include "frontend/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/compute_shapes.h"
#include "frontend/external_data_path.h"
#include "frontend/model_name.h"
#include "ir/op_schema.h"

namespace tlmc::frontend {
namespace {

using ir::DType;
using ir::TensorKind;

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

// A key as messages quote it: a runaway multi-line key is cut short.
std::string key_in_quotes(const std::string& k) {
  return in_quotes(k.size() <= 40 ? k : k.substr(0, 37) + "...");
}

std::string where(const SourceLoc& loc) {
  return loc.file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column);
}

std::string join(std::initializer_list<const char*> words) {
  std::string out;
  for (const char* w : words) out += (out.empty() ? "" : ", ") + std::string(w);
  return out;
}

// ---------------------------------------------------------------------------------------
// Numbers. YAML 1.2 core schema, for plain (unquoted) scalars only: `1`, `-3`, `0x1F` are
// integers; `1.0`, `1e-5`, `.5`, `.inf`, `-.inf`, `.nan` are floats; anything else is text.

struct Number {
  bool is_int = false;
  int64_t i = 0;
  double d = 0;
};

enum class NumberParse { NotANumber, Ok, OutOfRange };

bool all_digits(std::string_view s, bool hex) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool dec = c >= '0' && c <= '9';
    const bool hexdig = (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!dec && !(hex && hexdig)) return false;
  }
  return true;
}

bool is_float_literal(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t n = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++n;
    return n;
  };
  size_t mantissa = digits();
  if (i < s.size() && s[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

NumberParse parse_number(const YAML::Node& n, Number* out) {
  if (!n.IsScalar() || n.Tag() != "?") return NumberParse::NotANumber;
  std::string_view s = n.Scalar();
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == ".inf" || s == ".Inf" || s == ".INF") {
    out->d = negative ? -HUGE_VAL : HUGE_VAL;
    return NumberParse::Ok;
  }
  if (n.Scalar() == ".nan" || n.Scalar() == ".NaN" || n.Scalar() == ".NAN") {
    out->d = std::nan("");
    return NumberParse::Ok;
  }
  const bool hex = !negative && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  if (hex || all_digits(s, false)) {
    if (hex) s.remove_prefix(2);
    if (!all_digits(s, hex)) return NumberParse::NotANumber;
    uint64_t u = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), u, hex ? 16 : 10);
    const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    if (r.ec != std::errc() || u > limit) return NumberParse::OutOfRange;
    out->is_int = true;
    out->i = negative ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
    out->d = static_cast<double>(out->i);
    return NumberParse::Ok;
  }
  if (!is_float_literal(s)) return NumberParse::NotANumber;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out->d);
  if (r.ec != std::errc()) return NumberParse::OutOfRange;
  if (negative) out->d = -out->d;
  return NumberParse::Ok;
}

// ---------------------------------------------------------------------------------------
// Random initialisation, identical on every platform: splitmix64 for the bits, and for the
// normal distribution Box-Muller with our own ln and cos written with explicit fused
// multiply-adds (correctly rounded everywhere, and leaving the compiler nothing to contract),
// so that no libm's last-bit differences reach the weights. docs/graph-format.md says the
// same for users; tests/frontend/random_init_is_deterministic.cc pins the bytes.

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // k * 2^-53 for a random 53-bit k: uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }

 private:
  uint64_t state_;
};

// FNV-1a, 64-bit: the seed of a randomly initialised weight without a `seed`.
uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// ln(x) for 0 < x <= 1, to about 1e-16.
double portable_log(double x) {
  int e = 0;
  double m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  if (m < 0.70710678118654752) {
    m *= 2;
    --e;
  }
  const double s = (m - 1) / (m + 1);  // |s| < 0.172; ln m = 2 (s + s^3/3 + s^5/5 + ...)
  const double s2 = s * s;
  double p = 1.0 / 23;
  for (int k = 21; k >= 1; k -= 2) p = std::fma(p, s2, 1.0 / k);
  return std::fma(static_cast<double>(e), 0.69314718055994531, (2 * s) * p);
}

// cos(2 pi u) for u in [0, 1), to about 1e-16. The reduction steps are exact.
double portable_cos_turns(double u) {
  // Taylor coefficients (-1)^k / (2k)! and (-1)^k / (2k + 1)!, enough for |t| <= pi / 4.
  static constexpr double kCos[] = {1.0,
                                    -1.0 / 2,
                                    1.0 / 24,
                                    -1.0 / 720,
                                    1.0 / 40320,
                                    -1.0 / 3628800,
                                    1.0 / 479001600,
                                    -1.0 / 87178291200.0,
                                    1.0 / 20922789888000.0,
                                    -1.0 / 6402373705728000.0};
  static constexpr double kSin[] = {1.0,
                                    -1.0 / 6,
                                    1.0 / 120,
                                    -1.0 / 5040,
                                    1.0 / 362880,
                                    -1.0 / 39916800,
                                    1.0 / 6227020800.0,
                                    -1.0 / 1307674368000.0,
                                    1.0 / 355687428096000.0,
                                    -1.0 / 121645100408832000.0};
  double a = std::fabs(u - 0.5);  // cos(2 pi u) = -cos(2 pi a), a in [0, 0.5]
  double sign = -1;
  if (a > 0.25) {  // cos(2 pi a) = -cos(2 pi (0.5 - a))
    a = 0.5 - a;
    sign = -sign;
  }
  const bool use_sin = a > 0.125;  // cos(2 pi a) = sin(2 pi (0.25 - a))
  if (use_sin) a = 0.25 - a;
  const double t = 6.283185307179586477 * a;  // in [0, pi / 4]
  const double t2 = t * t;
  const double* c = use_sin ? kSin : kCos;
  double p = 0;
  for (int k = 9; k >= 0; --k) p = std::fma(p, t2, c[k]);
  return use_sin ? sign * (t * p) : sign * p;
}

// ---------------------------------------------------------------------------------------
// Element encoding: little-endian bytes of one element, whatever the host.

void put_le(uint8_t* p, uint64_t bits, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(bits >> (8 * i));
}

// A float-typed element from a double.
void put_float(uint8_t* p, DType t, double v) {
  const float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  switch (t) {
    case DType::Float32:
      put_le(p, bits, 4);
      return;
    case DType::Float16:
      put_le(p, ir::float_to_half(f), 2);
      return;
    case DType::BFloat16:
      put_le(p, ir::float_to_bfloat16(f), 2);
      return;
    case DType::Float64: {  // the double itself, never rounded through float
      uint64_t wide;
      std::memcpy(&wide, &v, 8);
      put_le(p, wide, 8);
      return;
    }
    case DType::Int32:
    case DType::Int64:
    case DType::Int8:
    case DType::UInt8:
    case DType::Bool:
      break;
  }
  TLMC_ASSERT(false, "put_float on " << ir::dtype_name(t));
}

// An integer-typed element; the value is already known to fit.
void put_int(uint8_t* p, DType t, int64_t v) {
  put_le(p, static_cast<uint64_t>(v), ir::dtype_size(t));
}

// The range of an integer dtype.
std::pair<int64_t, int64_t> int_range(DType t) {
  switch (t) {
    case DType::Int32:
      return {INT32_MIN, INT32_MAX};
    case DType::Int64:
      return {INT64_MIN, INT64_MAX};
    case DType::Int8:
      return {-128, 127};
    case DType::UInt8:
      return {0, 255};
    case DType::Bool:
      return {0, 1};
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float64:
      break;
  }
  TLMC_ASSERT(false, "int_range on " << ir::dtype_name(t));
  return {0, 0};
}

// ---------------------------------------------------------------------------------------

// Where to report a problem with a map entry's value: yaml-cpp places an empty value at
// the next token, so an empty one is reported at its key.
const YAML::Node& value_or_key(const YAML::Node& key, const YAML::Node& value) {
  return value.IsNull() ? key : value;
}

class ModelReader {
 public:
  explicit ModelReader(std::string path) : path_(std::move(path)) {}
  ir::Graph read(const YAML::Node& root);

 private:
  SourceLoc loc(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    if (m.is_null()) return SourceLoc{path_, 0, 0};
    return SourceLoc{path_, m.line + 1, m.column + 1};
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& message) const {
    throw Diagnostic(loc(n), message);
  }

  void check_keys(const YAML::Node& map, std::initializer_list<const char*> allowed,
                  std::initializer_list<const char*> required, const std::string& what) const;
  YAML::Node key_node(const YAML::Node& map, const char* key) const;
  std::string read_string(const YAML::Node& n, const std::string& what) const;
  int64_t read_int(const YAML::Node& n, const std::string& what) const;
  double read_number(const YAML::Node& n, const std::string& what) const;
  uint64_t read_seed(const YAML::Node& n) const;
  ir::Shape read_shape(const YAML::Node& n) const;
  DType read_dtype(const YAML::Node& map) const;

  int define(const std::string& name, TensorKind kind, const YAML::Node& at);
  int resolve(const YAML::Node& name_node) const;
  void read_inputs(const YAML::Node& inputs);
  void read_weights(const YAML::Node& weights);
  void read_weight(const std::string& name, const YAML::Node& key, const YAML::Node& w);
  std::vector<uint8_t> init_bytes(const std::string& name, const ir::TensorType& type,
                                  const YAML::Node& init, const YAML::Node& seed) const;
  std::vector<uint8_t> data_bytes(const std::string& name, const ir::TensorType& type,
                                  const YAML::Node& data) const;
  std::vector<uint8_t> file_bytes(const std::string& name, const ir::TensorType& type,
                                  const YAML::Node& file, const YAML::Node& offset);
  void read_nodes(const YAML::Node& nodes);
  ir::AttrValue read_attr(const YAML::Node& v, const std::string& key) const;
  void read_outputs(const YAML::Node& outputs);

  std::string path_;
  ir::Graph g_;
  int64_t weight_bytes_ = 0;        // of the weights read so far
  std::map<std::string, int> ids_;  // tensor name -> id
};

// Every key is a string among `allowed` and appears once; every key of `required` is there.
void ModelReader::check_keys(const YAML::Node& map, std::initializer_list<const char*> allowed,
                             std::initializer_list<const char*> required,
                             const std::string& what) const {
  std::map<std::string, YAML::Node> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const YAML::Node key = it->first;  // a copy: `it->` yields a temporary
    if (!key.IsScalar()) fail(key, "a key in " + what + " must be a plain word");
    const std::string& k = key.Scalar();
    bool known = false;
    for (const char* a : allowed) known = known || k == a;
    if (!known)
      fail(key,
           "unknown key " + key_in_quotes(k) + " in " + what + " (allowed: " + join(allowed) + ")");
    auto [prev, fresh] = seen.emplace(k, key);
    if (!fresh)
      fail(key, "key " + in_quotes(k) + " appears twice in " + what + " (first at " +
                    where(loc(prev->second)) + ")");
    if (it->second.IsNull()) fail(key, "key " + in_quotes(k) + " has no value");
  }
  for (const char* r : required)
    if (!seen.count(r)) fail(map, what + " is missing the key " + in_quotes(r));
}

// The node of the key itself (for positions); an undefined node when absent.
YAML::Node ModelReader::key_node(const YAML::Node& map, const char* key) const {
  for (auto it = map.begin(); it != map.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->first;
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string ModelReader::read_string(const YAML::Node& n, const std::string& what) const {
  if (!n.IsScalar()) fail(n, what + " must be a string");
  return n.Scalar();
}

int64_t ModelReader::read_int(const YAML::Node& n, const std::string& what) const {
  Number num;
  const NumberParse p = parse_number(n, &num);
  if (p == NumberParse::OutOfRange) fail(n, what + " is out of range");
  if (p != NumberParse::Ok || !num.is_int) fail(n, what + " must be an integer");
  return num.i;
}

// A seed is any 64-bit unsigned integer, in decimal or 0x hexadecimal.
uint64_t ModelReader::read_seed(const YAML::Node& n) const {
  const char* rule = "seed must be an integer from 0 to 2^64 - 1";
  if (!n.IsScalar() || n.Tag() != "?") fail(n, rule);
  std::string_view s = n.Scalar();
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  if (hex) s.remove_prefix(2);
  uint64_t seed = 0;
  if (!all_digits(s, hex)) fail(n, rule);
  const auto r = std::from_chars(s.data(), s.data() + s.size(), seed, hex ? 16 : 10);
  if (r.ec != std::errc()) fail(n, rule);
  return seed;
}

double ModelReader::read_number(const YAML::Node& n, const std::string& what) const {
  Number num;
  const NumberParse p = parse_number(n, &num);
  if (p == NumberParse::OutOfRange) fail(n, what + " is out of range");
  if (p != NumberParse::Ok) fail(n, what + " must be a number");
  return num.d;
}

ir::Shape ModelReader::read_shape(const YAML::Node& n) const {
  const char* rule = "a shape must be a list of non-negative integers";
  if (!n.IsSequence()) fail(n, rule);
  ir::Shape shape;
  for (const YAML::Node& d : n) {
    Number num;
    if (parse_number(d, &num) != NumberParse::Ok || !num.is_int || num.i < 0) fail(d, rule);
    shape.push_back(num.i);
    // Here, before a weight of this shape is allocated.
    const std::string beyond = ir::shape_beyond_limits(shape);
    if (!beyond.empty())
      fail(d, "shape " + ir::shape_str(shape) + "... is beyond tlmc's limits: " + beyond);
  }
  return shape;
}

DType ModelReader::read_dtype(const YAML::Node& map) const {
  const YAML::Node d = map["dtype"];
  if (!d) return DType::Float32;
  const std::string name = d.IsScalar() ? d.Scalar() : "";
  const auto t = ir::parse_dtype(name);
  if (!t)
    fail(d, "unknown dtype " + in_quotes(name) +
                " (allowed: float32, float16, bfloat16, int32, int64, int8, uint8, bool, float64)");
  return *t;
}

int ModelReader::define(const std::string& name, TensorKind kind, const YAML::Node& at) {
  auto it = ids_.find(name);
  if (it != ids_.end())
    fail(at, "tensor " + in_quotes(name) + " is already defined at " +
                 where(g_.tensors[static_cast<size_t>(it->second)].loc));
  const int id = static_cast<int>(g_.tensors.size());
  ir::Tensor t;
  t.name = name;
  t.kind = kind;
  t.loc = loc(at);
  g_.tensors.push_back(std::move(t));
  ids_.emplace(name, id);
  return id;
}

int ModelReader::resolve(const YAML::Node& name_node) const {
  const std::string name = read_string(name_node, "a tensor name");
  auto it = ids_.find(name);
  if (it == ids_.end())
    fail(name_node, "tensor " + in_quotes(name) +
                        " is not defined: it is not an input, a weight or a node output");
  return it->second;
}

void ModelReader::read_inputs(const YAML::Node& inputs) {
  if (!inputs) return;
  if (!inputs.IsMap()) fail(inputs, "'inputs' must be a map from names to {shape, dtype}");
  for (auto it = inputs.begin(); it != inputs.end(); ++it) {
    const std::string name = read_string(it->first, "an input name");
    const YAML::Node v = it->second;
    const std::string what = "input " + in_quotes(name);
    if (!v.IsMap())
      fail(value_or_key(it->first, v), what + " must be a map with keys shape, dtype");
    check_keys(v, {"shape", "dtype"}, {"shape"}, what);
    const ir::TensorType type{read_dtype(v), read_shape(v["shape"])};
    const int id = define(name, TensorKind::Input, it->first);
    g_.tensors[static_cast<size_t>(id)].type = type;
    g_.inputs.push_back(id);
  }
}

void ModelReader::read_weights(const YAML::Node& weights) {
  if (!weights) return;
  if (!weights.IsMap())
    fail(weights, "'weights' must be a map from names to {shape, dtype, init | data | file}");
  for (auto it = weights.begin(); it != weights.end(); ++it)
    read_weight(read_string(it->first, "a weight name"), it->first, it->second);
}

void ModelReader::read_weight(const std::string& name, const YAML::Node& key, const YAML::Node& w) {
  const std::string what = "weight " + in_quotes(name);
  if (!w.IsMap())
    fail(value_or_key(key, w), what + " must be a map with keys shape, dtype, init | data | file");
  check_keys(w, {"shape", "dtype", "init", "data", "file", "seed", "offset"}, {"shape"}, what);
  const ir::TensorType type{read_dtype(w), read_shape(w["shape"])};
  const char* source = nullptr;
  for (const char* s : {"init", "data", "file"}) {
    if (!w[s]) continue;
    if (source)
      fail(key_node(w, s), what + " has both '" + source + "' and '" + s +
                               "': give exactly one of init, data, file");
    source = s;
  }
  if (!source) fail(w, what + " needs one of init, data, file");
  if (w["seed"] && std::string(source) != "init")
    fail(key_node(w, "seed"), "'seed' goes with 'init', not with '" + std::string(source) + "'");
  if (w["offset"] && std::string(source) != "file")
    fail(key_node(w, "offset"),
         "'offset' goes with 'file', not with '" + std::string(source) + "'");

  // All weights together within the limit, before any is allocated: `init: zeros` of a
  // legal shape can ask for 16 GiB in a line.
  weight_bytes_ += type.bytes();
  if (weight_bytes_ > ir::kMaxWeightBytes)
    fail(w["shape"], what + " brings the model's weights to " + std::to_string(weight_bytes_) +
                         " bytes; tlmc reads at most " + std::to_string(ir::kMaxWeightBytes) +
                         " (2 GiB), the most a library embeds");
  const int id = define(name, TensorKind::Weight, key);  // before reading a file in vain
  std::vector<uint8_t> bytes;
  if (w["init"]) bytes = init_bytes(name, type, w["init"], w["seed"]);
  if (w["data"]) bytes = data_bytes(name, type, w["data"]);
  if (w["file"]) bytes = file_bytes(name, type, w["file"], w["offset"]);
  ir::Tensor& t = g_.tensors[static_cast<size_t>(id)];
  t.type = type;
  t.data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
}

std::vector<uint8_t> ModelReader::init_bytes(const std::string& name, const ir::TensorType& type,
                                             const YAML::Node& init,
                                             const YAML::Node& seed_node) const {
  const char* rule = "init must be zeros, ones, {uniform: [lo, hi]} or {normal: stddev}";
  const size_t size = ir::dtype_size(type.dtype);
  const size_t count = static_cast<size_t>(type.numel());
  std::vector<uint8_t> out(type.bytes());
  const bool is_float = ir::dtype_is_float(type.dtype);
  if (init.IsScalar() && (init.Scalar() == "zeros" || init.Scalar() == "ones")) {
    const bool one = init.Scalar() == "ones";
    for (size_t i = 0; i < count; ++i)
      if (is_float)
        put_float(&out[i * size], type.dtype, one ? 1.0 : 0.0);
      else
        put_int(&out[i * size], type.dtype, one ? 1 : 0);
    return out;
  }
  if (!init.IsMap() || init.size() != 1) fail(init, rule);
  const YAML::Node kind = init.begin()->first;
  const YAML::Node arg = init.begin()->second;
  const std::string k = kind.IsScalar() ? kind.Scalar() : "";
  if (k != "uniform" && k != "normal") fail(kind, rule);
  if (!is_float)
    fail(kind, "weight " + in_quotes(name) + ": '" + k + "' init needs a float dtype, not " +
                   std::string(ir::dtype_name(type.dtype)));
  const uint64_t seed = seed_node ? read_seed(seed_node) : fnv1a64(name);
  SplitMix64 rng(seed);
  if (k == "uniform") {
    if (!arg.IsSequence() || arg.size() != 2) fail(arg, "uniform takes [lo, hi]");
    const double lo = read_number(arg[0], "lo");
    const double hi = read_number(arg[1], "hi");
    if (!(lo <= hi) || !std::isfinite(hi - lo))
      fail(arg, "uniform takes [lo, hi] with finite lo <= hi");
    for (size_t i = 0; i < count; ++i)
      put_float(&out[i * size], type.dtype, std::fma(hi - lo, rng.unit(), lo));
    return out;
  }
  const double stddev = read_number(arg, "stddev");
  if (!(stddev >= 0) || !std::isfinite(stddev))
    fail(arg, "stddev must be a finite non-negative number");
  for (size_t i = 0; i < count; ++i) {
    const double u1 = 1.0 - rng.unit();  // in (0, 1]
    const double u2 = rng.unit();
    const double r = std::sqrt(-2.0 * portable_log(u1));
    put_float(&out[i * size], type.dtype, (stddev * r) * portable_cos_turns(u2));
  }
  return out;
}

std::vector<uint8_t> ModelReader::data_bytes(const std::string& name, const ir::TensorType& type,
                                             const YAML::Node& data) const {
  if (!data.IsSequence()) fail(data, "data must be a flat list of numbers");
  const size_t count = static_cast<size_t>(type.numel());
  if (data.size() != count)
    fail(data, "weight " + in_quotes(name) + " has shape " + ir::shape_str(type.shape) + " (" +
                   std::to_string(count) + " elements) but data has " +
                   std::to_string(data.size()) + " values");
  const size_t size = ir::dtype_size(type.dtype);
  const std::string dtype(ir::dtype_name(type.dtype));
  std::vector<uint8_t> out(type.bytes());
  uint8_t* p = out.data();
  for (auto it = data.begin(); it != data.end(); ++it, p += size) {
    const YAML::Node& v = *it;
    if (ir::dtype_is_float(type.dtype)) {
      put_float(p, type.dtype, read_number(v, "a data value"));
      continue;
    }
    if (type.dtype == DType::Bool && v.IsScalar() && v.Tag() == "?") {
      const std::string& s = v.Scalar();
      if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" ||
          s == "FALSE") {
        *p = s[0] == 't' || s[0] == 'T';
        continue;
      }
    }
    Number num;
    const NumberParse parsed = parse_number(v, &num);
    if (parsed == NumberParse::NotANumber) fail(v, "data must be a flat list of numbers");
    if (parsed == NumberParse::Ok && !num.is_int)
      fail(v, dtype + " data must be integers, not " + in_quotes(v.Scalar()));
    const auto [lo, hi] = int_range(type.dtype);
    if (parsed == NumberParse::OutOfRange || num.i < lo || num.i > hi)
      fail(v, in_quotes(v.Scalar()) + " does not fit in " + dtype);
    put_int(p, type.dtype, num.i);
  }
  return out;
}

std::vector<uint8_t> ModelReader::file_bytes(const std::string& name, const ir::TensorType& type,
                                             const YAML::Node& file,
                                             const YAML::Node& offset_node) {
  const std::string rel = read_string(file, "file");
  int64_t offset = 0;
  if (offset_node) {
    offset = read_int(offset_node, "offset");
    if (offset < 0) fail(offset_node, "offset must be a non-negative integer");
  }
  // A weight file is part of the model, so it lies in the model's folder, as an ONNX
  // model's external data does (the same rule and check): a downloaded model must not read
  // any file the user can into the library it builds.
  std::variant<ExternalDataFile, RefusedLocation> opened = open_external_data(path_, rel);
  if (const auto* refused = std::get_if<RefusedLocation>(&opened))
    fail(file, "weight " + in_quotes(name) + ": its file " + refused->reason);
  const ExternalDataFile& in = std::get<ExternalDataFile>(opened);
  const uint64_t need = static_cast<uint64_t>(offset) + type.bytes();
  if (in.size() < need)
    fail(file, "weight file " + in_quotes(rel) + " is too short: weight " + in_quotes(name) +
                   " needs " + std::to_string(need) + " bytes (offset " + std::to_string(offset) +
                   " + " + std::to_string(type.bytes()) + ") but the file has " +
                   std::to_string(in.size()));
  std::vector<uint8_t> out(type.bytes());
  if (!in.read(static_cast<uint64_t>(offset), out.data(), out.size()))
    fail(file, "cannot read weight file " + in_quotes(in.named().string()));
  const std::string named = in.named().string();
  if (std::find(g_.source_files.begin(), g_.source_files.end(), named) == g_.source_files.end())
    g_.source_files.push_back(named);
  return out;
}

ir::AttrValue ModelReader::read_attr(const YAML::Node& v, const std::string& key) const {
  const std::string what = "attribute " + in_quotes(key);
  if (v.IsScalar()) {
    Number num;
    switch (parse_number(v, &num)) {
      case NumberParse::Ok:
        if (num.is_int) return num.i;
        return num.d;
      case NumberParse::OutOfRange:
        fail(v, what + " is out of range");
      case NumberParse::NotANumber:
        return v.Scalar();
    }
  }
  if (!v.IsSequence()) fail(v, what + " must be a number, a string or a list of numbers");
  std::vector<int64_t> ints;
  std::vector<double> floats;
  bool any_float = false;
  for (const YAML::Node& e : v) {
    Number num;
    const NumberParse p = parse_number(e, &num);
    if (p == NumberParse::OutOfRange) fail(e, "a value of " + what + " is out of range");
    if (p == NumberParse::NotANumber)
      fail(e, "a list attribute holds numbers only; " + what + " holds " +
                  (e.IsScalar() ? in_quotes(e.Scalar()) : std::string("a non-number")));
    any_float = any_float || !num.is_int;
    ints.push_back(num.i);
    floats.push_back(num.d);
  }
  if (any_float) return floats;
  return ints;
}

void ModelReader::read_nodes(const YAML::Node& nodes) {
  if (!nodes.IsSequence()) fail(nodes, "'nodes' must be a list of nodes");
  // First every node and the tensors it defines, then the names its inputs refer to,
  // because nodes may come in any order.
  for (const YAML::Node& y : nodes) {
    if (!y.IsMap()) fail(y, "a node must be a map with keys name, op, inputs, outputs, attrs");
    check_keys(y, {"name", "op", "inputs", "outputs", "attrs"}, {"op", "outputs"}, "a node");
    ir::Node n;
    n.loc = loc(y);
    if (y["name"]) n.name = read_string(y["name"], "a node name");
    n.op = read_string(y["op"], "op");
    if (n.op.empty()) fail(y["op"], "op must not be empty");
    const YAML::Node ins = y["inputs"];
    if (ins && !ins.IsSequence()) fail(ins, "inputs must be a list of tensor names");
    for (const YAML::Node& i : ins) read_string(i, "a tensor name");
    const YAML::Node outs = y["outputs"];
    if (!outs.IsSequence()) fail(outs, "outputs must be a list of tensor names");
    for (const YAML::Node& o : outs) {
      const std::string name = read_string(o, "a tensor name");
      n.outputs.push_back(name.empty() ? -1 : define(name, TensorKind::Intermediate, o));
    }
    if (const YAML::Node attrs = y["attrs"]) {
      if (!attrs.IsMap()) fail(attrs, "attrs must be a map from attribute names to values");
      for (auto it = attrs.begin(); it != attrs.end(); ++it) {
        const std::string key = read_string(it->first, "an attribute name");
        if (n.attrs.count(key))
          fail(it->first, "attribute " + in_quotes(key) + " appears twice (first at " +
                              where(n.attrs[key].loc) + ")");
        if (it->second.IsNull()) fail(it->first, "attribute " + in_quotes(key) + " has no value");
        n.attrs[key] = ir::Attr{read_attr(it->second, key), loc(it->first)};
      }
    }
    g_.nodes.push_back(std::move(n));
  }
  size_t index = 0;
  for (const YAML::Node& y : nodes) {
    ir::Node& n = g_.nodes[index++];
    for (const YAML::Node& i : y["inputs"])
      n.inputs.push_back(i.Scalar().empty() ? -1 : resolve(i));
  }
}

void ModelReader::read_outputs(const YAML::Node& outputs) {
  if (!outputs.IsSequence()) fail(outputs, "'outputs' must be a list of tensor names");
  if (outputs.size() == 0) fail(outputs, "the model has no outputs");
  std::map<int, YAML::Node> seen;
  for (const YAML::Node& o : outputs) {
    const int id = resolve(o);
    auto [prev, fresh] = seen.emplace(id, o);
    if (!fresh)
      fail(o, "tensor " + in_quotes(o.Scalar()) + " is listed twice as a graph output (first at " +
                  where(loc(prev->second)) + ")");
    g_.outputs.push_back(id);
  }
}

ir::Graph ModelReader::read(const YAML::Node& root) {
  const char* keys = "tlmc, name, opset, inputs, weights, nodes, outputs";
  if (!root.IsMap()) fail(root, std::string("a model must be a YAML map with the keys ") + keys);
  const YAML::Node version = root["tlmc"];
  if (!version) fail(root, "the model is missing the key 'tlmc' (the format version: tlmc: 1)");
  Number v;
  if (parse_number(version, &v) != NumberParse::Ok || !v.is_int || v.i != 1)
    fail(value_or_key(key_node(root, "tlmc"), version),
         "unsupported format version" +
             (version.IsScalar() ? " " + in_quotes(version.Scalar()) : std::string()) +
             " (this compiler reads tlmc: 1)");
  check_keys(root, {"tlmc", "name", "opset", "inputs", "weights", "nodes", "outputs"},
             {"tlmc", "nodes", "outputs"}, "the model");

  g_.name = name_from_path(path_);
  if (const YAML::Node name = root["name"]) {
    g_.name = read_string(name, "name");
    if (!is_c_identifier(g_.name))
      fail(name, "the model name " + in_quotes(g_.name) +
                     " is not a C identifier (letters, digits and '_', not starting with a "
                     "digit)");
  }
  g_.opset = ir::kMaxOpset;
  if (const YAML::Node opset = root["opset"]) {
    const int64_t o = read_int(opset, "opset");
    if (o < ir::kMinOpset || o > ir::kMaxOpset)
      fail(opset, "opset " + std::to_string(o) + " is not supported (only " +
                      std::to_string(ir::kMinOpset) + " to " + std::to_string(ir::kMaxOpset) + ")");
    g_.opset = static_cast<int>(o);
  }
  read_inputs(root["inputs"]);
  read_weights(root["weights"]);
  read_nodes(root["nodes"]);
  read_outputs(root["outputs"]);
  return std::move(g_);
}

// The streaming pass of the limits above: counts nodes, the nodes each anchor holds (an
// alias adds them again) and the depth, and stops at the first node past a limit.
class YamlBudget : public YAML::EventHandler {
 public:
  explicit YamlBudget(std::string path) : path_(std::move(path)) {}
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t anchor) override { leaf(m, anchor); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t anchor) override {
    const auto it = held_.find(anchor);
    count(m, it == held_.end() ? 1 : it->second);
  }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    leaf(m, anchor);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(m, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(m, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  [[noreturn]] void refuse(const YAML::Mark& m, const std::string& message) const {
    throw Diagnostic(SourceLoc{path_, m.line + 1, m.column + 1}, message);
  }
  void count(const YAML::Mark& m, int64_t n) {
    nodes_ += n;
    if (nodes_ > kMaxYamlNodes)
      refuse(m, "the model has more than " + std::to_string(kMaxYamlNodes) +
                    " YAML nodes by here (an alias counts as the nodes it repeats); tlmc reads "
                    "at most that many: put large weights in a 'file'");
  }
  void leaf(const YAML::Mark& m, YAML::anchor_t anchor) {
    count(m, 1);
    if (anchor) held_[anchor] = 1;
  }
  void open(const YAML::Mark& m, YAML::anchor_t anchor) {
    count(m, 1);
    if (static_cast<int>(open_.size()) >= kMaxYamlDepth)
      refuse(m, "the YAML nests deeper than " + std::to_string(kMaxYamlDepth) +
                    " lists and maps here; tlmc reads at most that many (a model needs a few)");
    open_.push_back({anchor, nodes_});
  }
  void close() {
    const auto [anchor, first] = open_.back();
    open_.pop_back();
    if (anchor) held_[anchor] = nodes_ - first + 1;
  }

  std::string path_;
  int64_t nodes_ = 0;
  std::vector<std::pair<YAML::anchor_t, int64_t>> open_;  // anchor, node count at its start
  std::map<YAML::anchor_t, int64_t> held_;                // nodes under each anchor
};

[[noreturn]] void throw_too_large(const std::string& path, uintmax_t bytes) {
  throw Diagnostic(SourceLoc{path, 0, 0},
                   "the model is " + std::to_string(bytes) + " bytes of YAML; tlmc reads at most " +
                       std::to_string(kMaxYamlBytes) + " (64 MiB): put large weights in a 'file'");
}

}  // namespace

ir::Graph read_yaml_text(const std::string& text, const std::string& path) {
  if (static_cast<int64_t>(text.size()) > kMaxYamlBytes) throw_too_large(path, text.size());
  YAML::Node root;
  try {
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    YamlBudget budget(path);
    parser.HandleNextDocument(budget);
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    SourceLoc at{path, e.mark.line + 1, e.mark.column + 1};
    if (e.mark.is_null()) at = SourceLoc{path, 0, 0};
    throw Diagnostic(at, "malformed YAML: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull())
    throw Diagnostic(SourceLoc{path, 1, 1}, "the file holds no model (it is empty)");
  ir::Graph g = ModelReader(path).read(root);
  g.source_files.insert(g.source_files.begin(), path);
  return verify_computing_shapes(std::move(g));
}

ir::Graph read_yaml_model(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Diagnostic(SourceLoc{path, 0, 0}, "cannot read the model: no such file");
  if (std::filesystem::is_directory(path, ec))
    throw Diagnostic(SourceLoc{path, 0, 0}, "cannot read the model: it is a folder");
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > static_cast<uintmax_t>(kMaxYamlBytes)) throw_too_large(path, size);
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw Diagnostic(SourceLoc{path, 0, 0}, "cannot read the model");
  return read_yaml_text(text.str(), path);
}

}  // namespace tlmc::frontend
