// Worlds the cost model and the selector are tested on: their shapes and link figures.
#pragma once

#include "algorithms/selection/cost_model.h"

namespace chorus::test {

// One host of `ranks` ranks with a core each (16 cores), 0.5 us and 6 GB/s between them.
inline CostInputs oneHost(int ranks) {
  CostInputs in;
  in.nranks = ranks;
  in.maxRanksPerHost = ranks;
  in.coresPerHost = 16;
  in.intraHost = {0.5, 6.0};
  in.interHost = {12.0, 1.5};
  return in;
}

// The topology lab's 2x2: 2 hosts x 2 ranks on one core each, 28 us and 1 Gbit/s across, 1 us within.
inline CostInputs labTwoByTwo() {
  CostInputs in = oneHost(4);
  in.nhosts = 2;
  in.maxRanksPerHost = 2;
  in.coresPerHost = 1;
  in.intraHost = {1.0, 6.0};
  in.interHost = {28.0, 0.12};
  return in;
}

}  // namespace chorus::test
