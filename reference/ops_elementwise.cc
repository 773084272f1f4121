// Reference kernels of the element-wise operators: activations, Clip, Cast, and the
// arithmetic, comparison and logical operators and Where with numpy broadcasting, in the
// inputs' own element type.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "reference/kernels.h"

namespace tlmc::reference {
namespace {

template <float (*F)(float)>
void unary(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  for (int64_t i = 0; i < out.type.numel(); ++i) out.f32()[i] = F(in[0]->f32()[i]);
}

float relu(float x) { return x > 0 ? x : 0.0f; }
float sigmoid(float x) { return static_cast<float>(1.0 / (1.0 + std::exp(-double(x)))); }
float tanh_of(float x) { return std::tanh(x); }
float erf_of(float x) { return std::erf(x); }
float exp_of(float x) { return std::exp(x); }
float log_of(float x) { return std::log(x); }
float sqrt_of(float x) { return std::sqrt(x); }
float floor_of(float x) { return std::floor(x); }
float reciprocal(float x) { return 1.0f / x; }

// y = f(x) element for element, in the element type of the input (= the output's).
template <typename F>
void map_typed(const KernelInputs& in, HostTensor& out, F f) {
  with_element_type(out.type.dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* x = in[0]->as<T>();
    T* y = out.as<T>();
    for (int64_t i = 0; i < out.type.numel(); ++i) y[i] = static_cast<T>(f(x[i]));
  });
}

void neg(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  map_typed(in, out, [](auto x) { return -x; });
}

void abs_of(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  map_typed(in, out, [](auto x) { return x < 0 ? -x : x; });
}

void logical_not(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  for (int64_t i = 0; i < out.type.numel(); ++i)
    out.bytes[static_cast<size_t>(i)] = !in[0]->bytes[static_cast<size_t>(i)];
}

void leaky_relu(const ir::Graph&, const ir::Node& n, const KernelInputs& in, HostTensor& out) {
  const float alpha = static_cast<float>(n.attr_float("alpha"));
  for (int64_t i = 0; i < out.type.numel(); ++i) {
    const float x = in[0]->f32()[i];
    out.f32()[i] = x >= 0 ? x : alpha * x;
  }
}

// max(0, min(1, alpha x + beta)); HardSwish is x * HardSigmoid(x) with alpha 1/6, beta 1/2.
void hard_sigmoid(const ir::Graph&, const ir::Node& n, const KernelInputs& in, HostTensor& out) {
  const bool swish = n.op == "HardSwish";
  const float alpha = static_cast<float>(swish ? 1.0 / 6 : n.attr_float("alpha"));
  const float beta = static_cast<float>(swish ? 0.5 : n.attr_float("beta"));
  for (int64_t i = 0; i < out.type.numel(); ++i) {
    const float x = in[0]->f32()[i];
    const float h = std::max(0.0f, std::min(1.0f, alpha * x + beta));
    out.f32()[i] = swish ? x * h : h;
  }
}

// y = min(max(x, min), max); an absent bound is the float range's end. With min > max every
// element becomes max, as ONNX specifies.
void clip(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  const float lo = in.size() > 1 && in[1] ? in[1]->f32()[0] : std::numeric_limits<float>::lowest();
  const float hi = in.size() > 2 && in[2] ? in[2]->f32()[0] : std::numeric_limits<float>::max();
  for (int64_t i = 0; i < out.type.numel(); ++i)
    out.f32()[i] = std::min(std::max(in[0]->f32()[i], lo), hi);
}

// To bool: non-zero is true. A float to an integer type: truncated toward zero to int64,
// then wrapped to the narrower type (what ONNX Runtime does for floats in range).
// A float truncated toward zero to int64, as x86-64's cvttsd2si does, which the generated
// C's cast compiles to: NaN and values outside int64's range give INT64_MIN. (The C++ cast
// of such a value is undefined behaviour, which UBSan reported.)
int64_t truncated_int64(double x) {
  if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(x);
}

void cast(const ir::Graph& g, const ir::Node& n, const KernelInputs& in, HostTensor& out) {
  // float16 and bfloat16 go through float32: widened exactly, or rounded to nearest even.
  if (ir::dtype_is_half(in[0]->type.dtype)) {
    const FloatOperand wide(*in[0]);
    HostTensor f = HostTensor::zeros({ir::DType::Float32, in[0]->type.shape});
    std::copy(wide.data(), wide.data() + f.type.numel(), f.f32());
    cast(g, n, {&f}, out);
    return;
  }
  if (ir::dtype_is_half(out.type.dtype)) {
    HostTensor f = HostTensor::zeros({ir::DType::Float32, out.type.shape});
    cast(g, n, in, f);
    for (int64_t i = 0; i < f.type.numel(); ++i)
      store_element(out.type.dtype, f.f32()[i], out.bytes.data() + 2 * i);
    return;
  }
  const bool to_bool = out.type.dtype == ir::DType::Bool;
  with_element_type(in[0]->type.dtype, [&](auto from) {
    using S = decltype(from);
    with_element_type(out.type.dtype, [&](auto into) {
      using D = decltype(into);
      const S* x = in[0]->as<S>();
      D* y = out.as<D>();
      for (int64_t i = 0; i < out.type.numel(); ++i) {
        if (to_bool) {
          y[i] = x[i] != 0 ? 1 : 0;
        } else if (std::is_floating_point_v<S> && std::is_integral_v<D>) {
          y[i] = static_cast<D>(truncated_int64(static_cast<double>(x[i])));
        } else {
          // int8 widens with its sign, as it should.
          y[i] = static_cast<D>(x[i]);  // NOLINT(bugprone-signed-char-misuse)
        }
      }
    });
  });
}

// y = f(a, b) under broadcasting; T the inputs' element type, R the output's.
template <typename T, typename R, typename F>
void map_binary(const KernelInputs& in, HostTensor& out, F f) {
  const T* a = in[0]->as<T>();
  const T* b = in[1]->as<T>();
  R* y = out.as<R>();
  for_each_broadcast(
      {in[0]->type.shape, in[1]->type.shape}, out.type.shape,
      [&](int64_t i, const int64_t* at) { y[i] = static_cast<R>(f(a[at[0]], b[at[1]])); });
}

struct Plus {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a + b);
  }
};
struct Minus {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a - b);
  }
};
struct Times {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a * b);
  }
};
// Integer division truncates; by zero it gives 0 (undefined in ONNX; the compiled code
// agrees), and the one overflowing quotient (min / -1) wraps.
struct Divide {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      if (b == 0) return T{0};
      if (std::is_signed_v<T> && b == static_cast<T>(-1))
        return static_cast<T>(U{0} - static_cast<U>(a));
    }
    return static_cast<T>(a / b);
  }
};
struct Power {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(std::pow(a, b));
  }
};
// b > a ? b : a, as the generated code: a NaN in the first operand stays.
struct Larger {
  template <typename T>
  T operator()(T a, T b) const {
    return b > a ? b : a;
  }
};
struct Smaller {
  template <typename T>
  T operator()(T a, T b) const {
    return b < a ? b : a;
  }
};

template <typename Op>
void arithmetic(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  with_element_type(out.type.dtype, [&](auto zero) {
    using T = decltype(zero);
    map_binary<T, T>(in, out, Op{});
  });
}

struct IsEqual {
  template <typename T>
  bool operator()(T a, T b) const {
    return a == b;
  }
};
struct IsLess {
  template <typename T>
  bool operator()(T a, T b) const {
    return a < b;
  }
};
struct IsGreater {
  template <typename T>
  bool operator()(T a, T b) const {
    return a > b;
  }
};
struct IsLessOrEqual {
  template <typename T>
  bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct IsGreaterOrEqual {
  template <typename T>
  bool operator()(T a, T b) const {
    return a >= b;
  }
};
struct BothTrue {
  template <typename T>
  bool operator()(T a, T b) const {
    return a && b;
  }
};
struct EitherTrue {
  template <typename T>
  bool operator()(T a, T b) const {
    return a || b;
  }
};

template <typename Op>
void comparison(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  with_element_type(in[0]->type.dtype, [&](auto zero) {
    using T = decltype(zero);
    map_binary<T, uint8_t>(in, out, Op{});
  });
}

// Max and Min of any number of inputs: the first broadcast to the output, then each next
// one combined in turn.
template <typename Op>
void variadic(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  with_element_type(out.type.dtype, [&](auto zero) {
    using T = decltype(zero);
    T* y = out.as<T>();
    const T* first = in[0]->as<T>();
    for_each_broadcast({in[0]->type.shape}, out.type.shape,
                       [&](int64_t i, const int64_t* at) { y[i] = first[at[0]]; });
    for (size_t k = 1; k < in.size(); ++k) {
      const T* x = in[k]->as<T>();
      for_each_broadcast({in[k]->type.shape}, out.type.shape,
                         [&](int64_t i, const int64_t* at) { y[i] = Op{}(y[i], x[at[0]]); });
    }
  });
}

// y = condition ? x : y, all three broadcast; elements of any dtype copied as bytes.
void where(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  const size_t size = ir::dtype_size(out.type.dtype);
  for_each_broadcast({in[0]->type.shape, in[1]->type.shape, in[2]->type.shape}, out.type.shape,
                     [&](int64_t i, const int64_t* at) {
                       const HostTensor* from =
                           in[0]->bytes[static_cast<size_t>(at[0])] ? in[1] : in[2];
                       const int64_t j = from == in[1] ? at[1] : at[2];
                       std::memcpy(out.bytes.data() + static_cast<size_t>(i) * size,
                                   from->bytes.data() + static_cast<size_t>(j) * size, size);
                     });
}

}  // namespace

void add_elementwise_kernels(KernelTable& table) {
  table["Relu"] = unary<relu>;
  table["LeakyRelu"] = leaky_relu;
  table["HardSigmoid"] = hard_sigmoid;
  table["HardSwish"] = hard_sigmoid;
  table["Clip"] = clip;
  table["Sigmoid"] = unary<sigmoid>;
  table["Tanh"] = unary<tanh_of>;
  table["Erf"] = unary<erf_of>;
  table["Exp"] = unary<exp_of>;
  table["Log"] = unary<log_of>;
  table["Sqrt"] = unary<sqrt_of>;
  table["Floor"] = unary<floor_of>;
  table["Reciprocal"] = unary<reciprocal>;
  table["Neg"] = neg;
  table["Abs"] = abs_of;
  table["Not"] = logical_not;
  table["Cast"] = cast;
  table["Pow"] = arithmetic<Power>;
  table["Add"] = arithmetic<Plus>;
  table["Sub"] = arithmetic<Minus>;
  table["Mul"] = arithmetic<Times>;
  table["Div"] = arithmetic<Divide>;
  table["Max"] = variadic<Larger>;
  table["Min"] = variadic<Smaller>;
  table["Equal"] = comparison<IsEqual>;
  table["Less"] = comparison<IsLess>;
  table["Greater"] = comparison<IsGreater>;
  table["LessOrEqual"] = comparison<IsLessOrEqual>;
  table["GreaterOrEqual"] = comparison<IsGreaterOrEqual>;
  table["And"] = comparison<BothTrue>;
  table["Or"] = comparison<EitherTrue>;
  table["Where"] = where;
}

}  // namespace tlmc::reference
