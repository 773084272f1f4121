#include "toolchain/object_cache.h"

#include <fcntl.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
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

// Entries are kept in 16 folders by their key's first digit, each held to a sixteenth of
// the size: a store looks at the entries of one folder, not at every entry (a full cache of
// 1 GiB holds some 80,000 objects of a few kernels each).
constexpr int kBuckets = 16;

fs::path bucket_of(const ObjectCache& cache, const std::string& key) {
  return fs::path(cache.folder) / key.substr(0, 1);
}

fs::path entry_path(const ObjectCache& cache, const std::string& key) {
  return bucket_of(cache, key) / (key + ".o");
}

int64_t bucket_bytes(const ObjectCache& cache) { return cache.max_bytes / kBuckets; }

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

// Removes the least recently used entries while the bucket holds more than its share of the
// size, down to three quarters of it (so that the next stores do not each remove one), and
// leftovers of writers that died more than an hour ago.
void trim(const fs::path& bucket, int64_t max_bytes) {
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    uintmax_t bytes;
  };
  std::vector<Entry> entries;
  uintmax_t total = 0;
  std::error_code ec;
  const fs::file_time_type stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (fs::directory_iterator it(bucket, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    std::error_code kind, size, time;
    if (!it->is_regular_file(kind) || kind) continue;
    const uintmax_t bytes = it->file_size(size);
    const fs::file_time_type used = it->last_write_time(time);
    if (size || time) continue;
    std::error_code e;
    const std::string name = p.filename().string();
    if (name.rfind(".tmp-", 0) == 0) {
      if (used < stale) fs::remove(p, e);
      continue;
    }
    if (p.extension() != ".o") continue;
    entries.push_back(Entry{p, used, bytes});
    total += bytes;
  }
  const auto limit = static_cast<uintmax_t>(std::max<int64_t>(max_bytes, 0));
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

// Marks an entry, or the file about to become one, as used now. The file system's own stamp
// moves in steps of a scheduler tick (milliseconds), within which a store and a hit would
// tie for least recently used.
void stamp_now(const fs::path& file) {
  timespec now[2];
  clock_gettime(CLOCK_REALTIME, &now[0]);
  now[1] = now[0];
  ::utimensat(AT_FDCWD, file.c_str(), now, 0);
}

// Whether the folder is one only this user can change: its objects are linked and run.
bool owned_alone(const std::string& folder) {
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0) return errno == ENOENT;  // made by the first store
  return S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// The size in MiB that TLMC_OBJECT_CACHE_MB names; 1024 when unset, and when it is not a
// number (said once).
int64_t size_in_mib() {
  const char* size = std::getenv("TLMC_OBJECT_CACHE_MB");
  if (!size || !*size) return 1024;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(size, &end, 10);
  if (errno == 0 && end && *end == '\0' && v >= 0)
    return std::min<int64_t>(v, int64_t{1} << 30);  // a petabyte: no limit
  static std::once_flag said;
  std::call_once(said, [size] {
    std::fprintf(stderr,
                 "tlmc: warning: TLMC_OBJECT_CACHE_MB=%s is not a size in MiB; the object "
                 "cache keeps to 1024\n",
                 size);
  });
  return 1024;
}

}  // namespace

std::optional<ObjectCache> object_cache_from_environment() {
  ObjectCache cache;
  const char* named = std::getenv("TLMC_OBJECT_CACHE");
  if (named && (strcasecmp(named, "off") == 0 || std::strcmp(named, "0") == 0)) return std::nullopt;
  if (named && *named) {
    cache.folder = named;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    cache.folder = (fs::path(x) / "tlmc" / "objects").string();
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    cache.folder = (fs::path(home) / ".cache" / "tlmc" / "objects").string();
  } else {
    return std::nullopt;
  }
  const int64_t mib = size_in_mib();
  if (mib == 0 || !owned_alone(cache.folder)) return std::nullopt;
  cache.max_bytes = mib << 20;
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
  stamp_now(path);  // recently used: trimmed last
  return object;
}

void store_cached_object(const ObjectCache& cache, const std::string& key,
                         const std::string& object) {
  // An object over half its bucket's share would only push out the others, and then itself;
  // one over the process's file size limit (a candidate's compiling child) would kill it.
  const int64_t entry_bytes = static_cast<int64_t>(sizeof(EntryHeader) + object.size());
  if (entry_bytes > bucket_bytes(cache) / 2) return;
  rlimit files{};
  if (::getrlimit(RLIMIT_FSIZE, &files) == 0 && files.rlim_cur != RLIM_INFINITY &&
      static_cast<uint64_t>(entry_bytes) > files.rlim_cur)
    return;
  std::error_code ec;
  if (fs::create_directories(cache.folder, ec))  // its objects are run: the owner's alone
    fs::permissions(cache.folder, fs::perms::owner_all, ec);
  if (ec) return;
  const fs::path bucket = bucket_of(cache, key);
  fs::create_directories(bucket, ec);
  if (ec) return;
  static std::atomic<uint64_t> serial{0};
  const fs::path temporary =
      bucket / (".tmp-" + key + "-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
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
  stamp_now(temporary);
  fs::rename(temporary, entry_path(cache, key), ec);
  if (ec) {
    fs::remove(temporary, ec);
    return;
  }
  ++stores;
  trim(bucket, bucket_bytes(cache));
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
