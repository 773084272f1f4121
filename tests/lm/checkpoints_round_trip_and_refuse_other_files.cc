// Model files: written and read back bit for bit (with or without the optimiser's state);
// a file that is not a model of this tensor language is refused with its reason.
#include <gtest/gtest.h>

#include <fstream>

#include "lm/checkpoint.h"
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

}  // namespace
}  // namespace tlmc::lm
