// Which calls the suite makes: cross products of datatypes, ops, counts, roots and buffer placements.
#pragma once

#include <vector>

#include "tests/collectives/collective_case.h"

namespace chorus::test {

// Every datatype and every op the C API defines.
std::vector<chorusDataType_t> allTypes();
std::vector<chorusRedOp_t> allOps();

// Counts that matter once CHORUS_CHUNK_SIZE=4096: none, one, odd, under a slice, a few slices, many slices.
std::vector<size_t> standardCounts();

// Every root for small worlds; first, a middle one and last for larger ones.
std::vector<int> rootsFor(int nranks);

struct CaseGrid {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::vector<chorusDataType_t> types = allTypes();
  std::vector<chorusRedOp_t> ops = allOps();  // broadcast and allgather: ignored (one pass with chorusSum)
  std::vector<size_t> counts = standardCounts();
  std::vector<int> roots = {0};  // broadcast and reduce only
  std::vector<bool> inPlace = {false, true};
};

// The test-suite variable that samples the matrices: CHORUS_TEST_CASE_SAMPLE=N keeps the cases whose salt is a
// multiple of N (at least one per grid). For sanitizer runs, whose instrumented reductions are 5-10x slower: every
// test still runs, and the cases kept spread over its counts, datatypes, ops and placements. Unset or 1: all.
inline constexpr const char* kCaseSampleVariable = "CHORUS_TEST_CASE_SAMPLE";

// The cross product of grid, in a fixed order that every rank computes alike (sampled as above). Salts number the
// calls from firstSalt; out-of-place calls alternate between guarded and NULL unused buffers, and one in seven is
// placed at an odd address.
std::vector<CollectiveCase> casesOf(const CaseGrid& grid, uint32_t firstSalt = 1);

}  // namespace chorus::test
