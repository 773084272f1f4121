#include "toolchain/cc.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>

#include "ir/diagnostic.h"

namespace tlmc::toolchain {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

int run_shell(const std::string& command, std::string* output) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  std::string out;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  if (output) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string c_compiler() {
  const char* cc = std::getenv("CC");
  return cc && *cc ? cc : "cc";
}

void run_or_fail(const std::string& what, const std::string& command) {
  std::string log;
  if (run_shell(command, &log) != 0)
    throw InternalError(what + " failed; this is a bug in tlmc, please report it.\ncommand: " +
                        command + "\n" + log);
}

std::vector<std::string> compile_objects(const std::string& dir,
                                         const std::vector<std::string>& sources,
                                         const ir::Target& target, bool pic) {
  std::vector<std::string> objects;
  for (const std::string& src : sources) {
    const std::string obj = src.substr(0, src.rfind('.')) + ".o";
    // -fno-math-errno lets sqrt and friends vectorise, -ffp-contract=fast fuses multiply-adds
    // (ISO C mode turns it off); no -ffast-math: infinities and NaNs
    // must keep their IEEE meaning (max-pooling starts from -inf).
    const std::string cmd =
        "cd " + shell_quote(dir) + " && " + c_compiler() + " -std=c11 -O3 " + target.cc_flags() +
        " -fno-math-errno -ffp-contract=fast -Wall -Wextra" + (pic ? " -fPIC" : "") + " -c " +
        shell_quote(src) + " -o " + shell_quote(obj);
    run_or_fail("compiling the generated " + src, cmd);
    objects.push_back(obj);
  }
  return objects;
}

namespace {
std::string joined(const std::vector<std::string>& files) {
  std::string out;
  for (const std::string& f : files) out += " " + shell_quote(f);
  return out;
}
}  // namespace

void make_archive(const std::string& dir, const std::vector<std::string>& objects,
                  const std::string& archive) {
  run_or_fail("archiving", "cd " + shell_quote(dir) + " && rm -f " + shell_quote(archive) +
                               " && ar rcD " + shell_quote(archive) + joined(objects));
}

void link_relocatable(const std::string& dir, const std::vector<std::string>& objects,
                      const std::string& out) {
  run_or_fail("linking",
              "cd " + shell_quote(dir) + " && ld -r -o " + shell_quote(out) + joined(objects));
}

void link_shared(const std::string& dir, const std::vector<std::string>& objects,
                 const std::string& out) {
  run_or_fail("linking", "cd " + shell_quote(dir) + " && " + c_compiler() + " -shared -o " +
                             shell_quote(out) + joined(objects) + " -lm -lpthread");
}

}  // namespace tlmc::toolchain
