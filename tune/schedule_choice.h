// How a build chooses each kernel's schedule, the same for every target: the candidate its
// tuning records choose (the fastest, or the one of least in-model time: confirm_in_model.h),
// else at -O1 the language model's likeliest point, else on a CUDA target at -O2/-O3 the
// analytic model's best estimate (gpu_estimate_search.h), else the -O0 rule's point. The
// driver lists the passes of a build (tuning, layout plans, code generation) and asks this
// for the schedules, with the tuning database it opened once for the build.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ir/target.h"
#include "ir/te.h"
#include "lm/gpt.h"
#include "scheduler/decision.h"
#include "scheduler/tuning_db.h"
#include "tune/confirm_in_model.h"

namespace tlmc::tune {

// What a build's choice of schedules depends on.
struct ChoiceOptions {
  ir::Target target;
  int opt_level = 0;                  // the level the build works at (after its notes)
  int64_t random_schedule_seed = -1;  // >= 0: every schedule drawn at random (testing)
  std::string lm_model;               // the language model's file; empty: the bundled one
  // -O1 on a CPU target: the speedup model that checks the language model's drafts against
  // the -O0 schedule (tune/speedup_model.h): its file; empty: the bundled one; "none": none,
  // the likeliest draft is taken as it is
  std::string verifier;
  std::ostream* log = nullptr;  // -v: a line per record that no longer applies, per estimate
};

// A kernel's tuning records read back: the candidates a build chooses from, and the fastest
// record's time alone.
struct KernelRecords {
  KernelCandidates candidates;
  double best_seconds = 0;
};

// Adds the -O0 schedule to a kernel's candidates unless it is one of them already.
void add_default_candidate(const ir::Target& target, const ir::TeProgram& program,
                           KernelCandidates& c);

// The records of `program` for this target, as the candidates of its kernel: its fastest
// records that still apply (records of an older tlmc may not), then its -O0 schedule unless
// one of them is it. nullopt when it has no successful record.
std::optional<KernelRecords> kernel_records(const ChoiceOptions& o, const scheduler::TuningDb& db,
                                            const ir::TeProgram& program);

// The language model of file `path` (empty: the bundled one for the target's kind), read
// once per process.
const lm::Gpt& language_model(const std::string& path, const ir::Target& target);

// A CUDA target's -O2 and -O3 without a GPU: points per distinct subgraph the analytic model
// ranks (a few of them built by NVRTC) besides the CUDA model's proposals, the -O0 point
// among them.
int estimated_candidates(int opt_level);

// The schedule of one kernel (`key`: its workload key, which seeds what is drawn): the
// candidate its records choose, else the language model's at -O1, else the analytic model's
// at -O2/-O3 on a CUDA target, else the -O0 schedule. Counts a schedule taken from records
// in `from_records`.
std::vector<scheduler::Decision> choose_schedule(const ChoiceOptions& o, const std::string& key,
                                                 const ir::TeProgram& program,
                                                 const std::optional<KernelRecords>& records,
                                                 const scheduler::TuningDb& db, int* from_records);

}  // namespace tlmc::tune
