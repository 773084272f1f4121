#include "lm/generate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <random>

#include "ir/diagnostic.h"
#include "lm/gpt_kernels.h"
#include "lm/tensor_sentence.h"

namespace tlmc::lm {
namespace {

using scheduler::SketchCursor;
using scheduler::Sketches;

// Keys and values of one sequence's positions, per layer: [length, C] each.
struct KvCache {
  std::vector<std::vector<float>> k, v;
  size_t length = 0;
};

// Runs the model one position at a time for several streams at once; the prompt's keys and
// values are computed once and shared by every stream.
class Decoder {
 public:
  Decoder(const Gpt& model, const std::vector<Token>& prompt)
      : serial_(), m_(model), w_(model.layout()) {
    prefix_ = empty_cache();
    for (size_t t = 0; t < prompt.size(); ++t) {
      prompt_hidden_ = run({&prefix_}, nullptr, {prompt[t]}, static_cast<int>(t));
    }
  }
  // The hidden state [C] after the prompt's last token: it predicts the sketch.
  const std::vector<float>& prompt_hidden() const { return prompt_hidden_; }
  size_t prompt_length() const { return prefix_.length; }
  const Gpt& model() const { return m_; }
  KvCache empty_cache() const {
    KvCache c;
    c.k.resize(static_cast<size_t>(m_.config().layers));
    c.v.resize(static_cast<size_t>(m_.config().layers));
    return c;
  }
  // Feeds tokens[s] to the stream of caches[s] at position `pos` (after the prompt); hidden
  // states [S, C].
  std::vector<float> step(const std::vector<KvCache*>& caches, const std::vector<Token>& tokens,
                          int pos) {
    return run(caches, &prefix_, tokens, pos);
  }

 private:
  std::vector<float> run(const std::vector<KvCache*>& caches, const KvCache* prefix,
                         const std::vector<Token>& tokens, int pos) {
    const GptConfig& c = m_.config();
    TLMC_ASSERT(pos < c.context, "position " << pos << " beyond the context " << c.context);
    const size_t S = tokens.size(), C = static_cast<size_t>(c.channels);
    const int H = c.heads, hs = c.channels / H;
    const float* p = m_.parameters().data();
    std::vector<float> x(S * C), ln(S * C), qkv(S * 3 * C), y(S * C), h(S * 4 * C), hg(S * 4 * C),
        out(S * C), mean(S), rstd(S);
    for (size_t s = 0; s < S; ++s)  // x [S, C]
      for (size_t i = 0; i < C; ++i)
        x[s * C + i] = p[w_.wte + static_cast<size_t>(m_.known_token(tokens[s])) * C + i] +
                       p[w_.wpe + static_cast<size_t>(pos) * C + i];
    std::vector<float> scores;
    for (int l = 0; l < c.layers; ++l) {
      const size_t lc = static_cast<size_t>(l) * C;
      layernorm_forward(ln.data(), mean.data(), rstd.data(), x.data(), p + w_.ln1w + lc,
                        p + w_.ln1b + lc, S, c.channels);
      matmul_forward(qkv.data(), ln.data(), p + w_.qkvw + 3 * lc * C, p + w_.qkvb + 3 * lc, S,
                     c.channels, 3 * c.channels);  // qkv [S, 3C]
      // Each stream's own key and value at this position, then attention head by head: the
      // shared prefix's part as products of all streams at once.
      CachedHead head;
      head.ldq = 3 * C;
      head.prefix_length = prefix ? prefix->length : 0;
      head.C = C;
      head.hs = hs;
      for (size_t s = 0; s < S; ++s) {
        KvCache& own = *caches[s];
        std::vector<float>& k = own.k[static_cast<size_t>(l)];
        std::vector<float>& v = own.v[static_cast<size_t>(l)];
        k.insert(k.end(), qkv.begin() + static_cast<std::ptrdiff_t>(s * 3 * C + C),
                 qkv.begin() + static_cast<std::ptrdiff_t>(s * 3 * C + 2 * C));
        v.insert(v.end(), qkv.begin() + static_cast<std::ptrdiff_t>(s * 3 * C + 2 * C),
                 qkv.begin() + static_cast<std::ptrdiff_t>(s * 3 * C + 3 * C));
        head.own_length.push_back(k.size() / C);
      }
      for (int hd = 0; hd < H; ++hd) {
        const size_t offset = static_cast<size_t>(hd) * static_cast<size_t>(hs);
        head.q = qkv.data() + offset;
        if (prefix) {
          head.prefix_k = prefix->k[static_cast<size_t>(l)].data() + offset;
          head.prefix_v = prefix->v[static_cast<size_t>(l)].data() + offset;
        }
        head.own_k.clear();
        head.own_v.clear();
        for (size_t s = 0; s < S; ++s) {
          head.own_k.push_back(caches[s]->k[static_cast<size_t>(l)].data() + offset);
          head.own_v.push_back(caches[s]->v[static_cast<size_t>(l)].data() + offset);
        }
        cached_attention_forward(y.data() + offset, head, scores);
      }
      matmul_forward(out.data(), y.data(), p + w_.attprojw + lc * C, p + w_.attprojb + lc, S,
                     c.channels, c.channels);
      add_inplace(x.data(), out.data(), S * C);
      layernorm_forward(ln.data(), mean.data(), rstd.data(), x.data(), p + w_.ln2w + lc,
                        p + w_.ln2b + lc, S, c.channels);
      matmul_forward(h.data(), ln.data(), p + w_.fcw + 4 * lc * C, p + w_.fcb + 4 * lc, S,
                     c.channels, 4 * c.channels);
      gelu_forward(hg.data(), h.data(), S * 4 * C);
      matmul_forward(out.data(), hg.data(), p + w_.fcprojw + 4 * lc * C, p + w_.fcprojb + lc, S,
                     4 * c.channels, c.channels);
      add_inplace(x.data(), out.data(), S * C);
    }
    for (KvCache* cache : caches) ++cache->length;
    layernorm_forward(ln.data(), mean.data(), rstd.data(), x.data(), p + w_.lnfw, p + w_.lnfb, S,
                      c.channels);
    return ln;
  }

  SerialProducts serial_;  // for the decoder's life
  const Gpt& m_;
  const GptLayout& w_;
  KvCache prefix_;
  std::vector<float> prompt_hidden_;
};

// The logits of `choices` from a hidden state (against the tied embedding's rows).
std::vector<double> logits(const Gpt& m, const float* hidden, const std::vector<Token>& choices) {
  const size_t C = static_cast<size_t>(m.config().channels);
  const float* wte = m.parameters().data() + m.layout().wte;
  std::vector<double> out(choices.size());
  for (size_t j = 0; j < choices.size(); ++j) {
    double dot = 0;
    for (size_t i = 0; i < C; ++i) dot += hidden[i] * wte[static_cast<size_t>(choices[j]) * C + i];
    out[j] = dot;
  }
  return out;
}

// Log-probabilities of logits divided by `temperature`.
std::vector<double> log_softmax(std::vector<double> x, float temperature) {
  for (double& v : x) v /= temperature;
  const double top = *std::max_element(x.begin(), x.end());
  double sum = 0;
  for (double v : x) sum += std::exp(v - top);
  const double log_sum = top + std::log(sum);
  for (double& v : x) v -= log_sum;
  return x;
}

// Draws an index from log-probabilities, among the top_k likeliest (all when 0).
size_t draw(const std::vector<double>& logp, int top_k, std::mt19937_64& rng) {
  std::vector<size_t> order(logp.size());
  std::iota(order.begin(), order.end(), 0);
  if (top_k > 0 && static_cast<size_t>(top_k) < order.size()) {
    std::partial_sort(order.begin(), order.begin() + top_k, order.end(),
                      [&](size_t a, size_t b) { return logp[a] > logp[b]; });
    order.resize(static_cast<size_t>(top_k));
  }
  std::vector<double> weights;
  for (size_t i : order) weights.push_back(std::exp(logp[i]));
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
  return order[pick(rng)];
}

std::vector<Token> value_tokens(const std::vector<int64_t>& values) {
  std::vector<Token> out;
  for (int64_t v : values) out.push_back(Vocabulary::get().number(v));
  return out;
}

// The sketches whose sentences fit in the model's context (every point of a sketch gives a
// sentence of one length), and the tokens of their names.
struct FittingSketches {
  std::vector<size_t> index;  // into the subgraph's sketches
  std::vector<Token> names;
};
FittingSketches fitting_sketches(const Gpt& model, size_t prompt, const Sketches& sketches) {
  FittingSketches out;
  for (size_t k = 0; k < sketches.size(); ++k) {
    size_t length = prompt + 2;  // the sketch's name and <eos>
    for (const scheduler::Space& s : sketches[k].spaces()) length += space_tokens(s).size() + 1;
    const Token name = Vocabulary::get().at(sketches[k].name());
    if (length > static_cast<size_t>(model.config().context) || !model.known_words().has(name))
      continue;  // too long, or a sketch the model cannot name (speaks())
    out.index.push_back(k);
    out.names.push_back(name);
  }
  return out;
}

// One stream of a sketch's group: its cache, cursor and log-likelihood so far.
struct Stream {
  KvCache cache;
  SketchCursor cursor;
  double log_likelihood;
  std::vector<int64_t> values;
};

// Runs a group of streams of one sketch, in lockstep, to the end of the sketch's spaces; at
// each decision `decide` picks the next streams from the current ones (sampling keeps each
// stream and its drawn value; beam search keeps the best extensions of all of them).
//
// A space the model cannot name (its words came into the language after the model was
// trained: a space added to the sketch since) is not the model's to decide: every stream
// takes `unread`'s value there (the -O0 policy's unless given), and the model reads the
// sentence as it learned such sentences, without that space.
using Decide = std::function<std::vector<Stream>(std::vector<Stream>&, const std::vector<float>&)>;

// Whether every word of the space's name is one the model knows.
bool names_space(const Gpt& model, const scheduler::Space& space) {
  return lm::names_space(space, model.known_words());
}

using Unread = std::function<int64_t(const Stream&, size_t index)>;
std::vector<Stream> run_group(Decoder& decoder, std::vector<Stream> streams, Token sketch_token,
                              const Decide& decide, const Unread& unread = nullptr) {
  int pos = static_cast<int>(decoder.prompt_length());
  std::vector<Token> feed(streams.size(), sketch_token);
  while (!streams.empty() && !streams.front().cursor.done()) {
    const scheduler::Space& space = streams.front().cursor.space();
    if (!names_space(decoder.model(), space)) {
      for (size_t i = 0; i < streams.size(); ++i) {
        Stream& s = streams[i];
        const int64_t value = unread ? unread(s, i) : s.cursor.default_value();
        s.cursor.choose(value);
        s.values.push_back(value);
      }
      continue;
    }
    // The next space's name, fed to every stream; then its value, decided per stream.
    std::vector<KvCache*> caches;
    for (Stream& s : streams) caches.push_back(&s.cache);
    for (Token t : space_tokens(space)) {
      decoder.step(caches, feed, pos++);
      feed.assign(streams.size(), t);
    }
    const std::vector<float> hidden = decoder.step(caches, feed, pos++);
    streams = decide(streams, hidden);
    feed.clear();
    for (const Stream& s : streams) feed.push_back(Vocabulary::get().number(s.values.back()));
  }
  return streams;
}

}  // namespace

bool speaks(const Gpt& model, const Sketches& sketches) {
  const std::vector<Token> names = sketch_tokens(sketches);
  return std::any_of(names.begin(), names.end(),
                     [&](Token t) { return model.known_words().has(t); });
}

bool names_sketch(const Gpt& model, const scheduler::Sketch& sketch) {
  const std::optional<Token> name = Vocabulary::get().find(sketch.name());
  return name && model.known_words().has(*name);
}

std::vector<GeneratedPoint> sample_points(const Gpt& model, const std::vector<Token>& prompt,
                                          const Sketches& sketches, size_t n,
                                          const SampleOptions& options) {
  const size_t C = static_cast<size_t>(model.config().channels);
  const FittingSketches fits = fitting_sketches(model, prompt.size(), sketches);
  if (fits.index.empty() || n == 0) return {};
  std::mt19937_64 rng(options.seed);
  Decoder decoder(model, prompt);
  const std::vector<double> sketch_logits =
      logits(model, decoder.prompt_hidden().data(), fits.names);
  const std::vector<double> sketch_logp = log_softmax(sketch_logits, 1.0f);
  const std::vector<double> sketch_draw = log_softmax(sketch_logits, options.temperature);
  std::map<size_t, size_t> count;  // index into fits.index -> points to draw of that sketch
  std::vector<size_t> order;       // of the draws
  for (size_t i = 0; i < n; ++i) {
    const size_t k = draw(sketch_draw, options.top_k, rng);
    ++count[k];
    order.push_back(k);
  }
  std::map<size_t, std::vector<GeneratedPoint>> drawn;
  for (const auto& [k, m] : count) {
    const scheduler::Sketch& sketch = sketches[fits.index[k]];
    std::vector<Stream> streams;
    for (size_t i = 0; i < m; ++i)
      streams.push_back(Stream{decoder.empty_cache(), SketchCursor(sketch), sketch_logp[k], {}});
    Decide sample = [&](std::vector<Stream>& current, const std::vector<float>& hidden) {
      for (size_t s = 0; s < current.size(); ++s) {
        Stream& st = current[s];
        const std::vector<int64_t>& valid = st.cursor.valid_values();
        const std::vector<Token> choices = value_tokens(valid);
        const float* h = hidden.data() + s * C;
        const std::vector<double> l = logits(model, h, choices);
        const size_t j = draw(log_softmax(l, options.temperature), options.top_k, rng);
        st.log_likelihood += log_softmax(l, 1.0f)[j];
        st.values.push_back(valid[j]);
        st.cursor.choose(valid[j]);
      }
      return std::move(current);
    };
    for (Stream& s : run_group(decoder, std::move(streams), fits.names[k], sample))
      drawn[k].push_back(GeneratedPoint{{fits.index[k], s.values}, s.log_likelihood});
  }
  std::vector<GeneratedPoint> out;
  std::map<size_t, size_t> taken;
  for (size_t k : order) out.push_back(drawn[k][taken[k]++]);
  return out;
}

std::vector<GeneratedPoint> sample_mutations(const Gpt& model, const std::vector<Token>& prompt,
                                             const Sketches& sketches,
                                             const scheduler::SpacePoint& base, size_t n,
                                             const SampleOptions& options) {
  const size_t C = static_cast<size_t>(model.config().channels);
  const FittingSketches fits = fitting_sketches(model, prompt.size(), sketches);
  const auto fit = std::find(fits.index.begin(), fits.index.end(), base.sketch);
  if (fit == fits.index.end() || n == 0 || base.values.empty()) return {};
  std::mt19937_64 rng(options.seed);
  Decoder decoder(model, prompt);
  const size_t k = static_cast<size_t>(fit - fits.index.begin());
  const double sketch_logp =
      log_softmax(logits(model, decoder.prompt_hidden().data(), fits.names), 1.0f)[k];
  // The decisions that have another value to take (and that the model can name).
  std::vector<size_t> open;
  SketchCursor walk(sketches[base.sketch]);
  for (size_t i = 0; i < base.values.size(); ++i) {
    if (walk.valid_values().size() > 1 && names_space(model, walk.space())) open.push_back(i);
    walk.choose(base.values[i]);
  }
  if (open.empty()) return {};
  std::vector<Stream> streams;
  std::vector<size_t> redrawn;  // per stream, the decision it redraws
  std::uniform_int_distribution<size_t> position(0, open.size() - 1);
  for (size_t i = 0; i < n; ++i) {
    streams.push_back(
        Stream{decoder.empty_cache(), SketchCursor(sketches[base.sketch]), sketch_logp, {}});
    redrawn.push_back(open[position(rng)]);
  }
  Decide mutate = [&](std::vector<Stream>& current, const std::vector<float>& hidden) {
    for (size_t s = 0; s < current.size(); ++s) {
      Stream& st = current[s];
      const size_t at = st.values.size();
      const std::vector<int64_t>& valid = st.cursor.valid_values();
      const std::vector<double> raw = logits(model, hidden.data() + s * C, value_tokens(valid));
      const std::vector<double> logp = log_softmax(raw, 1.0f);
      size_t j = 0;
      if (at == redrawn[s]) {
        // The model's distribution at this decision over the values other than base's own
        // (masked before the softmax, so that they share all of it).
        std::vector<double> others = raw;
        const size_t own = static_cast<size_t>(
            std::find(valid.begin(), valid.end(), base.values[at]) - valid.begin());
        others[own] = -INFINITY;
        j = draw(log_softmax(others, options.temperature), options.top_k, rng);
      } else {
        const int64_t keep =
            at < redrawn[s] ? base.values[at] : st.cursor.stand_in(base.values[at]);
        j = static_cast<size_t>(std::find(valid.begin(), valid.end(), keep) - valid.begin());
        TLMC_ASSERT(j < valid.size(),
                    "value " << keep << " of decision " << at << " is not listed by its space");
      }
      st.log_likelihood += logp[j];
      st.values.push_back(valid[j]);
      st.cursor.choose(valid[j]);
    }
    return std::move(current);
  };
  // Where the model cannot name the space: base's value, as at every decision not redrawn.
  Unread keep = [&](const Stream& st, size_t s) {
    const size_t at = st.values.size();
    return at < redrawn[s] ? base.values[at] : st.cursor.stand_in(base.values[at]);
  };
  std::vector<GeneratedPoint> out;
  for (Stream& s : run_group(decoder, std::move(streams), fits.names[k], mutate, keep))
    out.push_back(GeneratedPoint{{base.sketch, s.values}, s.log_likelihood});
  return out;
}

std::vector<GeneratedPoint> beam_search(const Gpt& model, const std::vector<Token>& prompt,
                                        const Sketches& sketches, size_t width) {
  const size_t C = static_cast<size_t>(model.config().channels);
  const FittingSketches fits = fitting_sketches(model, prompt.size(), sketches);
  if (fits.index.empty() || width == 0) return {};
  Decoder decoder(model, prompt);
  const std::vector<double> sketch_logp =
      log_softmax(logits(model, decoder.prompt_hidden().data(), fits.names), 1.0f);
  std::vector<GeneratedPoint> out;
  for (size_t k = 0; k < fits.index.size(); ++k) {
    std::vector<Stream> beam;
    beam.push_back(
        Stream{decoder.empty_cache(), SketchCursor(sketches[fits.index[k]]), sketch_logp[k], {}});
    Decide extend = [&](std::vector<Stream>& current, const std::vector<float>& hidden) {
      struct Extension {
        size_t stream;
        size_t value;
        double score;
      };
      std::vector<Extension> all;
      for (size_t s = 0; s < current.size(); ++s) {
        const std::vector<double> logp = log_softmax(
            logits(model, hidden.data() + s * C, value_tokens(current[s].cursor.valid_values())),
            1.0f);
        for (size_t j = 0; j < logp.size(); ++j)
          all.push_back(Extension{s, j, current[s].log_likelihood + logp[j]});
      }
      const size_t keep = std::min(width, all.size());
      std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(),
                        [](const Extension& a, const Extension& b) { return a.score > b.score; });
      std::vector<Stream> next;
      for (size_t e = 0; e < keep; ++e) {
        Stream s = current[all[e].stream];
        const int64_t value = s.cursor.valid_values()[all[e].value];
        s.cursor.choose(value);
        s.values.push_back(value);
        s.log_likelihood = all[e].score;
        next.push_back(std::move(s));
      }
      return next;
    };
    for (Stream& s : run_group(decoder, std::move(beam), fits.names[k], extend))
      out.push_back(GeneratedPoint{{fits.index[k], s.values}, s.log_likelihood});
  }
  std::stable_sort(out.begin(), out.end(), [](const GeneratedPoint& a, const GeneratedPoint& b) {
    return a.log_likelihood > b.log_likelihood;
  });
  if (out.size() > width) out.resize(width);
  return out;
}

}  // namespace tlmc::lm
