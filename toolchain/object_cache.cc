#include "toolchain/object_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SHA256.h"

namespace tlmc::toolchain {
namespace {

namespace fs = std::filesystem;

// An entry: this header, then the object. The digest is the object's, so that an entry cut
// short or changed on disk is told from a whole one.
constexpr char kMagic[8] = {'t', 'l', 'm', 'c', 'o', 'b', 'j', '\n'};
constexpr uint32_t kVersion = 1;
struct EntryHeader {
  char magic[8];
  uint32_t version;
  uint32_t reserved;  // 0
  uint64_t object_bytes;
  uint8_t digest[32];  // SHA-256 of the object
};
static_assert(sizeof(EntryHeader) == 56, "the entry header is read and written as bytes");

std::atomic<int64_t> hits{0}, misses{0}, damaged{0}, stores{0}, evicted{0};

std::array<uint8_t, 32> digest_of(const std::string& bytes) {
  return llvm::SHA256::hash(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

fs::path entry_path(const ObjectCache& cache, const std::string& key) {
  return fs::path(cache.folder) / (key + ".o");
}

bool read_all(int fd, char* out, size_t bytes) {
  while (bytes > 0) {
    const ssize_t n = ::read(fd, out, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

bool write_all(int fd, const char* data, size_t bytes) {
  while (bytes > 0) {
    const ssize_t n = ::write(fd, data, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

// The entry's object when the file is one whole entry.
std::optional<std::string> read_entry(int fd) {
  struct stat st {};
  EntryHeader h{};
  if (::fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < sizeof h ||
      !read_all(fd, reinterpret_cast<char*>(&h), sizeof h))
    return std::nullopt;
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.version != kVersion ||
      h.object_bytes != static_cast<uint64_t>(st.st_size) - sizeof h)
    return std::nullopt;
  std::string object(h.object_bytes, '\0');
  if (!read_all(fd, object.data(), object.size())) return std::nullopt;
  const std::array<uint8_t, 32> d = digest_of(object);
  if (std::memcmp(d.data(), h.digest, d.size()) != 0) return std::nullopt;
  return object;
}

// Removes the least recently used entries while the folder holds more than its size, down
// to three quarters of it (so that the next stores do not each remove one), and leftovers of
// writers that died more than an hour ago.
void trim(const ObjectCache& cache) {
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    uintmax_t bytes;
  };
  std::vector<Entry> entries;
  uintmax_t total = 0;
  std::error_code ec;
  const fs::file_time_type stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (fs::directory_iterator it(cache.folder, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    std::error_code e;
    const uintmax_t bytes = it->file_size(e);
    const fs::file_time_type used = it->last_write_time(e);
    if (e || !it->is_regular_file(e)) continue;
    const std::string name = p.filename().string();
    if (name.rfind(".tmp-", 0) == 0) {
      if (used < stale) fs::remove(p, e);
      continue;
    }
    if (p.extension() != ".o") continue;
    entries.push_back(Entry{p, used, bytes});
    total += bytes;
  }
  const auto limit = static_cast<uintmax_t>(std::max<int64_t>(cache.max_bytes, 0));
  if (total <= limit) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= limit / 4 * 3) break;
    std::error_code gone;
    if (fs::remove(e.path, gone)) {
      total -= e.bytes;
      ++evicted;
    }
  }
}

}  // namespace

std::optional<ObjectCache> object_cache_from_environment() {
  ObjectCache cache;
  const char* named = std::getenv("TLMC_OBJECT_CACHE");
  if (named && std::strcmp(named, "off") == 0) return std::nullopt;
  if (named && *named) {
    cache.folder = named;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    cache.folder = (fs::path(x) / "tlmc" / "objects").string();
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    cache.folder = (fs::path(home) / ".cache" / "tlmc" / "objects").string();
  } else {
    return std::nullopt;
  }
  int64_t mb = 1024;
  if (const char* size = std::getenv("TLMC_OBJECT_CACHE_MB"); size && *size) {
    char* end = nullptr;
    const long long v = std::strtoll(size, &end, 10);
    if (end && *end == '\0' && v >= 0 && v < (int64_t{1} << 40)) mb = v;
  }
  cache.max_bytes = mb << 20;
  return cache;
}

std::optional<std::string> load_cached_object(const ObjectCache& cache, const std::string& key) {
  const fs::path path = entry_path(cache, key);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ++misses;
    return std::nullopt;
  }
  std::optional<std::string> object = read_entry(fd);
  ::close(fd);
  if (!object) {
    ++misses;
    ++damaged;
    std::error_code ec;
    fs::remove(path, ec);
    return std::nullopt;
  }
  ++hits;
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // recently used: trimmed last
  return object;
}

void store_cached_object(const ObjectCache& cache, const std::string& key,
                         const std::string& object) {
  std::error_code ec;
  if (fs::create_directories(cache.folder, ec))  // its objects are run: the owner's alone
    fs::permissions(cache.folder, fs::perms::owner_all, ec);
  if (ec) return;
  static std::atomic<uint64_t> serial{0};
  const fs::path temporary =
      fs::path(cache.folder) /
      (".tmp-" + key + "-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return;
  EntryHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.object_bytes = object.size();
  const std::array<uint8_t, 32> d = digest_of(object);
  std::memcpy(h.digest, d.data(), d.size());
  const bool written = write_all(fd, reinterpret_cast<const char*>(&h), sizeof h) &&
                       write_all(fd, object.data(), object.size());
  if (::close(fd) != 0 || !written) {
    fs::remove(temporary, ec);
    return;
  }
  fs::rename(temporary, entry_path(cache, key), ec);
  if (ec) {
    fs::remove(temporary, ec);
    return;
  }
  ++stores;
  // A look at every entry's size and time: milliseconds for thousands of entries, against
  // the tenths of a second to seconds of the compilation that came before.
  trim(cache);
}

ObjectCacheCounts object_cache_counts() {
  ObjectCacheCounts c;
  c.hits = hits;
  c.misses = misses;
  c.damaged = damaged;
  c.stores = stores;
  c.evicted = evicted;
  return c;
}

}  // namespace tlmc::toolchain
