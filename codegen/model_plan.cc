#include "codegen/model_plan.h"

#include <algorithm>
#include <map>

#include "ir/diagnostic.h"

namespace tlmc::codegen {
namespace {

int64_t align64(int64_t n) { return (n + 63) / 64 * 64; }

struct Block {
  int64_t bytes;
  int first, last;  // calls during which it is live
  int64_t offset = -1;
};

// Greedy by size: the largest blocks first, each at the lowest offset free during its life.
int64_t place(std::vector<Block*>& blocks) {
  std::stable_sort(blocks.begin(), blocks.end(),
                   [](const Block* a, const Block* b) { return a->bytes > b->bytes; });
  std::vector<Block*> placed;
  int64_t total = 0;
  for (Block* b : blocks) {
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (const Block* o : placed)
      if (o->first <= b->last && b->first <= o->last)
        busy.emplace_back(o->offset, o->offset + o->bytes);
    std::sort(busy.begin(), busy.end());
    int64_t at = 0;
    for (const auto& [lo, hi] : busy) {
      if (at + b->bytes <= lo) break;
      at = std::max(at, align64(hi));
    }
    b->offset = at;
    placed.push_back(b);
    total = std::max(total, at + b->bytes);
  }
  return align64(total);
}

}  // namespace

ModelPlan plan_model(const ir::Graph& g, const std::vector<int>& storage_of,
                     const std::vector<CompiledSubgraph>& subgraphs,
                     std::vector<KernelInfo> kernels) {
  ModelPlan plan;
  plan.name = g.name;
  plan.kernels = std::move(kernels);
  for (int t : g.inputs) plan.inputs.push_back({g.tensor(t).name, g.type(t)});
  for (int t : g.outputs) plan.outputs.push_back({g.tensor(t).name, g.type(t)});
  const auto root = [&](int t) { return storage_of.at(static_cast<size_t>(t)); };

  std::map<int, int> produced_by;  // storage tensor -> call writing it
  for (size_t c = 0; c < subgraphs.size(); ++c) {
    const CompiledSubgraph& sg = subgraphs[c];
    const ir::LoopProgram& k = plan.kernels.at(static_cast<size_t>(sg.kernel)).loops;
    for (size_t i = static_cast<size_t>(k.num_inputs); i < sg.param_tensors.size(); ++i)
      produced_by[root(sg.param_tensors[i])] = static_cast<int>(c);
  }

  std::map<int, Storage> storage;
  for (size_t i = 0; i < g.inputs.size(); ++i)
    storage[g.inputs[i]] = {Storage::Input, static_cast<int64_t>(i)};
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const int t = g.outputs[i];
    if (root(t) == t && produced_by.count(t))
      storage[t] = {Storage::Output, static_cast<int64_t>(i)};
  }
  // Weights, in order of first use; a weight a kernel reads packed (scheduler/
  // pack_constants.h) is stored once per packing, beside the model's layout if used too.
  auto add_weight = [&](const std::vector<uint8_t>& bytes) {
    const int64_t at = align64(static_cast<int64_t>(plan.weights.size()));
    plan.weights.resize(static_cast<size_t>(at), 0);
    plan.weights.insert(plan.weights.end(), bytes.begin(), bytes.end());
    return Storage{Storage::Weight, at};
  };
  auto weight_storage = [&](int t) {
    auto it = storage.find(t);
    if (it != storage.end()) return it->second;
    storage[t] = add_weight(*g.tensor(t).data);
    return storage[t];
  };
  std::map<std::pair<int, std::string>, Storage> packed_storage;
  auto packed_weight_storage = [&](int t, const ir::Packing& packing) {
    const std::pair<int, std::string> key{t, ir::packing_str(packing)};
    auto it = packed_storage.find(key);
    if (it != packed_storage.end()) return it->second;
    const ir::Tensor& w = g.tensor(t);
    const Storage s = add_weight(ir::pack_bytes(packing, *w.data, ir::dtype_size(w.type.dtype)));
    packed_storage[key] = s;
    return s;
  };

  // Workspace blocks: intermediates from their producing call to their last reader, and
  // each call's scratch memory during the call.
  std::map<int, Block> tensors;
  std::vector<Block> scratch(subgraphs.size());
  for (size_t c = 0; c < subgraphs.size(); ++c) {
    const CompiledSubgraph& sg = subgraphs[c];
    for (int t : sg.param_tensors) {
      const int r = root(t);
      if (storage.count(r) || g.tensor(r).kind == ir::TensorKind::Weight) continue;
      auto it = tensors.find(r);
      if (it == tensors.end()) {
        tensors[r] = Block{static_cast<int64_t>(g.type(r).bytes()), static_cast<int>(c),
                           static_cast<int>(c)};
      } else {
        it->second.last = static_cast<int>(c);
      }
    }
    const int64_t sb = plan.kernels[static_cast<size_t>(sg.kernel)].loops.scratch_bytes;
    scratch[c] = Block{sb, static_cast<int>(c), static_cast<int>(c)};
  }
  std::vector<Block*> blocks;
  for (auto& [t, b] : tensors) blocks.push_back(&b);
  for (Block& b : scratch)
    if (b.bytes > 0) blocks.push_back(&b);
  plan.workspace_bytes = place(blocks);
  for (auto& [t, b] : tensors) storage[t] = {Storage::Workspace, b.offset};

  for (size_t c = 0; c < subgraphs.size(); ++c) {
    const CompiledSubgraph& sg = subgraphs[c];
    Call call;
    call.kernel = sg.kernel;
    call.scratch_offset = scratch[c].bytes > 0 ? scratch[c].offset : 0;
    const ir::LoopProgram& k = plan.kernels[static_cast<size_t>(sg.kernel)].loops;
    for (size_t i = 0; i < sg.param_tensors.size(); ++i) {
      const int r = root(sg.param_tensors[i]);
      const std::optional<ir::Packing>& packing =
          k.buffers.at(static_cast<size_t>(k.params.at(i))).packing;
      if (g.tensor(r).kind != ir::TensorKind::Weight) {
        TLMC_ASSERT(!packing, "kernel " << k.name << " packs a tensor that is no weight");
        call.args.push_back(storage.at(r));
      } else {
        call.args.push_back(packing ? packed_weight_storage(r, *packing) : weight_storage(r));
      }
    }
    for (int n : sg.nodes) {
      const ir::Node& node = g.nodes[static_cast<size_t>(n)];
      call.comment += (call.comment.empty() ? "" : ", ") + node.describe();
    }
    plan.calls.push_back(call);
  }
  // The library addresses its weights with 32-bit offsets from the code (the
  // small code model): past 2 GiB the link would fail, so say so now.
  if (static_cast<int64_t>(plan.weights.size()) >= ir::kMaxWeightBytes)
    throw Diagnostic({}, "the model's weights take " + std::to_string(plan.weights.size()) +
                             " bytes; tlmc embeds at most 2 GiB of weights in a library");
  // Outputs no kernel writes: copied from where they live.
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const int t = g.outputs[i];
    auto it = storage.find(t);
    if (it != storage.end() && it->second.kind == Storage::Output &&
        it->second.index == static_cast<int64_t>(i))
      continue;
    const int r = root(t);
    Storage src = g.tensor(r).kind == ir::TensorKind::Weight ? weight_storage(r) : storage.at(r);
    plan.copies.push_back({static_cast<int>(i), src, static_cast<int64_t>(g.type(t).bytes())});
  }
  return plan;
}

}  // namespace tlmc::codegen
