// chorus-inspect's reading of a communicator: one line per rank (its last call, its state, what it waits for and
// since when) and a verdict in words: which rank holds the others up and where it is (outside Chorus, gone, in
// another call), or that the ranks are in different calls, or that none is in a call at all.
#pragma once

#include <string>
#include <vector>

#include "perf/chorus_inspect/flight_view.h"

namespace chorus::inspect {

struct Reading {
  std::vector<std::string> rankLines;
  std::vector<std::string> verdict;  // sentences, most important first
};

Reading readComm(const CommView& comm);
// "allreduce #12 (8 bytes float32 sum, ring)"
std::string describe(const SeenCall& c);

}  // namespace chorus::inspect
