#include "codegen/library_text.h"

#include <cctype>
#include <cstdio>
#include <sstream>

namespace tlmc::codegen {

std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 32 || c > 126) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string comment_text(std::string s) {
  for (size_t i = 0; (i = s.find("*/", i)) != std::string::npos;) s.replace(i, 2, "* /");
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string upper(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

void tensor_macros(std::ostream& os, const std::string& prefix, const std::vector<TensorInfo>& ts) {
  for (size_t i = 0; i < ts.size(); ++i) {
    const TensorInfo& t = ts[i];
    const std::string p = prefix + std::to_string(i);
    os << "/* " << comment_text(t.name) << ": " << ir::dtype_name(t.type.dtype) << " "
       << ir::shape_str(t.type.shape) << " */\n";
    os << "#define " << p << "_RANK " << t.type.shape.size() << "\n";
    os << "#define " << p << "_SHAPE {";
    for (size_t d = 0; d < t.type.shape.size(); ++d) os << (d ? ", " : "") << t.type.shape[d];
    if (t.type.shape.empty()) os << "1";
    os << "}\n#define " << p << "_BYTES " << t.type.bytes() << "u\n";
  }
}

void tensor_table(std::ostream& os, const std::string& name, const char* which,
                  const std::vector<TensorInfo>& ts) {
  for (size_t i = 0; i < ts.size(); ++i) {
    os << "static const int64_t " << name << "_" << which << "_shape" << i << "[] = {";
    for (size_t d = 0; d < ts[i].type.shape.size(); ++d)
      os << (d ? ", " : "") << ts[i].type.shape[d];
    if (ts[i].type.shape.empty()) os << "1";
    os << "};\n";
  }
  os << "const " << name << "_tensor_info " << name << "_" << which << "[] = {\n";
  for (size_t i = 0; i < ts.size(); ++i)
    os << "  {" << c_string(ts[i].name) << ", "
       << c_string(std::string(ir::dtype_name(ts[i].type.dtype))) << ", " << ts[i].type.shape.size()
       << ", " << name << "_" << which << "_shape" << i << ", " << ts[i].type.bytes() << "u},\n";
  if (ts.empty()) os << "  {0, 0, 0, 0, 0},\n";
  os << "};\n";
}

std::string storage_pointer(const Storage& s, const std::string& weights) {
  switch (s.kind) {
    case Storage::Input:
      return "(void*)inputs[" + std::to_string(s.index) + "]";
    case Storage::Output:
      return "outputs[" + std::to_string(s.index) + "]";
    case Storage::Weight:
      return "(void*)(" + weights + " + " + std::to_string(s.index) + ")";
    case Storage::Workspace:
      return "(void*)(ws + " + std::to_string(s.index) + ")";
  }
  return "";
}

void kernel_comment(std::ostream& os, size_t k, const KernelInfo& kernel) {
  os << "/* kernel " << k << ": workload " << kernel.workload_key << "; schedule:\n";
  std::istringstream sched(kernel.schedule);
  std::string line;
  while (std::getline(sched, line)) os << " *   " << comment_text(line) << "\n";
  os << " */\n";
}

}  // namespace tlmc::codegen
