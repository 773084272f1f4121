// Shared by the test programs: temporary folders, running a command, reading files.
#pragma once

#include <string>

namespace tlmc::test {

// A fresh empty folder under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
  // The largest resident set of the shell or of any process it waited for (the command),
  // from wait4's accounting.
  long peak_resident_kib = -1;
};
// Runs a shell command line (sh -c) and captures its output.
CommandResult run_command(const std::string& command_line);

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& contents);
// Number of entries in a folder (0 when it does not exist).
int count_entries(const std::string& dir);

// A model "small" of two subgraphs, quick to tune: a = [m, k] times the weights [k, n], its
// ReLU, then a Softmax of the rows.
std::string product_softmax_yaml(int m, int k, int n);

}  // namespace tlmc::test
