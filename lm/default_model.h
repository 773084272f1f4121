// The models tlmc ships with (lm/default_model.tlm for CPU targets, lm/default_cuda_model.tlm
// for CUDA targets, assembled into the library; docs/lm.md says how each was trained): what
// -O1, -O2 and -O3 use unless given another model file.
#pragma once

#include "ir/target.h"
#include "lm/gpt.h"
#include "lm/lineage.h"

namespace tlmc::lm {

// The bundled model for the target's kind. Read on first use, then shared; a damaged bundled
// model is a compiler bug (InternalError).
const Gpt& default_model(const ir::Target& target);
// Its lineage (lm/lineage.h) as far as the model file tells: its digest alone.
Lineage default_model_lineage(const ir::Target& target);

}  // namespace tlmc::lm
