#include "lm/checkpoint.h"

#include "lm/binary_file.h"

namespace tlmc::lm {
namespace {

constexpr char kMagic[8] = {'T', 'L', 'M', 'C', 'G', 'P', 'T', '\n'};

}  // namespace

void save_checkpoint(const std::string& path, const Gpt& model, const AdamWState* optimiser,
                     const std::string& lineage) {
  if (lineage.size() > 255) throw CheckpointError(path + ": a lineage digest over 255 characters");
  BinaryWriter out(kMagic, kCheckpointVersion, "model file");
  out.put(kLanguageVersion);
  const GptConfig& c = model.config();
  out.put(Vocabulary::get().fingerprint(static_cast<size_t>(c.vocab)));
  for (int32_t x : {c.vocab, c.context, c.channels, c.layers, c.heads}) out.put(x);
  out.put(static_cast<uint8_t>(c.cuda ? 1 : 0));
  out.put(static_cast<uint8_t>(lineage.size()));
  for (char x : lineage) out.put(x);
  out.put_floats(model.parameters());
  out.put(static_cast<uint8_t>(optimiser ? 1 : 0));
  if (optimiser) {
    out.put(optimiser->step);
    out.put_floats(optimiser->m);
    out.put_floats(optimiser->v);
  }
  out.write(path);
}

namespace {

Checkpoint read_checkpoint(BinaryReader& in, const std::string& path) {
  const auto version = in.get<uint32_t>();
  if (version < 1 || version > kCheckpointVersion)
    throw CheckpointError(path + ": model file format " + std::to_string(version) +
                          ", this tlmc reads 1 to " + std::to_string(kCheckpointVersion));
  const auto language = in.get<uint32_t>();
  const auto fingerprint = in.get<uint64_t>();
  GptConfig c;
  for (int* x : {&c.vocab, &c.context, &c.channels, &c.layers, &c.heads}) *x = in.get<int32_t>();
  // Format 1 did not say which targets' sentences the model speaks: its vocabulary told, as
  // only CUDA models were trained on the CUDA words then.
  c.cuda = version >= 2 ? in.get<uint8_t>() != 0
                        : static_cast<size_t>(c.vocab) > Vocabulary::get().cpu_size();
  if (language != kLanguageVersion)
    throw CheckpointError(path + ": a model of tensor language " + std::to_string(language) +
                          ", this tlmc speaks " + std::to_string(kLanguageVersion) +
                          " (retrain it with `tlmc lm pretrain`)");
  // The model knows the language's first c.vocab tokens (lm/vocabulary.h): their fingerprint.
  const Vocabulary& v = Vocabulary::get();
  if (c.vocab < 1 || static_cast<size_t>(c.vocab) > v.size() ||
      fingerprint != v.fingerprint(static_cast<size_t>(c.vocab)))
    throw CheckpointError(path + ": a model of another vocabulary of tensor language " +
                          std::to_string(language) + " (" + std::to_string(c.vocab) +
                          " tokens that are not this tlmc's first ones; retrain it with `tlmc lm "
                          "pretrain`)");
  if (c.context < 1 || c.context > 1 << 16 || c.channels < 1 || c.channels > 1 << 14 ||
      c.layers < 0 || c.layers > 256 || c.heads < 1 || c.channels % c.heads != 0)
    throw CheckpointError(path + ": the model file's configuration is damaged");
  std::string lineage;
  if (version >= 3) {
    lineage.resize(in.get<uint8_t>());
    for (char& x : lineage) x = in.get<char>();
    if (!lineage.empty() && (lineage.size() != 16 ||
                             lineage.find_first_not_of("0123456789abcdef") != std::string::npos))
      throw CheckpointError(path + ": the model file's lineage digest is damaged");
  }
  std::vector<float> params = in.floats(GptLayout(c).total);
  Checkpoint out{Gpt(c, std::move(params)), std::nullopt, std::move(lineage)};
  if (in.get<uint8_t>()) {
    AdamWState state;
    state.step = in.get<int64_t>();
    state.m = in.floats(out.model.parameters().size());
    state.v = in.floats(out.model.parameters().size());
    out.optimiser = std::move(state);
  }
  in.expect_end();
  return out;
}

}  // namespace

Checkpoint load_checkpoint(const std::string& path) {
  BinaryReader in(path, kMagic, "model file",
                  "cannot open the model file (give an existing file made by `tlmc lm pretrain` "
                  "or `tlmc lm finetune`)");
  return read_checkpoint(in, path);
}

Checkpoint load_checkpoint_bytes(const std::string& name, std::string bytes) {
  BinaryReader in(name, std::move(bytes), kMagic, "model file");
  return read_checkpoint(in, name);
}

}  // namespace tlmc::lm
