#include "lm/checkpoint.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

namespace tlmc::lm {
namespace {

constexpr char kMagic[8] = {'T', 'L', 'M', 'C', 'G', 'P', 'T', '\n'};

template <typename T>
void put(std::ofstream& out, const T& value) {
  out.write(reinterpret_cast<const char*>(&value), sizeof(T));
}
void put_floats(std::ofstream& out, const std::vector<float>& values) {
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
}

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_)
      throw CheckpointError(path +
                            ": cannot open the model file (give an existing file made by "
                            "`tlmc lm pretrain` or `tlmc lm finetune`)");
  }
  template <typename T>
  T get() {
    T value{};
    read(&value, sizeof(T));
    return value;
  }
  std::vector<float> floats(size_t n) {
    std::vector<float> values(n);
    read(values.data(), n * sizeof(float));
    return values;
  }
  void read(void* to, size_t bytes) {
    if (!in_.read(static_cast<char*>(to), static_cast<std::streamsize>(bytes)))
      throw CheckpointError(path_ + ": the model file is truncated");
  }
  bool at_end() { return in_.peek() == std::char_traits<char>::eof(); }

 private:
  std::string path_;
  std::ifstream in_;
};

}  // namespace

void save_checkpoint(const std::string& path, const Gpt& model, const AdamWState* optimiser) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw CheckpointError(path + ": cannot write the model file");
    out.write(kMagic, sizeof(kMagic));
    put(out, kCheckpointVersion);
    put(out, kLanguageVersion);
    put(out, Vocabulary::get().fingerprint());
    const GptConfig& c = model.config();
    for (int32_t x : {c.vocab, c.context, c.channels, c.layers, c.heads}) put(out, x);
    put_floats(out, model.parameters());
    put(out, static_cast<uint8_t>(optimiser ? 1 : 0));
    if (optimiser) {
      put(out, optimiser->step);
      put_floats(out, optimiser->m);
      put_floats(out, optimiser->v);
    }
    if (!out.flush()) {
      std::remove(temp.c_str());
      throw CheckpointError(path + ": writing the model file failed (disk full?)");
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    throw CheckpointError(path + ": cannot replace the model file");
  }
}

Checkpoint load_checkpoint(const std::string& path) {
  Reader in(path);
  char magic[sizeof(kMagic)];
  in.read(magic, sizeof(magic));
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0)
    throw CheckpointError(path + ": not a tlmc model file");
  const auto version = in.get<uint32_t>();
  if (version != kCheckpointVersion)
    throw CheckpointError(path + ": model file format " + std::to_string(version) +
                          ", this tlmc reads " + std::to_string(kCheckpointVersion));
  const auto language = in.get<uint32_t>();
  const auto fingerprint = in.get<uint64_t>();
  if (language != kLanguageVersion || fingerprint != Vocabulary::get().fingerprint())
    throw CheckpointError(path + ": a model of tensor language " + std::to_string(language) +
                          ", this tlmc speaks " + std::to_string(kLanguageVersion) +
                          " (retrain it with `tlmc lm pretrain`)");
  GptConfig c;
  for (int* x : {&c.vocab, &c.context, &c.channels, &c.layers, &c.heads}) *x = in.get<int32_t>();
  if (c.vocab != static_cast<int>(Vocabulary::get().size()) || c.context < 1 ||
      c.context > 1 << 16 || c.channels < 1 || c.channels > 1 << 14 || c.layers < 0 ||
      c.layers > 256 || c.heads < 1 || c.channels % c.heads != 0)
    throw CheckpointError(path + ": the model file's configuration is damaged");
  std::vector<float> params = in.floats(GptLayout(c).total);
  Checkpoint out{Gpt(c, std::move(params)), std::nullopt};
  if (in.get<uint8_t>()) {
    AdamWState state;
    state.step = in.get<int64_t>();
    state.m = in.floats(out.model.parameters().size());
    state.v = in.floats(out.model.parameters().size());
    out.optimiser = std::move(state);
  }
  if (!in.at_end()) throw CheckpointError(path + ": the model file has trailing bytes");
  return out;
}

}  // namespace tlmc::lm
