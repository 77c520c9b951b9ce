// Asking the ranks: the inspect cards in the job's store, and every process's listener asked at once, each bounded
// by one deadline, so that a rank that is gone or hung is reported as not answering within it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/bootstrap/store.h"

namespace chorus::inspect {

struct Card {
  std::string address;  // host:port of the rank's process's listener
  int rank = -1, size = 0;
  std::string identity;
  std::string token;  // the process's inspect token, which its listener asks for
};

// Every card in the store (cards that cannot be read within the deadline are skipped).
std::vector<Card> readCards(StoreClient& store, Deadline deadline);

struct Answer {
  bool ok = false;
  std::string text;     // the process's JSON
  std::string problem;  // why not (ok false): "refused", "no answer within 1.5 s", ...
};
// Asks every listener (address -> its token) in parallel for its newest `newest` calls per communicator, all within
// timeoutSeconds.
std::map<std::string, Answer> askAll(const std::map<std::string, std::string>& listeners, size_t newest,
                                     double timeoutSeconds);

}  // namespace chorus::inspect
