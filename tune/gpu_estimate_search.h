// A CUDA kernel's schedule where no GPU can time candidates: the -O0 point, points a caller
// proposes (the CUDA language model's) and points drawn from the GPU sketches' spaces, each
// lowered and estimated by the analytic model (scheduler/gpu_cost_model.h) with its
// registers assumed; the -O0 point, the proposals always built and the best few others are
// then built by NVRTC for the target's SM and estimated again with ptxas's report, one over
// the descriptor's limits refused. Nothing is measured, nothing recorded. build_kernels also
// builds the cubins the GPU measurement runs (tune/measurer.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/emit_cuda_kernel.h"
#include "ir/target.h"
#include "ir/te.h"
#include "scheduler/decision.h"
#include "scheduler/gpu_cost_model.h"
#include "scheduler/sketch.h"

namespace tlmc::tune {

struct EstimateChoice {
  std::vector<scheduler::Decision> schedule;  // the best estimate's
  scheduler::SpacePoint point;                // the same as a point of the sketches' spaces
  scheduler::GpuEstimate chosen;              // its estimate
  scheduler::GpuEstimate default_point;       // the -O0 point's
  int ranked = 0;      // distinct candidates estimated, the -O0 point among them
  int refused = 0;     // over a limit of the descriptor once built: never chosen
  bool built = false;  // NVRTC built them; else registers were assumed (no spill known)
};

// The kernels of one loop program as NVRTC builds them for a GPU's SM.
struct BuiltKernels {
  std::vector<codegen::CudaLaunch> launches;   // in the order they run
  std::vector<ir::KernelResources> resources;  // ptxas's report, per launch
  std::string cubin;                           // the SASS of them all
};

// The kernels of `loops` alone (the CUDA helpers and launch macros before them) built by
// NVRTC for the GPU's SM; nullopt, with the reason in `why`, where NVRTC is not installed,
// crashed on the text or reported no resources of a kernel.
std::optional<BuiltKernels> build_kernels(const ir::LoopProgram& loops, const ir::GpuLimits& gpu,
                                          std::string* why = nullptr);

// `candidates` distinct points at most of `sketches` (the program's, as generate_sketches
// gives them): the -O0 point, then `proposed` (the CUDA language model's), then points drawn
// uniformly with `seed`. The -O0 point and the first `always_built` proposed are built by
// NVRTC whatever their estimate with registers assumed; of the others, those that estimate
// ranks first.
EstimateChoice choose_by_estimate(const ir::TeProgram& program, const ir::Target& target,
                                  const scheduler::Sketches& sketches, int candidates,
                                  uint64_t seed,
                                  const std::vector<scheduler::SpacePoint>& proposed = {},
                                  size_t always_built = 0);

// The points like `point` but for one axis of a tiled product whose register tile of I
// elements becomes I / f elements in f times the virtual threads (f > 1 dividing I): the
// same accumulators per thread, laid out a block's threads apart (coalesced stores, shared
// reads without bank conflicts), the tiles of the other axes and the threads unchanged;
// only points every space lists. A CUDA model trained before virtual threads were a space
// leaves them at the -O0 policy's value: -O2 ranks these beside its points.
std::vector<scheduler::SpacePoint> interleaved_variants(const scheduler::Sketches& sketches,
                                                        const scheduler::SpacePoint& point);

// The best by estimate of the -O0 point and `points` (points of `sketches`, the program's:
// the language model's, at -O1), every one built by NVRTC, one over a limit refused.
EstimateChoice choose_among(const ir::TeProgram& program, const ir::Target& target,
                            const scheduler::Sketches& sketches,
                            const std::vector<scheduler::SpacePoint>& points);

}  // namespace tlmc::tune
