// Reference kernels of the operators that make tensors from shapes: Shape, ConstantOfShape
// and Range.
#include <cstring>

#include "ir/shape_rules.h"
#include "reference/kernels.h"

namespace tlmc::reference {
namespace {

// The input's dimensions start to end; only its type is read (fold_constants passes an
// input without data).
void shape(const ir::Graph&, const ir::Node& n, const KernelInputs& in, HostTensor& out) {
  const ir::Shape& x = in[0]->type.shape;
  const ir::DimRange r = ir::shape_range(n, static_cast<int64_t>(x.size()));
  for (int64_t d = r.begin; d < r.end; ++d) out.i64()[d - r.begin] = x[static_cast<size_t>(d)];
}

void constant_of_shape(const ir::Graph&, const ir::Node& n, const KernelInputs&, HostTensor& out) {
  const size_t size = ir::dtype_size(out.type.dtype);
  for (int64_t i = 0; i < out.type.numel(); ++i)
    store_element(out.type.dtype, n.attr_float("value"),
                  out.bytes.data() + static_cast<size_t>(i) * size);
}

// As ONNX defines it: each element the one before plus delta, in the inputs' type.
void range(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  with_element_type(out.type.dtype, [&](auto zero) {
    using T = decltype(zero);
    T value = in[0]->as<T>()[0];
    const T delta = in[2]->as<T>()[0];
    for (int64_t i = 0; i < out.type.numel(); ++i) {
      out.as<T>()[i] = value;
      value = static_cast<T>(value + delta);
    }
  });
}

}  // namespace

void add_shape_kernels(KernelTable& table) {
  table["Shape"] = shape;
  table["ConstantOfShape"] = constant_of_shape;
  table["Range"] = range;
}

}  // namespace tlmc::reference
