// `tlmc db retime MODEL DB...`: the best schedule each tuning database holds for each kernel of
// MODEL, timed again side by side: in one process, candidate after candidate, round after
// round, so that the machine's drifts fall on all of them alike. What a benchmark compares
// when it weighs one search's winners against another's (bench/lm_vs_search.py).
#pragma once

#include <string>
#include <vector>

namespace tlmc::driver {

struct RetimeOptions {
  std::string model;                   // a .yaml or .onnx file
  std::vector<std::string> databases;  // tuning databases, each a column
  std::vector<std::string> only;       // kernels by workload key; empty: every one with a record
  int rounds = 5;                      // each round times every candidate once
  int threads = 0;                     // of the parallel loops; 0: the target's cores
  // Each database's best record but the -O0 schedule's (which tuning measures first): the
  // best of a search's own points.
  bool without_o0 = false;
};

// Prints, for each kernel, the -O0 schedule's time and each database's best schedule's, in
// microseconds: the least over the rounds of each round's median of repeats. Returns the
// exit status; throws Diagnostic for a model or database that cannot be read.
int retime(const RetimeOptions& options);

}  // namespace tlmc::driver
