#include "ops/op_test_support.h"

#include <gtest/gtest.h>

#include <sstream>

#include "driver/check.h"
#include "driver/compile.h"
#include "support/test_support.h"

namespace tlmc::test {

void expect_matches_reference(const std::string& yaml) {
  TempDir dir;
  const std::string path = dir.file("model.yaml");
  write_file(path, yaml);
  std::vector<ir::Target> targets = {*ir::parse_target("x86-64")};
  const ir::Target host = ir::host_target();
  if (host.isa != ir::Isa::Generic) targets.push_back(host);
  for (const ir::Target& t : targets) {
    SCOPED_TRACE("target " + t.name);
    driver::CompileOptions o;
    o.model_path = path;
    o.target = t;
    driver::CompiledModel m = driver::compile_model(o);
    driver::CheckResult r = driver::check_model(m, t);
    std::ostringstream report;
    driver::print_check(report, r);
    EXPECT_TRUE(r.passed) << report.str();
  }
}

}  // namespace tlmc::test
