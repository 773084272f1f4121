// `tlmc --profile MODEL`: builds the model's library with a timer around every kernel call
// (codegen's profile option; the schedules are the ones a build would ship), runs it in a
// child process on random inputs, and reports each call's median time, share and GFLOP/s,
// and how it compares with a plain copy of as many bytes (the yardstick of a kernel that
// moves more than it computes).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "driver/compile.h"

namespace tlmc::driver {

struct CallProfile {
  int call = 0;              // position in the run
  int kernel = 0;            // the kernel it calls (NAME_kK)
  std::string nodes;         // the graph nodes it computes
  std::string workload_key;  // its tuning records' key
  double seconds = 0;        // median over the timed runs
  double flops = 0;          // floating-point operations of one call
  double bytes = 0;          // bytes of its parameters: what it reads plus what it writes
  // Median seconds of a plain copy moving as many bytes (bytes / 2 copied: as much read and
  // written), with the library's threads, in the same process; 0 when not timed.
  double copy_seconds = 0;
  // A CUDA target's: the analytic model's estimate of the call (never measured); else 0.
  double estimate_seconds = 0;
};

struct ModelProfile {
  int runs = 0;  // timed runs
  // One whole run, median; on a GPU, the sum of the calls' medians (the run through the
  // hosted entry also allocates, uploads and downloads, which is not the model's time).
  double run_seconds = 0;
  std::string ran_on;              // a CUDA target's GPU; empty on the CPU
  std::vector<CallProfile> calls;  // in the run's order
};

// Times at least 10 runs, and for at least `min_seconds`, after one untimed run; then,
// with `copies`, each call's plain copy (on the CPU only). A CUDA target's library runs on
// the GPU here (its target runs_here), each call timed between CUDA events.
ModelProfile profile_model(const CompiledModel& model, const ir::Target& target, CCompiler cc,
                           double min_seconds = 1.0, bool copies = true);
// The calls, slowest first, with their share of the run, then the totals; on a GPU, each
// call's estimate by the analytic model beside its time, and theirs added up.
void print_profile(std::ostream& os, const ModelProfile& p);

}  // namespace tlmc::driver
