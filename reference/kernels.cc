#include "reference/kernels.h"

namespace tlmc::reference {

Kernel find_kernel(const std::string& op) {
  static const KernelTable table = [] {
    KernelTable t;
    add_nn_kernels(t);
    add_elementwise_kernels(t);
    add_tensor_kernels(t);
    return t;
  }();
  auto it = table.find(op);
  return it == table.end() ? nullptr : it->second;
}

std::vector<int64_t> row_major_strides(const ir::Shape& s) {
  std::vector<int64_t> strides(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) strides[i - 1] = strides[i] * s[i];
  return strides;
}

std::vector<int64_t> broadcast_strides(const ir::Shape& from, const ir::Shape& to) {
  TLMC_ASSERT(from.size() <= to.size(),
              "cannot broadcast " << ir::shape_str(from) << " to " << ir::shape_str(to));
  const std::vector<int64_t> own = row_major_strides(from);
  const size_t lead = to.size() - from.size();
  std::vector<int64_t> strides(to.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) {
    TLMC_ASSERT(from[i] == to[lead + i] || from[i] == 1,
                "cannot broadcast " << ir::shape_str(from) << " to " << ir::shape_str(to));
    strides[lead + i] = from[i] == 1 ? 0 : own[i];
  }
  return strides;
}

std::vector<int64_t> unravel(int64_t flat, const ir::Shape& s) {
  std::vector<int64_t> coords(s.size(), 0);
  for (size_t i = s.size(); i-- > 0;) {
    coords[i] = flat % s[i];
    flat /= s[i];
  }
  return coords;
}

int64_t offset_of(const std::vector<int64_t>& coords, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t i = 0; i < coords.size(); ++i) off += coords[i] * strides[i];
  return off;
}

}  // namespace tlmc::reference
