#include "tune/gpu_estimate_search.h"

#include <algorithm>
#include <optional>
#include <random>
#include <string>

#include "codegen/emit_c.h"
#include "codegen/emit_cuda_kernel.h"
#include "codegen/emit_kernel.h"
#include "ir/diagnostic.h"
#include "scheduler/lower_schedule.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"
#include "toolchain/nvrtc.h"

namespace tlmc::tune {
namespace {

// Draws are cheap and spaces small: a space with fewer distinct points than asked ends the
// drawing after this many draws in a row give nothing new.
constexpr int kFruitlessDraws = 64;

// Points whose estimate with registers assumed ranks first are built: this many besides the
// -O0 point.
constexpr int kFinalists = 4;

struct Candidate {
  scheduler::SpacePoint point;
  std::vector<scheduler::Decision> schedule;
  ir::LoopProgram loops;
  scheduler::GpuEstimate estimate;
  bool refused = false;
};

}  // namespace

std::optional<BuiltKernels> build_kernels(const ir::LoopProgram& loops, const ir::GpuLimits& gpu,
                                          std::string* why) {
  const codegen::CudaKernelSource k = codegen::emit_cuda_kernel(loops, gpu);
  const std::string source = "#include \"tlmc_cuda.h\"\n" +
                             codegen::cuda_kernel_preamble(codegen::uses_half_floats(loops)) +
                             "\n" + k.text;
  std::string reason;
  const std::optional<toolchain::NvrtcOutput> out = toolchain::nvrtc_compile(
      source, loops.name + ".cu", {{"tlmc_cuda.h", codegen::runtime_file("tlmc_cuda.h")}}, gpu,
      &reason);
  if (!out) {
    if (why) *why = reason;
    return std::nullopt;
  }
  std::vector<toolchain::KernelLaunch> launches;
  for (const codegen::CudaLaunch& l : k.launches)
    launches.push_back({l.kernel, l.threads, l.dynamic_shared_bytes});
  std::optional<std::vector<ir::KernelResources>> kernels =
      toolchain::launched_kernels(*out, launches, why);
  if (!kernels) return std::nullopt;
  return BuiltKernels{k.launches, std::move(*kernels), out->cubin};
}

namespace {

// The candidate of a point: lowered, and estimated with its registers assumed.
Candidate candidate(const ir::TeProgram& program, const ir::Target& target,
                    const scheduler::Sketches& sketches, const scheduler::SpacePoint& point,
                    size_t index) {
  Candidate c{point, sketches[point.sketch].decisions(point.values), {}, {}, false};
  c.loops = scheduler::lower_schedule(scheduler::apply_schedule(program, c.schedule),
                                      "k" + std::to_string(index));
  c.estimate = scheduler::estimate_gpu_time(c.loops, target.gpu, {});
  return c;
}

// Builds the candidate with NVRTC and estimates it again with ptxas's report, refusing it
// when a kernel is over a limit of the descriptor; false where NVRTC cannot build (the
// estimate with registers assumed stands).
bool build(Candidate& c, const ir::Target& target) {
  const std::optional<BuiltKernels> built = build_kernels(c.loops, target.gpu);
  if (!built) return false;
  for (const ir::KernelResources& r : built->resources)
    c.refused = c.refused || !ir::limit_violations(target.gpu, r).empty();
  c.estimate = scheduler::estimate_gpu_time(c.loops, target.gpu, built->resources);
  return true;
}

EstimateChoice chosen(const Candidate& best, EstimateChoice out) {
  out.schedule = best.schedule;
  out.point = best.point;
  out.chosen = best.estimate;
  return out;
}

}  // namespace

namespace {

// The best by estimate of `points` (the -O0 point first, distinct): every one estimated with
// its registers assumed; then the -O0 point, the next `always_built`, and the likeliest
// others, in that order, built by NVRTC and estimated again with ptxas's report, until
// kFinalists of the others are within the limits; one over a limit is refused.
EstimateChoice best_of(const ir::TeProgram& program, const ir::Target& target,
                       const scheduler::Sketches& sketches,
                       const std::vector<scheduler::SpacePoint>& points, size_t always_built) {
  TLMC_ASSERT(target.is_cuda(), "an estimate for CPU target " << target.name);
  std::vector<Candidate> all;
  for (const scheduler::SpacePoint& point : points)
    all.push_back(candidate(program, target, sketches, point, all.size()));
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(
      order.begin() + 1 + static_cast<long>(always_built), order.end(),
      [&](size_t a, size_t b) { return all[a].estimate.seconds < all[b].estimate.seconds; });
  EstimateChoice out;
  out.ranked = static_cast<int>(all.size());
  out.built = true;
  const Candidate* best = nullptr;
  int finalists = 0;
  for (size_t i : order) {
    if (finalists > kFinalists + static_cast<int>(always_built)) break;
    Candidate& c = all[i];
    out.built = build(c, target) && out.built;
    if (i == 0) out.default_point = c.estimate;
    if (c.refused) {
      ++out.refused;
      continue;
    }
    ++finalists;
    if (!best || c.estimate.seconds < best->estimate.seconds) best = &c;
    if (!out.built) {  // no NVRTC: the assumed registers' ranking stands
      for (const Candidate& o : all)
        if (o.estimate.seconds < best->estimate.seconds) best = &o;
      break;
    }
  }
  TLMC_ASSERT(best, "every candidate built is over a limit of " << target.name
                                                                << ", the -O0 point among them");
  return chosen(*best, out);
}

// The -O0 point of `sketches`, then `points` not already among them.
std::vector<scheduler::SpacePoint> with_default_first(
    const scheduler::Sketches& sketches, const std::vector<scheduler::SpacePoint>& points,
    size_t limit, size_t* kept_of_first, size_t first) {
  std::vector<scheduler::SpacePoint> out = {{0, scheduler::default_values(sketches.front())}};
  *kept_of_first = 0;
  for (size_t i = 0; i < points.size() && out.size() < limit; ++i) {
    if (std::find(out.begin(), out.end(), points[i]) != out.end()) continue;
    out.push_back(points[i]);
    if (i < first) *kept_of_first = out.size() - 1;
  }
  return out;
}

}  // namespace

EstimateChoice choose_by_estimate(const ir::TeProgram& program, const ir::Target& target,
                                  const scheduler::Sketches& sketches, int candidates,
                                  uint64_t seed, const std::vector<scheduler::SpacePoint>& proposed,
                                  size_t always_built) {
  size_t built = 0;
  std::vector<scheduler::SpacePoint> points = with_default_first(
      sketches, proposed, static_cast<size_t>(std::max(candidates, 1)), &built, always_built);
  std::mt19937_64 rng(seed);
  for (int fruitless = 0;
       static_cast<int>(points.size()) < candidates && fruitless < kFruitlessDraws;) {
    scheduler::SpacePoint p = scheduler::random_point(sketches, rng);
    if (std::find(points.begin(), points.end(), p) != points.end()) {
      ++fruitless;
      continue;
    }
    fruitless = 0;
    points.push_back(std::move(p));
  }
  return best_of(program, target, sketches, points, built);
}

std::vector<scheduler::SpacePoint> interleaved_variants(const scheduler::Sketches& sketches,
                                                        const scheduler::SpacePoint& point) {
  const scheduler::Sketch& sketch = sketches.at(point.sketch);
  const std::vector<scheduler::Space> spaces = sketch.spaces();
  const std::string suffix = ".vthreads";
  auto lists = [&](const std::vector<int64_t>& values) {
    try {
      sketch.decisions(values);  // InvalidDecision where a space does not list its value
      return true;
    } catch (const scheduler::InvalidDecision&) {
      return false;
    }
  };
  std::vector<scheduler::SpacePoint> out;
  for (size_t v = 0; v < spaces.size() && v < point.values.size(); ++v) {
    const std::string& axis = spaces[v].axis;
    if (axis.size() <= suffix.size() ||
        axis.compare(axis.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string reg = axis.substr(0, axis.size() - suffix.size()) + ".reg";
    for (size_t r = 0; r < v; ++r) {
      if (spaces[r].axis != reg || spaces[r].stage != spaces[v].stage) continue;
      const int64_t tile = point.values[r];
      for (int64_t f = 2; f <= tile; ++f) {
        if (tile % f != 0) continue;
        scheduler::SpacePoint q = point;
        q.values[r] = tile / f;
        q.values[v] = point.values[v] * f;
        if (lists(q.values)) out.push_back(std::move(q));
      }
    }
  }
  return out;
}

EstimateChoice choose_among(const ir::TeProgram& program, const ir::Target& target,
                            const scheduler::Sketches& sketches,
                            const std::vector<scheduler::SpacePoint>& points) {
  size_t built = 0;
  const std::vector<scheduler::SpacePoint> all =
      with_default_first(sketches, points, points.size() + 1, &built, points.size());
  return best_of(program, target, sketches, all, built);
}

}  // namespace tlmc::tune
