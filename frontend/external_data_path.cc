#include "frontend/external_data_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace tlmc::frontend {
namespace {

namespace fs = std::filesystem;

// True when `inner` is `outer` or lies below it; both absolute and free of `.` and `..`.
bool lies_within(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // the trailing empty part of "dir/"
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

// The path the kernel gives an open descriptor: every link on the way resolved.
std::string resolved_path_of(int fd) {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
  return ec ? std::string() : p.string();
}

}  // namespace

ExternalDataFile::~ExternalDataFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool ExternalDataFile::read(uint64_t offset, void* out, uint64_t bytes) const {
  auto* at = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t got = ::pread(fd_, at, bytes, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    at += got;
    offset += static_cast<uint64_t>(got);
    bytes -= static_cast<uint64_t>(got);
  }
  return true;
}

// The rule: a model's external data is part of the model, so it lives in the model's folder
// or below it. A downloaded model must not be able to name ~/.ssh/id_rsa, whether by an
// absolute path, by `..`, or by a symlink it ships. Symlinks are followed only where they
// stay within the model's folder, taken either as the user named it or as the folder the
// model file itself resolves into: model caches (Hugging Face's among them) keep the model
// file and its data as symlinks into one blobs folder, so there the data is beside the
// model's real file, and a link elsewhere is refused all the same.
//
// The file is opened once, relative to the model's folder, and the check reads where that
// descriptor leads, so a link swapped in after the check is never followed. A hard link is
// another name of the same file, not a pointer to it: a hard link inside the folder to a
// file elsewhere is read like any file of the folder. Making one takes write access to the
// folder on the same file system as the target (a downloaded archive or git checkout cannot
// bring one that points outside itself), so it is a name the folder's owner gave.
std::variant<ExternalDataFile, RefusedLocation> open_external_data(const fs::path& model_path,
                                                                   const std::string& location) {
  if (location.empty()) return RefusedLocation{"names no location"};
  const fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
    return RefusedLocation{"names the absolute path '" + location +
                           "': external data must be named relative to the model's folder"};
  for (const fs::path& part : rel)
    if (part == "..")
      return RefusedLocation{"names '" + location +
                             "', which leads out of the model's folder through '..'"};
  std::error_code ec;
  const fs::path named_dir = fs::absolute(model_path, ec).parent_path();
  const fs::path file = named_dir / rel;
  const int dir_fd = ::open(named_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0)
    return RefusedLocation{"cannot be checked: the model's folder cannot be opened (" +
                           std::string(std::strerror(errno)) + ")"};
  // The folder as opened (not its name again later), and the file located from it without
  // opening it for reading: reading a device or a FIFO can act before any check.
  const std::string real_named_dir = resolved_path_of(dir_fd);
  const int path_fd = ::openat(dir_fd, location.c_str(), O_PATH | O_CLOEXEC);
  const int open_errno = errno;
  ::close(dir_fd);
  if (path_fd < 0 && open_errno == ENOENT)
    return RefusedLocation{"names '" + location + "', which does not exist (looked for '" +
                           file.string() + "')"};
  if (path_fd < 0)
    return RefusedLocation{"names '" + location +
                           "', which cannot be opened: " + std::strerror(open_errno)};
  struct stat st {};
  const bool regular = ::fstat(path_fd, &st) == 0 && S_ISREG(st.st_mode);
  const std::string real_file = resolved_path_of(path_fd);
  // Read through the located file itself: /proc/self/fd/N reopens what path_fd holds.
  const int fd = regular ? ::open(("/proc/self/fd/" + std::to_string(path_fd)).c_str(),
                                  O_RDONLY | O_CLOEXEC | O_NOCTTY)
                         : -1;
  ::close(path_fd);
  ExternalDataFile opened(fd, file, regular ? static_cast<uint64_t>(st.st_size) : 0);
  if (!regular)
    return RefusedLocation{"names '" + location + "', which is not a regular file (looked at '" +
                           file.string() + "')"};
  if (fd < 0 || real_file.empty() || real_named_dir.empty())
    return RefusedLocation{"names '" + location +
                           "', which cannot be checked: tlmc reads where an open file leads "
                           "from /proc/self/fd (is /proc mounted?)"};
  // A model read from text (a YAML model given in memory) may have no file of its own:
  // then its folder as named is the only one allowed.
  std::error_code model_ec;
  const fs::path real_model = fs::canonical(model_path, model_ec);
  const bool in_model_dir = !model_ec && lies_within(real_file, real_model.parent_path());
  if (!lies_within(real_file, real_named_dir) && !in_model_dir)
    return RefusedLocation{"names '" + location + "', a symlink to '" + real_file +
                           "', outside the model's folder: copy the file into the folder instead"};
  return opened;
}

}  // namespace tlmc::frontend
