// The expected result of a reduction, computed once per process however many ranks check it. In a thread world
// every rank of an allreduce checks the same result; each computing it (every rank's input hashed per element) made
// up most of the collective suite's time, eight times over in a world of 8.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "tests/collectives/collective_case.h"

namespace chorus::test {

// The bytes `compute` makes for case `c` over `nranks` ranks, elements [first, first + c.count): made by the first
// caller with this key, the others wait for it and get a copy. (A pure function of the key: any world may share it.)
std::vector<uint8_t> sharedReference(const CollectiveCase& c, int nranks, size_t first,
                                     const std::function<std::vector<uint8_t>()>& compute);

}  // namespace chorus::test
