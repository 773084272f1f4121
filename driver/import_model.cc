// `tlmc import MODEL.onnx -o MODEL.yaml`: the model as read, written in tlmc's own format.
#include <filesystem>

#include "driver/compile.h"
#include "driver/output_files.h"
#include "frontend/yaml_writer.h"

namespace tlmc::driver {

namespace fs = std::filesystem;

std::vector<std::string> import_model(const CompileOptions& options, const std::string& yaml_path) {
  ir::Graph g = read_model(options);
  if (!options.name.empty()) g.name = options.name;
  const fs::path yaml(yaml_path);
  const std::string weights_name = yaml.stem().string() + ".bin";
  const frontend::YamlModel m = frontend::write_yaml_model(
      g, weights_name,
      "Written by tlmc import from " + fs::path(options.model_path).filename().string() + ".");
  const fs::path dir = yaml.parent_path().empty() ? fs::path(".") : yaml.parent_path();
  StagingDir stage(dir);
  write_files({{yaml.filename().string(), m.yaml},
               {weights_name, std::string(m.weights.begin(), m.weights.end())}},
              stage.path());
  commit(
      {{stage.path() / yaml.filename(), yaml}, {stage.path() / weights_name, dir / weights_name}});
  return {yaml.string(), (dir / weights_name).string()};
}

}  // namespace tlmc::driver
