// Builds small verified graphs in C++ for the reference tests, and runs them through the
// reference interpreter.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "reference/interpreter.h"

namespace tlmc::test {

ir::AttrValue attr_int(int64_t v);
ir::AttrValue attr_float(double v);
ir::AttrValue attr_ints(std::vector<int64_t> v);
ir::AttrValue attr_string(std::string v);

class GraphBuilder {
 public:
  void input(const std::string& name, ir::Shape shape, ir::DType dtype = ir::DType::Float32);
  void weight(const std::string& name, ir::Shape shape, const std::vector<float>& values);
  void weight_i64(const std::string& name, ir::Shape shape, const std::vector<int64_t>& values);
  void weight_i32(const std::string& name, ir::Shape shape, const std::vector<int32_t>& values);
  void weight_bool(const std::string& name, ir::Shape shape, const std::vector<uint8_t>& values);
  // An empty input name is an omitted optional input; new output names become
  // intermediate tensors.
  void node(const std::string& op, const std::vector<std::string>& inputs,
            const std::vector<std::string>& outputs,
            const std::map<std::string, ir::AttrValue>& attrs = {}, const std::string& name = "");
  void output(const std::string& name);
  // ir::verify_graph on what was added; throws its Diagnostic.
  ir::Graph build() const;
  // The message of the Diagnostic build() throws ("" when it succeeds).
  std::string build_error() const;

 private:
  int tensor_id(const std::string& name);
  int add_tensor(const std::string& name, ir::TensorType type, ir::TensorKind kind);
  ir::Graph g_;
};

reference::HostTensor float_tensor(ir::Shape shape, const std::vector<float>& values);
reference::HostTensor int64_tensor(ir::Shape shape, const std::vector<int64_t>& values);
std::vector<float> floats_of(const reference::HostTensor& t);
std::vector<int64_t> int64s_of(const reference::HostTensor& t);
// The elements of a tensor of any dtype as doubles (bool as 0 and 1).
std::vector<double> values_of(const reference::HostTensor& t);

// Interprets the graph on float32 inputs given as flat values (shapes from the graph) and
// returns output 0.
reference::HostTensor run(const ir::Graph& g, const std::vector<std::vector<float>>& inputs);
// Every output of a graph without inputs.
std::vector<reference::HostTensor> run_outputs(const ir::Graph& g);
// The shape of output 0 after building.
ir::Shape output_shape(const GraphBuilder& b);

}  // namespace tlmc::test

// Element-wise comparison with an absolute tolerance, naming the first index that differs.
#define EXPECT_FLOATS_NEAR(actual, expected, tolerance)                          \
  do {                                                                           \
    const std::vector<float> actual_ = (actual);                                 \
    const std::vector<float> expected_ = (expected);                             \
    ASSERT_EQ(actual_.size(), expected_.size());                                 \
    for (size_t i_ = 0; i_ < actual_.size(); ++i_)                               \
      EXPECT_NEAR(actual_[i_], expected_[i_], (tolerance)) << "at index " << i_; \
  } while (0)
