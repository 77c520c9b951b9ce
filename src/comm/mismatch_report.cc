#include "src/comm/mismatch_report.h"

#include <map>
#include <vector>

#include "core/logging.h"

namespace chorus {

MismatchReport::MismatchReport(StoreClient& store, std::string keyPrefix, int rank, int size)
    : store_(store), prefix_(std::move(keyPrefix)), rank_(rank), size_(size) {}

std::string MismatchReport::key(uint64_t seq, int rank) const {
  return prefix_ + "call/" + std::to_string(seq) + "/" + std::to_string(rank);
}

Error MismatchReport::explain(const Error& e, uint64_t seq, const std::string& description, double waitSeconds) {
  const std::string what = e.what();
  // A peer that gave up may have seen a mismatch; one that vanished was lost, and waiting for its description
  // would only delay the error by the whole wait.
  const bool looksMismatched = e.failure() == Failure::kMismatch || e.failure() == Failure::kRemoteError;
  try {
    Deadline deadline = Deadline::after(waitSeconds);
    store_.set(key(seq, rank_), Bytes(description.begin(), description.end()), deadline);
    if (!looksMismatched) return e;
    // Group the ranks by what they called, in rank order.
    std::map<std::string, std::vector<int>> callers;
    std::vector<int> silent;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) {
        callers[description].push_back(r);
        continue;
      }
      try {
        Bytes b = store_.get(key(seq, r), deadline);
        callers[std::string(b.begin(), b.end())].push_back(r);
      } catch (const Error&) {
        silent.push_back(r);  // dead, stuck elsewhere, or slower than the wait
      }
    }
    if (callers.size() < 2) return e;
    auto list = [](const std::vector<int>& ranks) {
      std::string s = ranks.size() == 1 ? "rank " : "ranks ";
      for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
      return s;
    };
    std::string msg = "rank " + std::to_string(rank_) + ": call #" + std::to_string(seq) +
                      " does not match across ranks: ";
    bool first = true;
    for (const auto& [call, ranks] : callers) {
      msg += (first ? "" : "; ") + list(ranks) + " called " + call;
      first = false;
    }
    if (!silent.empty()) msg += "; " + list(silent) + " did not say";
    return Error(chorusInvalidUsage, msg + " (first sign here: " + what + ")", Failure::kMismatch);
  } catch (const Error& storeError) {
    CHORUS_INFO(rank_, "no mismatch listing for call #" << seq << ": " << storeError.what());
    return e;
  }
}

}  // namespace chorus
