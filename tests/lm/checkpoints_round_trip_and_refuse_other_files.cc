// Model files: written and read back bit for bit (with or without the optimiser's state, of
// CPU or CUDA targets, with their lineage's digest), files of earlier formats still read; a file
// that is not a model of this tensor language is refused with its reason. A model grown to
// the whole vocabulary computes what it computed before. Sentence files alike: damaged ones
// are refused with their reason, before any memory their sizes ask for.
#include <gtest/gtest.h>

#include <fstream>

#include "lm/checkpoint.h"
#include "lm/sentence_file.h"
#include "support/test_support.h"

namespace tlmc::lm {
namespace {

GptConfig tiny() { return GptConfig{static_cast<int>(Vocabulary::get().size()), 16, 8, 1, 2}; }

std::string error_of(const std::string& path) {
  try {
    load_checkpoint(path);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

TEST(Checkpoint, ModelAndOptimiserStateRoundTrip) {
  test::TempDir dir;
  Gpt model(tiny(), 5);
  AdamWState state;
  state.step = 17;
  state.m.assign(model.parameters().size(), 0.25f);
  state.v.assign(model.parameters().size(), 0.5f);
  save_checkpoint(dir.file("m.tlm"), model, &state);
  Checkpoint back = load_checkpoint(dir.file("m.tlm"));
  EXPECT_EQ(back.model.config(), model.config());
  EXPECT_EQ(back.model.parameters(), model.parameters());
  ASSERT_TRUE(back.optimiser);
  EXPECT_EQ(back.optimiser->step, 17);
  EXPECT_EQ(back.optimiser->m, state.m);
  EXPECT_EQ(back.optimiser->v, state.v);

  save_checkpoint(dir.file("m.tlm"), model);
  EXPECT_FALSE(load_checkpoint(dir.file("m.tlm")).optimiser);
  // A model that knows the CPU part of the language only (the bundled CPU model's kind) reads
  // back, and reads a token beyond it as <unk>.
  GptConfig cpu = tiny();
  cpu.vocab = static_cast<int>(Vocabulary::get().cpu_size());
  save_checkpoint(dir.file("m.tlm"), Gpt(cpu, 5));
  const Gpt cpu_model = load_checkpoint(dir.file("m.tlm")).model;
  EXPECT_EQ(cpu_model.config(), cpu);
  EXPECT_EQ(cpu_model.known_token(Vocabulary::get().at("gpu")), Vocabulary::kUnk);
  EXPECT_EQ(cpu_model.known_token(Vocabulary::get().at("hw")), Vocabulary::get().at("hw"));
  EXPECT_EQ(test::count_entries(dir.path()), 1) << "no temporary file is left behind";
}

// The bytes of a model file of an earlier format, from those of format 3 without a lineage:
// format 2 has no lineage digest's length (the byte after the configuration's five counts and
// whether the model speaks CUDA targets' sentences), format 1 neither of the two bytes.
std::string as_format(std::string v3, uint32_t version) {
  v3.replace(8, sizeof(version), reinterpret_cast<const char*>(&version), sizeof(version));
  return version == 2 ? v3.erase(45, 1) : v3.erase(44, 2);
}

TEST(Checkpoint, WhichTargetsTheModelSpeaksIsKeptAndFormat1IsRead) {
  test::TempDir dir;
  for (bool cuda : {false, true}) {
    GptConfig c = tiny();
    c.cuda = cuda;
    save_checkpoint(dir.file("m.tlm"), Gpt(c, 5));
    const Gpt back = load_checkpoint(dir.file("m.tlm")).model;
    EXPECT_EQ(back.config(), c);
    // A CPU model knows float64 (a later CPU word) but not gpu; a CUDA model knows both.
    EXPECT_EQ(back.known_token(Vocabulary::get().at("gpu")),
              cuda ? Vocabulary::get().at("gpu") : Vocabulary::kUnk);
    EXPECT_EQ(back.known_token(Vocabulary::get().at("float64")), Vocabulary::get().at("float64"));
  }
  // Format 1 told by the vocabulary: only CUDA models knew more than the CPU words.
  for (size_t vocab : {Vocabulary::get().cpu_size(), Vocabulary::get().cpu_size() + 20}) {
    GptConfig c = tiny();
    c.vocab = static_cast<int>(vocab);
    const Gpt model(c, 7);
    save_checkpoint(dir.file("m.tlm"), model);
    test::write_file(dir.file("v1.tlm"), as_format(test::read_file(dir.file("m.tlm")), 1));
    const Gpt back = load_checkpoint(dir.file("v1.tlm")).model;
    EXPECT_EQ(back.config().cuda, vocab > Vocabulary::get().cpu_size());
    EXPECT_EQ(back.parameters(), model.parameters());
  }
  // Format 2: whether the model speaks CUDA targets' sentences, no lineage.
  GptConfig c = tiny();
  c.cuda = true;
  save_checkpoint(dir.file("m.tlm"), Gpt(c, 9));
  test::write_file(dir.file("v2.tlm"), as_format(test::read_file(dir.file("m.tlm")), 2));
  const Checkpoint v2 = load_checkpoint(dir.file("v2.tlm"));
  EXPECT_TRUE(v2.model.config().cuda);
  EXPECT_EQ(v2.lineage, "");
  EXPECT_EQ(v2.model.parameters(), Gpt(c, 9).parameters());
}

// Format 3 keeps the digest of the model's lineage (lm/lineage.h); a damaged one is refused.
TEST(Checkpoint, TheLineageDigestIsKept) {
  test::TempDir dir;
  const Gpt model(tiny(), 5);
  save_checkpoint(dir.file("m.tlm"), model, nullptr, "0123456789abcdef");
  const Checkpoint back = load_checkpoint(dir.file("m.tlm"));
  EXPECT_EQ(back.lineage, "0123456789abcdef");
  EXPECT_EQ(back.model.parameters(), model.parameters());
  std::string bytes = test::read_file(dir.file("m.tlm"));
  bytes[46] = 'X';  // the digest's first character
  test::write_file(dir.file("bad.tlm"), bytes);
  EXPECT_EQ(error_of(dir.file("bad.tlm")),
            dir.file("bad.tlm") + ": the model file's lineage digest is damaged");
}

TEST(Checkpoint, AModelGrownToTheWholeVocabularyComputesAsBefore) {
  GptConfig c = tiny();
  c.vocab = static_cast<int>(Vocabulary::get().cpu_size());
  Gpt before(c, 11);
  Gpt grown = with_whole_vocabulary(before);
  EXPECT_EQ(grown.config().vocab, static_cast<int>(Vocabulary::get().size()));
  EXPECT_FALSE(grown.config().cuda);
  const Vocabulary& v = Vocabulary::get();
  // Words the first model read as <unk> (float64, tensorize), a CUDA word, numbers.
  Batch b;
  b.B = 1;
  b.T = 8;
  b.tokens = {Vocabulary::kBos, v.at("float64"), v.at("tensorize"), v.at("gpu"),
              v.at("stage"),    v.number(3),     v.number(7),       v.number(12)};
  b.predictions = {{4, {v.number(3), v.number(5)}, 0}, {6, {v.number(1), v.number(12)}, 1}};
  EXPECT_EQ(before.forward(b), grown.forward(b));
  EXPECT_EQ(grown.known_token(v.at("tensorize")), v.at("tensorize"));
  EXPECT_EQ(grown.known_token(v.at("gpu")), Vocabulary::kUnk);
  // Growing a model that knows every word changes nothing.
  EXPECT_EQ(with_whole_vocabulary(grown).parameters(), grown.parameters());
}

TEST(Checkpoint, OtherFilesAreRefusedWithTheirReason) {
  test::TempDir dir;
  save_checkpoint(dir.file("m.tlm"), Gpt(tiny(), 5));
  const std::string good = test::read_file(dir.file("m.tlm"));

  EXPECT_EQ(error_of(dir.file("none.tlm")),
            dir.file("none.tlm") +
                ": cannot open the model file (give an existing file made by `tlmc lm pretrain` "
                "or `tlmc lm finetune`)");
  test::write_file(dir.file("short.tlm"), good.substr(0, good.size() / 2));
  EXPECT_EQ(error_of(dir.file("short.tlm")),
            dir.file("short.tlm") + ": the model file is truncated");
  test::write_file(dir.file("text.tlm"), "tlmc: 1\nname: m\n");
  EXPECT_EQ(error_of(dir.file("text.tlm")), dir.file("text.tlm") + ": not a tlmc model file");
  std::string other = good;
  other[12] = 99;  // the tensor language's version
  test::write_file(dir.file("other.tlm"), other);
  EXPECT_EQ(error_of(dir.file("other.tlm")),
            dir.file("other.tlm") +
                ": a model of tensor language 99, this tlmc speaks 1 (retrain it with `tlmc lm "
                "pretrain`)");
  std::string vocabulary = good;
  vocabulary[16] ^= 1;  // the vocabulary's fingerprint
  test::write_file(dir.file("vocabulary.tlm"), vocabulary);
  EXPECT_EQ(error_of(dir.file("vocabulary.tlm")),
            dir.file("vocabulary.tlm") + ": a model of another vocabulary of tensor language 1 (" +
                std::to_string(Vocabulary::get().size()) +
                " tokens that are not this tlmc's first ones; retrain it with `tlmc lm "
                "pretrain`)");
  // A damaged size is refused as a short file, before memory for it is asked.
  std::string huge = good;
  const int32_t channels = 1 << 13;
  huge.replace(32, sizeof(channels), reinterpret_cast<const char*>(&channels), sizeof(channels));
  test::write_file(dir.file("huge.tlm"), huge);
  EXPECT_EQ(error_of(dir.file("huge.tlm")), dir.file("huge.tlm") + ": the model file is truncated");
  test::write_file(dir.file("long.tlm"), good + "x");
  EXPECT_EQ(error_of(dir.file("long.tlm")),
            dir.file("long.tlm") + ": the model file has trailing bytes");
}

std::string sentence_error_of(const std::string& path) {
  try {
    read_sentences(path);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

TEST(SentenceFile, DamagedFilesAreRefusedWithTheirReason) {
  test::TempDir dir;
  Sentence s;
  const Token word = Vocabulary::get().at("tile");
  s.tokens = {word, word, word};
  s.choices = {{}, {word}, {}};
  write_sentences(dir.file("s.bin"), {s, s});
  ASSERT_EQ(read_sentences(dir.file("s.bin")).size(), 2u);
  const std::string good = test::read_file(dir.file("s.bin"));
  // The magic (8 bytes), the format (4), the language (4), the fingerprint (8), the count
  // of sentences (8), then the first sentence's count of tokens (4) and its tokens (2 each).
  auto damaged = [&](const std::string& name, size_t at, const std::string& bytes) {
    std::string d = good;
    d.replace(at, bytes.size(), bytes);
    test::write_file(dir.file(name), d);
    return sentence_error_of(dir.file(name));
  };
  auto u64 = [](uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), sizeof v); };
  auto u32 = [](uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), sizeof v); };
  auto u16 = [](uint16_t v) { return std::string(reinterpret_cast<const char*>(&v), sizeof v); };
  EXPECT_EQ(damaged("magic.bin", 0, "TLMCSEM\n"),
            dir.file("magic.bin") + ": not a tlmc sentence file");
  EXPECT_EQ(damaged("format.bin", 8, u32(7)),
            dir.file("format.bin") + ": a sentence file of another format version");
  EXPECT_EQ(
      damaged("language.bin", 12, u32(99)),
      dir.file("language.bin") + ": sentences of another tensor language (sample them again)");
  // 2^40 sentences, or a sentence of 2^32 - 1 tokens, in a file of a few dozen bytes: refused
  // at the end of the file, not by asking for the memory.
  EXPECT_EQ(damaged("count.bin", 24, u64(uint64_t{1} << 40)),
            dir.file("count.bin") + ": the sentence file is truncated");
  EXPECT_EQ(damaged("tokens.bin", 32, u32(0xffffffffu)),
            dir.file("tokens.bin") + ": the sentence file is truncated");
  EXPECT_EQ(damaged("token.bin", 36, u16(0xfffe)),
            dir.file("token.bin") + ": the sentence file has a token outside the vocabulary");
  test::write_file(dir.file("short.bin"), good.substr(0, good.size() - 1));
  EXPECT_EQ(sentence_error_of(dir.file("short.bin")),
            dir.file("short.bin") + ": the sentence file is truncated");
  test::write_file(dir.file("long.bin"), good + "x");
  EXPECT_EQ(sentence_error_of(dir.file("long.bin")),
            dir.file("long.bin") + ": the sentence file has trailing bytes");
}

}  // namespace
}  // namespace tlmc::lm
