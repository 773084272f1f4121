// `--check` of a --precision bf16 build allows the library's distance from the bfloat16
// model's reference to grow with how far the model itself carries a moved rounding (the
// reference computed again with every rounded value nudged): an honest library passes, and
// one that computes with the rows of a weight exchanged in pairs, as a wrong packing of
// vdpbf16ps's pairs along K would, is still a compiler bug. (That a deep model's honest
// library passes by the nudged distance: tests/zoo, ResNet-50.)
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <sstream>

#include "driver/check.h"
#include "ir/target.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

TEST(Bf16Check, AWrongKernelStandsOutFromRoundings) {
  const ir::Target host = ir::host_target();
  if (host.bf16 == ir::Bf16Unit::None) GTEST_SKIP() << "this CPU has no bf16 unit";
  driver::CompileOptions o;
  o.model_path = std::string(TLMC_SOURCE_DIR) + "/examples/mlp.yaml";
  o.target = host;
  o.bf16 = true;
  driver::CompiledModel m = driver::compile_model(o);
  std::ostringstream report;
  driver::CheckResult r = driver::check_model(m, host);
  driver::print_check(report, r);
  ASSERT_TRUE(r.compiled_exactly) << report.str();
  ASSERT_FALSE(r.outputs.empty());
  const driver::OutputError honest = r.outputs[0];
  EXPECT_GT(honest.rms, 0);
  // Within every element's bound: the nudged reference is not computed.
  EXPECT_EQ(honest.nudged, -1) << report.str();

  // The reference now computes the first product with its rows of bfloat16 weights
  // exchanged in pairs (0 with 1, 2 with 3, ...); the library does not.
  ir::Graph& g = m.bf16_graph;
  bool tampered = false;
  for (const ir::Node& n : g.nodes) {
    if (tampered || n.inputs.size() < 2 || n.inputs[1] < 0) continue;
    ir::Tensor& w = g.tensors[static_cast<size_t>(n.inputs[1])];
    if (w.kind != ir::TensorKind::Weight || w.type.dtype != ir::DType::BFloat16 ||
        w.type.shape.size() != 2)
      continue;
    auto bytes = std::make_shared<std::vector<uint8_t>>(*w.data);
    const auto row = static_cast<size_t>(2 * w.type.shape[1]);
    for (size_t r = 0; r + 1 < static_cast<size_t>(w.type.shape[0]); r += 2) {
      const auto at = bytes->begin() + static_cast<std::ptrdiff_t>(r * row);
      std::swap_ranges(at, at + static_cast<std::ptrdiff_t>(row),
                       at + static_cast<std::ptrdiff_t>(row));
    }
    w.data = bytes;
    tampered = true;
  }
  ASSERT_TRUE(tampered) << "mlp.yaml has no bfloat16 weight of two dimensions";
  report.str("");
  r = driver::check_model(m, host);
  driver::print_check(report, r);
  EXPECT_FALSE(r.compiled_exactly) << report.str();
  EXPECT_NE(report.str().find("between it and itself nudged)  MISCOMPILED"), std::string::npos)
      << report.str();
  // The nudged reference moved the output far less than the exchanged rows did.
  EXPECT_LT(2 * r.outputs[0].nudged, r.outputs[0].max_abs_compiled) << report.str();
}

}  // namespace
}  // namespace tlmc::test
