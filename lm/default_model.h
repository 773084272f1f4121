// The model tlmc ships with (lm/default_model.tlm, assembled into the library; docs/lm.md
// says how it was trained): what -O1, -O2 and -O3 use unless given another model file.
#pragma once

#include "lm/gpt.h"

namespace tlmc::lm {

// Read on first use, then shared; a damaged bundled model is a compiler bug (InternalError).
const Gpt& default_model();

}  // namespace tlmc::lm
