// Measures how much data this machine's cores keep in their shared (last-level) cache from
// one run to the next: the largest buffer, 4 MB to 128 MB in doublings, that `threads`
// threads read again at least 1.5x as fast as 256 MB (memory). 0 when none is. About 1 s.
#pragma once

#include <cstdint>

namespace tlmc::tune {

int64_t measure_shared_cache_bytes(int threads);

}  // namespace tlmc::tune
