// Lineage files (lm/lineage.h): written and read back, each digest chained over every stage
// before it, so that a changed list, a stage left out, reordered or cut short is refused
// with its file and line; a lineage from an unlisted parent starts its chain from that
// parent's digest.
#include <gtest/gtest.h>

#include "lm/lineage.h"
#include "support/test_support.h"

namespace tlmc::lm {
namespace {

Lineage two_stages() {
  Lineage l;
  l.stages.push_back(LineageStage{"pretrain",
                                  {{"00000000000000aa", "Conv cin=3 cout=8 kernel=3x3"},
                                   {"00000000000000bb", "chain Add,Relu"}}});
  l.stages.push_back(LineageStage{"finetune", {{"00000000000000aa", ""}}});
  return l;
}

std::string error_of(const std::string& path) {
  try {
    read_lineage(path);
  } catch (const LineageError& e) {
    return e.what();
  }
  return "";
}

TEST(Lineage, ItRoundTripsAndItsDigestChainsOverEveryStage) {
  test::TempDir dir;
  const Lineage l = two_stages();
  write_lineage(dir.file("m.tlm.lineage"), l);
  const Lineage back = read_lineage(dir.file("m.tlm.lineage"));
  ASSERT_EQ(back.stages.size(), 2u);
  EXPECT_EQ(back.stages[0].kind, "pretrain");
  EXPECT_EQ(back.stages[0].keys, l.stages[0].keys);
  EXPECT_EQ(back.stages[1].keys, l.stages[1].keys);
  EXPECT_FALSE(back.from);
  EXPECT_EQ(lineage_digest(back), lineage_digest(l));
  EXPECT_EQ(lineage_digest(l).size(), 16u);
  EXPECT_EQ(lineage_digest(Lineage{}), "");

  // Each change to what was trained on changes the digest: a family, a key, the stages'
  // order, a stage left out.
  Lineage family = l;
  family.stages[1].keys["00000000000000aa"] = "Conv cin=3 cout=8 kernel=3x3";
  Lineage key = l;
  key.stages[0].keys.emplace("00000000000000cc", "");
  Lineage swapped = l;
  std::swap(swapped.stages[0], swapped.stages[1]);
  Lineage first = l;
  first.stages.pop_back();
  for (const Lineage* other : {&family, &key, &swapped, &first})
    EXPECT_NE(lineage_digest(*other), lineage_digest(l));
  // Fine-tuning a model whose lists are not at hand chains from its digest: the same
  // digest as the lineage with the lists.
  Lineage unlisted = unlisted_lineage(lineage_digest(first), {});
  unlisted.stages.push_back(l.stages[1]);
  EXPECT_EQ(lineage_digest(unlisted), lineage_digest(l));
  write_lineage(dir.file("u.lineage"), unlisted);
  EXPECT_EQ(read_lineage(dir.file("u.lineage")).from, lineage_digest(first));
  // A model without a digest stands for itself by its parameters.
  EXPECT_NE(unlisted_lineage("", {1.0f}).from, unlisted_lineage("", {2.0f}).from);
  EXPECT_EQ(test::count_entries(dir.path()), 2) << "no temporary file is left behind";
}

TEST(Lineage, AnEditedOrCutFileIsRefusedWithItsLine) {
  test::TempDir dir;
  const std::string good = lineage_text(two_stages());
  // The text: header, stage, two keys, digest, stage, one key, digest.
  test::write_file(dir.file("edited"), [&] {
    std::string s = good;
    s.replace(s.find("chain Add,Relu"), 14, "chain Add");
    return s;
  }());
  EXPECT_NE(error_of(dir.file("edited")).find(dir.file("edited") + ":5: the digest "),
            std::string::npos)
      << error_of(dir.file("edited"));
  EXPECT_NE(error_of(dir.file("edited"))
                .find("does not follow from the lists above (" +
                      lineage_digest(Lineage{
                          std::nullopt,
                          {LineageStage{"pretrain",
                                        {{"00000000000000aa", "Conv cin=3 cout=8 kernel=3x3"},
                                         {"00000000000000bb", "chain Add"}}}}}) +
                      " does): the lineage was edited or damaged"),
            std::string::npos)
      << error_of(dir.file("edited"));
  test::write_file(dir.file("cut"), good.substr(0, good.rfind("digest ")));
  EXPECT_EQ(error_of(dir.file("cut")),
            dir.file("cut") + ":7: the last stage has no digest line: the file was cut short");
  test::write_file(dir.file("other"), "tlmc: 1\n");
  EXPECT_EQ(
      error_of(dir.file("other")),
      dir.file("other") + ":1: not a lineage file (tlmc lm pretrain and finetune write them)");
  test::write_file(dir.file("newer"), "# tlmc lineage 2: ...\n");
  EXPECT_EQ(error_of(dir.file("newer")),
            dir.file("newer") + ":1: lineage format 2, this tlmc reads 1");
  test::write_file(dir.file("twice"),
                   "# tlmc lineage 1\nstage pretrain\n00000000000000aa\tx\n"
                   "00000000000000aa\ty\n");
  EXPECT_EQ(error_of(dir.file("twice")),
            dir.file("twice") + ":4: workload key 00000000000000aa is listed twice in its stage");
  test::write_file(dir.file("stray"), "# tlmc lineage 1\n00000000000000aa\tx\n");
  EXPECT_EQ(error_of(dir.file("stray")),
            dir.file("stray") +
                ":2: expected 'KEY<tab>FAMILY' inside a stage, or a stage, digest or from line");
  EXPECT_EQ(error_of(dir.file("none")), dir.file("none") + ": cannot read the lineage file");
}

}  // namespace
}  // namespace tlmc::lm
