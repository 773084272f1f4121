// `tlmc --check MODEL`: compiles the model, runs the library in a child process on random
// inputs, evaluates the graph with the reference interpreter and compares every output. A
// CUDA target's library runs on the GPU of this machine when it is of the target's SM, else
// in the CPU emulator (runtime/cuda_emulation), twice: its blocks and threads in order, then
// in reverse, whose outputs must agree (else a race between them is reported as a bug).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "driver/compile.h"

namespace tlmc::driver {

struct OutputError {
  std::string name;
  double max_abs = 0;  // largest |generated - reference|
  double max_rel = 0;  // largest |generated - reference| / max(|reference|, 1e-6)
  bool within_tolerance = true;
  // --precision bf16: the root mean square of the float32 reference, the scale below which
  // an element's tolerance does not shrink; and the largest error against the reference of
  // the bfloat16 model the library compiles, held to the float32 tolerances.
  double rms = 0;
  double max_abs_compiled = 0;
  bool compiled_exactly = true;
  // How far the worst error against the bfloat16 model lies past its element's bound; and,
  // where that is above zero for any output, the largest difference between the reference
  // of the bfloat16 model and the same model's reference with every value it rounds nudged
  // first (kNudge), for every output; else -1 (not computed).
  double past_bound = 0;
  double nudged = -1;
  int products_in_series = 0;  // bfloat16 products on the deepest path to the output
  // Elements NaN on both sides, which compare nothing (every one: the check was vacuous).
  int64_t both_nan = 0, elements = 0;
};

struct CheckResult {
  std::vector<OutputError> outputs;
  // Every output within tolerance. With --precision bf16 also `compiled_exactly`: false is
  // a compiler bug (exit 3), a loss of accuracy alone is the precision's (exit 1).
  bool passed = true;
  bool compiled_exactly = true;
  bool bf16 = false;
  // Where a CUDA target's library ran: "on the GPU (DEVICE)" or "in the CPU emulator";
  // empty for a CPU target (this machine's processor).
  std::string ran;
  bool sanitized = false;     // built with -fsanitize=address,undefined, and clean
  double atol = 0, rtol = 0;  // the tolerances the outputs were held to
};

// Tolerances: an element passes when |got - want| <= kCheckAtol + kCheckRtol * |want|.
constexpr double kCheckAtol = 1e-4;
constexpr double kCheckRtol = 1e-3;
// A model compiled with --precision bf16 against the float32 reference: PyTorch's
// tolerances for bfloat16 (torch.testing.assert_close), an element passing when
// |got - want| <= kBf16CheckAtol + kBf16CheckRtol * max(|want|, rms of the output): a whole
// model's value that cancels to near zero keeps the error of its terms. Against the
// reference of the bfloat16 model (what the library computes), the float32 tolerances.
constexpr double kBf16CheckAtol = 1e-5;
constexpr double kBf16CheckRtol = 1.6e-2;
// ... and against the bfloat16 model: the float32 tolerances plus bfloat16 roundings (2^-7
// each), relative to max(|want|, rms). The library's float32 values differ from the
// reference's double ones by a few ulps, which may move a value across a rounding boundary
// before a product reads it: one rounding's difference, at each of the products in series on
// the way to an output, in directions independent of each other, so that they add up like a
// random walk: sqrt(products in series) roundings are allowed (one for one product). On
// GPT-2 (73 in series) the library stood about 3 roundings of the logits' rms from the
// reference, well inside 8.5; a wrong tile or packing is off by the output's own scale.
constexpr double kBf16Rounding = 1.0 / 128;
// A deep model does not stop there: a value moved across a rounding boundary moves what the
// layers after it compute, and they carry the difference on, amplified or damped. So the
// check also computes the bfloat16 model's reference once more with every value that it
// rounds first multiplied by 1 + u, u drawn uniform in [-kNudge, kNudge] for each element:
// the model computed by arithmetic whose float32 results differ in their last bits (8 to 16
// float32 ulps), as the library's do. Where an error exceeds its element's bound above, it
// counts only past kNudgedAllowance times the largest distance between the two references.
// On ResNet-50 (49 products in series, random inputs) the library stood 0.7-1.4 times that
// distance from the reference at every block's output, and the distance hardly changed with
// the nudge (2^-16 gave 1.2-2.3 times the library's error); a wrong tile or packing is off
// by the output's own scale.
constexpr double kNudge = 1.0 / (1 << 20);
constexpr double kNudgedAllowance = 2;

// Inputs are drawn from a generator seeded with `seed`: floats uniform in [-1, 1]; integer
// inputs that index a Gather uniform over the valid indices, others in [0, 4).
// With `sanitize`, a CPU target's library is built with -fsanitize=address,undefined by the
// system C compiler and run as a program of its own (toolchain/sanitized_run.h): a report
// is a bug of tlmc's, as a crash is.
CheckResult check_model(const CompiledModel& model, const ir::Target& target, uint64_t seed = 1,
                        CCompiler cc = CCompiler::InProcess, bool sanitize = false);
void print_check(std::ostream& os, const CheckResult& r);

}  // namespace tlmc::driver
