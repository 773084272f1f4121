// Space names come from roles (operators, lowering's stage suffixes), never from the model's
// tensor names: two subgraphs of one workload key name their spaces alike, so a tuning record
// of one reads as a schedule of the other.
#include <gtest/gtest.h>

#include "ir/te.h"
#include "scheduler/schedule_support.h"
#include "scheduler/sketch_rules.h"

namespace tlmc::scheduler {
namespace {

// A convolution with its bias and ReLU, then a max pool: the pool's output gets a cache stage
// named after the tensor (a dotted ONNX name's tail was once taken for its role).
std::string model_yaml(const std::string& conv_out, const std::string& out) {
  return "tlmc: 1\nname: m\ninputs:\n  x: {shape: [1, 8, 10, 10]}\nweights:\n"
         "  w: {shape: [8, 8, 3, 3], init: ones}\n  b: {shape: [8], init: zeros}\nnodes:\n"
         "  - {op: Conv, inputs: [x, w, b], outputs: ['" +
         conv_out + "'], attrs: {pads: [1, 1, 1, 1]}}\n  - {op: MaxPool, inputs: ['" + conv_out +
         "'], outputs: ['" + out +
         "'], attrs: {kernel_shape: [3, 3], strides: [2, 2]}}\n"
         "outputs: ['" +
         out + "']\n";
}

TEST(SpaceNames, DoNotDependOnTensorNames) {
  // The pool alone is the second subgraph: take the last one of each.
  auto last_program = [](const std::string& yaml) {
    ir::Graph g = frontend::read_yaml_text(yaml, "model.yaml");
    const Partition p = partition_graph(g);
    return ir::lower_subgraph(g, p.subgraphs.back()).program;
  };
  const ir::TeProgram plain = last_program(model_yaml("y", "z"));
  const ir::TeProgram dotted =
      last_program(model_yaml("/features.0/Conv_output_0", "/features.2/MaxPool_output_0"));
  ASSERT_EQ(ir::workload_key(plain), ir::workload_key(dotted));
  const ir::Target target = *ir::parse_target("x86-64-avx512");
  const Sketches a = generate_sketches(plain, target), b = generate_sketches(dotted, target);
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].name(), b[k].name());
    ASSERT_EQ(a[k].spaces().size(), b[k].spaces().size());
    for (size_t i = 0; i < a[k].spaces().size(); ++i) {
      EXPECT_EQ(a[k].spaces()[i].stage, b[k].spaces()[i].stage);
      EXPECT_EQ(a[k].spaces()[i].stage.find('/'), std::string::npos) << a[k].spaces()[i].stage;
    }
  }
}

}  // namespace
}  // namespace tlmc::scheduler
