// Cold runs of a candidate: its constant inputs (weights) leave the caches before each timed
// run. Only the bytes the kernel reads are evicted, found once by running it with the
// weights' pages protected and noting each page it faults on; lines go with clflushopt
// where the CPU has it (clflush, the fallback, costs 150 ns a line on some CPUs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace tlmc::tune {

// Byte ranges of each weight, as offsets from its first byte, that a kernel reads.
using ReadRanges = std::vector<std::vector<std::pair<size_t, size_t>>>;

// Runs `run` once with every whole page of each weight (data, size) unreadable, and returns
// the ranges of each weight it read: the pages it faulted on (made readable again as it
// goes) and each weight's partial first and last pages. Everything is readable afterwards.
// A fault outside the protected pages ends the process as it would have without this.
ReadRanges learn_reads(const std::vector<std::pair<const char*, size_t>>& weights,
                       const std::function<void()>& run);

// Every range of every weight, whole.
ReadRanges whole_weights(const std::vector<std::pair<const char*, size_t>>& weights);

// Bytes in the ranges.
size_t read_bytes(const ReadRanges& ranges);

// Writes back and evicts every cache line of the ranges, from every cache level.
void evict(const std::vector<std::pair<const char*, size_t>>& weights, const ReadRanges& ranges);

}  // namespace tlmc::tune
