// What chorus-inspect knows of each rank of each communicator: its flight record as the rank answered it (live) or
// wrote it (a dump), parsed, with every time turned into an age in seconds at the moment of the answer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace chorus::inspect {

struct SeenCall {
  uint64_t seq = 0;
  std::string op, type, reduction, algorithm, state;
  uint64_t bytes = 0;
  int peer = -1, waitingOn = -1, waitingCount = 0;
  double queuedAgo = 0, waitingAgo = -1, endAgo = -1;  // seconds before the answer (-1: not yet)
  bool pending() const { return state != "done" && state != "failed"; }
};

struct RankView {
  int rank = -1;
  bool answered = false;
  std::string problem;  // why not (answered false)
  std::string host;
  int64_t pid = 0;
  std::vector<SeenCall> calls;  // oldest first
  const SeenCall* last() const { return calls.empty() ? nullptr : &calls.back(); }
};

struct CommView {
  std::string identity, name;
  int size = 0;
  std::map<int, RankView> ranks;  // by rank; a rank with no card is absent
};

// Adds one communicator's record (the JSON of writeFlightJson) to `comms`, by identity; throws std::exception on
// malformed input.
void addRecord(std::map<std::string, CommView>& comms, std::string_view json);
// Adds a process's answer ({"comms": [records]}).
void addAnswer(std::map<std::string, CommView>& comms, std::string_view json);
// "0-2,5": ranks as ranges.
std::string rankList(const std::vector<int>& ranks);

}  // namespace chorus::inspect
