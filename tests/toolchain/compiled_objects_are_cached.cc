// The object cache behind compile_c_in_process (toolchain/object_cache.h): a hit gives the
// bytes a compilation would; a header that changes is a miss and the folder it is read from
// is not; a damaged entry is compiled again; failures and warnings are not kept; a folder
// that cannot be written costs nothing; the folder keeps to its size; processes that store
// one entry at once leave it whole.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/target.h"
#include "support/test_support.h"
#include "toolchain/clang_in_process.h"
#include "toolchain/object_cache.h"

namespace tlmc::test {
namespace {

namespace fs = std::filesystem;
using toolchain::InProcessObject;
using toolchain::ObjectCacheCounts;

// Sets an environment variable for the scope's life, and puts back what was there.
class Scoped {
 public:
  Scoped(const char* name, const std::string& value) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
    setenv(name, value.c_str(), 1);
  }
  ~Scoped() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  Scoped(const Scoped&) = delete;
  Scoped& operator=(const Scoped&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::vector<std::string> flags(const char* target = "x86-64") {
  return toolchain::generated_code_flags(*ir::parse_target(target));
}

InProcessObject compile(const std::string& source, const std::vector<std::string>& f = flags()) {
  return toolchain::compile_c_in_process(source, f);
}

// What the cache did since `before`.
ObjectCacheCounts since(const ObjectCacheCounts& before) {
  ObjectCacheCounts now = toolchain::object_cache_counts();
  now.hits -= before.hits;
  now.misses -= before.misses;
  now.damaged -= before.damaged;
  now.stores -= before.stores;
  now.evicted -= before.evicted;
  return now;
}

std::vector<fs::path> entries(const std::string& folder) {
  std::vector<fs::path> out;
  if (!fs::exists(folder)) return out;
  for (const fs::directory_entry& e : fs::directory_iterator(folder)) out.push_back(e.path());
  return out;
}

// Every entry of the cache, by bucket (the key's first digit).
std::map<std::string, std::set<std::string>> entries_by_bucket(const std::string& folder) {
  std::map<std::string, std::set<std::string>> out;
  for (const fs::path& bucket : entries(folder))
    for (const fs::path& e : entries(bucket.string()))
      out[bucket.filename().string()].insert(e.filename().string());
  return out;
}

std::set<std::string> all_entries(const std::string& folder) {
  std::set<std::string> out;
  for (const auto& [bucket, names] : entries_by_bucket(folder))
    out.insert(names.begin(), names.end());
  return out;
}

const char* kScale = "float scale(float x) { return x * 3.0f; }\n";

// The object compiled without a cache.
std::string fresh(const std::string& source) {
  Scoped off("TLMC_OBJECT_CACHE", "off");
  const InProcessObject o = compile(source);
  EXPECT_TRUE(o.ok) << o.diagnostics;
  return o.object;
}

TEST(ObjectCache, AHitGivesTheBytesACompilationWould) {
  TempDir dir;
  const std::string folder = dir.file("cache");
  const std::string expected = fresh(kScale);
  EXPECT_FALSE(fs::exists(folder));  // "off" wrote nothing
  Scoped on("TLMC_OBJECT_CACHE", folder);
  const ObjectCacheCounts before = toolchain::object_cache_counts();
  const InProcessObject first = compile(kScale), second = compile(kScale);
  ObjectCacheCounts did = since(before);
  EXPECT_EQ(did.misses, 1);
  EXPECT_EQ(did.stores, 1);
  EXPECT_EQ(did.hits, 1);
  ASSERT_TRUE(first.ok && second.ok);
  EXPECT_EQ(first.object, expected);
  EXPECT_EQ(second.object, expected);
  ASSERT_EQ(all_entries(folder).size(), 1u);
  EXPECT_EQ(fs::status(folder).permissions() & fs::perms::all, fs::perms::owner_all);
  // Other flags, another object.
  const InProcessObject avx2 = compile(kScale, flags("x86-64-avx2"));
  did = since(before);
  EXPECT_EQ(did.misses, 2);
  EXPECT_EQ(did.hits, 1);
  EXPECT_EQ(all_entries(folder).size(), 2u);
}

TEST(ObjectCache, AHeaderThatChangesIsAMissAndItsFolderIsNot) {
  TempDir dir;
  Scoped on("TLMC_OBJECT_CACHE", dir.file("cache"));
  fs::create_directories(dir.file("a"));
  fs::create_directories(dir.file("b"));
  write_file(dir.file("a/k.h"), "#define K 3.0f\n");
  write_file(dir.file("b/k.h"), "#define K 3.0f\n");
  const std::string source = "#include \"k.h\"\nfloat scale(float x) { return x * K; }\n";
  auto through = [&](const std::string& folder) {
    std::vector<std::string> f = flags();
    f.push_back("-I" + dir.file(folder));
    const InProcessObject o = compile(source, f);
    EXPECT_TRUE(o.ok) << o.diagnostics;
    return o.object;
  };
  const ObjectCacheCounts before = toolchain::object_cache_counts();
  const std::string a = through("a");
  const std::string b = through("b");  // the same text through another folder: a hit
  EXPECT_EQ(since(before).hits, 1);
  EXPECT_EQ(a, b);
  write_file(dir.file("b/k.h"), "#define K 5.0f\n");
  const std::string changed = through("b");
  EXPECT_EQ(since(before).hits, 1);
  EXPECT_EQ(since(before).misses, 2);
  EXPECT_NE(changed, a);
}

TEST(ObjectCache, ADamagedEntryIsCompiledAgainAndReplaced) {
  TempDir dir;
  const std::string folder = dir.file("cache");
  const std::string expected = fresh(kScale);
  Scoped on("TLMC_OBJECT_CACHE", folder);
  ASSERT_TRUE(compile(kScale).ok);
  ASSERT_EQ(all_entries(folder).size(), 1u);
  const std::string name = *all_entries(folder).begin();
  const fs::path entry = fs::path(folder) / name.substr(0, 1) / name;
  const std::string whole = read_file(entry.string());
  std::string flipped = whole;
  flipped[flipped.size() - 9] ^= 0x10;  // a byte of the object
  std::string bigger = whole;
  bigger[16] ^= 0x01;  // the object's length in the header
  for (const std::string& damage :
       {whole.substr(0, whole.size() / 2), flipped, bigger, std::string(), std::string("x")}) {
    write_file(entry.string(), damage);
    const ObjectCacheCounts before = toolchain::object_cache_counts();
    const InProcessObject o = compile(kScale);
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.object, expected);
    const ObjectCacheCounts did = since(before);
    EXPECT_EQ(did.damaged, 1) << damage.size() << " bytes";
    EXPECT_EQ(did.hits, 0);
    EXPECT_EQ(read_file(entry.string()), whole);  // stored again
  }
}

TEST(ObjectCache, FailuresAndWarningsAreNotKept) {
  TempDir dir;
  const std::string folder = dir.file("cache");
  Scoped on("TLMC_OBJECT_CACHE", folder);
  EXPECT_FALSE(compile("float scale(float x) { return x * ; }\n").ok);
  const std::string warned = "#warning a word from the source\nint one(void) { return 1; }\n";
  for (int i = 0; i < 2; ++i) {
    const InProcessObject o = compile(warned);
    EXPECT_TRUE(o.ok);
    EXPECT_NE(o.diagnostics.find("a word from the source"), std::string::npos) << o.diagnostics;
  }
  EXPECT_TRUE(all_entries(folder).empty());
}

TEST(ObjectCache, AFolderThatCannotBeMadeCostsNothing) {
  TempDir dir;
  write_file(dir.file("a-file"), "not a folder");
  const std::string expected = fresh(kScale);
  Scoped on("TLMC_OBJECT_CACHE", dir.file("a-file") + "/cache");
  const ObjectCacheCounts before = toolchain::object_cache_counts();
  for (int i = 0; i < 2; ++i) {
    const InProcessObject o = compile(kScale);
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.object, expected);
  }
  EXPECT_EQ(since(before).hits, 0);
  EXPECT_EQ(since(before).stores, 0);
}

// Nothing is looked up or kept: with the cache off (by name or by a size of 0), in a folder
// that others can write (its objects are linked and run), and for flags whose objects
// record more than the text (debug information). A size that is no number is the default.
TEST(ObjectCache, WhatTurnsItOff) {
  TempDir dir;
  const std::string folder = dir.file("cache");
  auto nothing_done = [&](const std::vector<std::string>& f, const std::string& what) {
    const ObjectCacheCounts before = toolchain::object_cache_counts();
    const InProcessObject o = compile(kScale, f);
    EXPECT_TRUE(o.ok) << what;
    const ObjectCacheCounts did = since(before);
    EXPECT_EQ(did.hits + did.misses + did.stores, 0) << what;
    EXPECT_TRUE(all_entries(folder).empty()) << what;
  };
  {
    Scoped off("TLMC_OBJECT_CACHE", "OFF");
    nothing_done(flags(), "OFF");
  }
  Scoped on("TLMC_OBJECT_CACHE", folder);
  {
    Scoped size("TLMC_OBJECT_CACHE_MB", "0");
    nothing_done(flags(), "a size of 0");
    EXPECT_FALSE(fs::exists(folder));
  }
  std::vector<std::string> debug = flags();
  debug.emplace_back("-g");
  nothing_done(debug, "-g");
  fs::create_directories(folder);
  fs::permissions(folder, fs::perms::all);
  nothing_done(flags(), "a folder others can write");
  fs::permissions(folder, fs::perms::owner_all);
  Scoped size("TLMC_OBJECT_CACHE_MB", "lots");
  const ObjectCacheCounts before = toolchain::object_cache_counts();
  EXPECT_TRUE(compile(kScale).ok);
  EXPECT_EQ(since(before).stores, 1);
}

// A source the preprocessor cannot read is Clang's error, as without the cache.
TEST(ObjectCache, ASourceThatCannotBePreprocessedFailsAsBefore) {
  TempDir dir;
  Scoped on("TLMC_OBJECT_CACHE", dir.file("cache"));
  const InProcessObject o = compile("#include \"nowhere.h\"\nint one(void) { return 1; }\n");
  EXPECT_FALSE(o.ok);
  EXPECT_NE(o.diagnostics.find("'nowhere.h' file not found"), std::string::npos) << o.diagnostics;
  EXPECT_TRUE(all_entries(dir.file("cache")).empty());
}

// A source whose object holds a table of `bytes` bytes, told apart by `n`.
std::string table_source(int n, int bytes) {
  return "const unsigned char table_" + std::to_string(n) + "[" + std::to_string(bytes) + "] = {" +
         std::to_string(n + 1) + "};\n";
}

TEST(ObjectCache, EachBucketKeepsToItsShareDroppingTheLeastRecentlyUsed) {
  TempDir dir;
  const std::string folder = dir.file("cache");
  Scoped on("TLMC_OBJECT_CACHE", folder);
  Scoped size("TLMC_OBJECT_CACHE_MB", "2");  // 16 buckets of 128 KiB
  const int bytes = 40 << 10;                // three entries to a bucket
  const ObjectCacheCounts before = toolchain::object_cache_counts();
  ASSERT_TRUE(compile(table_source(0, bytes)).ok);
  const std::string hot = *all_entries(folder).begin();    // in use throughout
  std::map<std::string, std::vector<std::string>> stored;  // bucket -> its entries, in order
  for (int n = 1; n <= 48; ++n) {
    const std::set<std::string> was = all_entries(folder);
    ASSERT_TRUE(compile(table_source(n, bytes)).ok);
    std::vector<std::string> added;
    for (const std::string& e : all_entries(folder))
      if (!was.count(e)) added.push_back(e);
    ASSERT_EQ(added.size(), 1u) << "table " << n;
    stored[added[0].substr(0, 1)].push_back(added[0]);
    ASSERT_TRUE(compile(table_source(0, bytes)).ok);
    for (const auto& [bucket, names] : entries_by_bucket(folder)) {
      uintmax_t total = 0;
      for (const std::string& e : names) total += fs::file_size(fs::path(folder) / bucket / e);
      EXPECT_LE(total, uintmax_t{128} << 10) << "bucket " << bucket << " after table " << n;
    }
  }
  const ObjectCacheCounts did = since(before);
  EXPECT_EQ(did.hits, 48);    // the table in use was never dropped
  EXPECT_GE(did.evicted, 1);  // 49 entries, 16 buckets of three
  EXPECT_EQ(did.evicted, did.stores - static_cast<int64_t>(all_entries(folder).size()));
  // What each bucket kept is the entries it took last.
  for (const auto& [bucket, names] : entries_by_bucket(folder)) {
    std::vector<std::string> order = stored[bucket];
    std::set<std::string> kept = names;
    kept.erase(hot);
    const std::vector<std::string> last(order.end() - static_cast<std::ptrdiff_t>(kept.size()),
                                        order.end());
    EXPECT_EQ(kept, std::set<std::string>(last.begin(), last.end())) << "bucket " << bucket;
  }
  // An object over half a bucket's share is compiled and not kept.
  const InProcessObject large = compile(table_source(49, 80 << 10));
  EXPECT_TRUE(large.ok);
  EXPECT_EQ(since(before).stores, did.stores);
}

TEST(ObjectCache, ProcessesStoringOneEntryAtOnceLeaveItWhole) {
  TempDir dir;
  const std::string folder = dir.file("cache");
  const std::string source = table_source(7, 64 << 10);
  const std::string expected = fresh(source);
  Scoped on("TLMC_OBJECT_CACHE", folder);
  std::vector<pid_t> children;
  const ObjectCacheCounts before = toolchain::object_cache_counts();  // the children's too
  for (int c = 0; c < 6; ++c) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      bool same = true;
      for (int i = 0; i < 4; ++i) same = same && compile(source).object == expected;
      // An entry read while another process wrote it would have been damaged.
      _exit(same && since(before).damaged == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << pid << " " << status;
  }
  ASSERT_EQ(all_entries(folder).size(), 1u);  // one entry, no writer's leftovers
  EXPECT_EQ(compile(source).object, expected);
  EXPECT_EQ(since(before).hits, 1);
}

}  // namespace
}  // namespace tlmc::test
