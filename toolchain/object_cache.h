// A folder of objects compiled in process, each under a digest of everything its compilation
// read (compile_c_in_process), so that C compiled once is not compiled again by a later build,
// tuning run or check. An entry is written whole or not at all and checked when read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tlmc::toolchain {

struct ObjectCache {
  std::string folder;
  int64_t max_bytes = 0;  // past about this, the least recently used entries are removed
};

// The cache of this process's environment: $TLMC_OBJECT_CACHE names the folder ("off" or
// "0": no cache), else $XDG_CACHE_HOME/tlmc/objects, else ~/.cache/tlmc/objects;
// $TLMC_OBJECT_CACHE_MB its size (default 1024; 0: no cache). nullopt when off, when no
// folder is named, and when the folder is one that another user owns or can write.
std::optional<ObjectCache> object_cache_from_environment();

// The object stored under `key` (a hex digest), when there is one and it is whole; a damaged
// entry is removed. A hit marks the entry as recently used.
std::optional<std::string> load_cached_object(const ObjectCache& cache, const std::string& key);

// Stores `object` under `key`: written beside, then renamed into place, so that a reader in
// another process sees the whole entry or none. A folder that cannot be written is no error
// (the cache only saves time). The entries are kept in 16 buckets by the key's first digit,
// each held to a sixteenth of max_bytes by dropping its least recently used entries; an
// object over half of that is not kept.
void store_cached_object(const ObjectCache& cache, const std::string& key,
                         const std::string& object);

// What this process's lookups and stores did, for tests and reports.
struct ObjectCacheCounts {
  int64_t hits = 0;
  int64_t misses = 0;   // no entry, or a damaged one
  int64_t damaged = 0;  // entries found whole in name only, and removed
  int64_t stores = 0;
  int64_t evicted = 0;  // entries removed to keep the folder under its size
};
ObjectCacheCounts object_cache_counts();

}  // namespace tlmc::toolchain
