#include "perf/chorus_inspect/verdict.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace chorus::inspect {
namespace {

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", s < 0 ? 0.0 : s);
  return text;
}

std::string ranksWord(const std::vector<int>& ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + rankList(ranks);
}

// What makes two ranks' calls of the same number the same call.
std::tuple<std::string, uint64_t, std::string, std::string, int> shape(const SeenCall& c) {
  const bool pointToPoint = c.op == "send" || c.op == "recv";
  return {c.op, c.bytes, c.type, c.reduction, pointToPoint ? -1 : c.peer};
}

std::string stateLine(const SeenCall& c) {
  if (c.state == "waiting") {
    std::string s = "waiting " + seconds(c.queuedAgo);
    if (c.waitingOn >= 0) {
      s += " for rank " + std::to_string(c.waitingOn);
      if (c.waitingCount > 1) s += " and " + std::to_string(c.waitingCount - 1) + " more";
    }
    return s;
  }
  if (c.state == "done" || c.state == "failed") return c.state + " " + seconds(c.endAgo) + " ago";
  return c.state + " for " + seconds(c.queuedAgo);
}

}  // namespace

std::string describe(const SeenCall& c) {
  std::string s = c.op + " #" + std::to_string(c.seq) + " (" + std::to_string(c.bytes) + " bytes " + c.type;
  if (!c.reduction.empty()) s += " " + c.reduction;
  if (c.peer >= 0) s += (c.op == "send" ? ", to " : c.op == "recv" ? ", from " : ", root ") + std::to_string(c.peer);
  if (!c.algorithm.empty()) s += ", " + c.algorithm;
  return s + ")";
}

Reading readComm(const CommView& comm) {
  Reading out;
  std::vector<int> silent, missing, idle;
  std::map<uint64_t, std::vector<int>> pendingBySeq;  // the call number each pending rank is in
  for (int r = 0; r < comm.size; ++r) {
    const auto it = comm.ranks.find(r);
    std::string line = "rank " + std::to_string(r) + ": ";
    if (it == comm.ranks.end()) {
      missing.push_back(r);
      out.rankLines.push_back(line + "no inspect card in the store (not initialized yet, or started without one)");
      continue;
    }
    const RankView& v = it->second;
    if (!v.answered) {
      silent.push_back(r);
      out.rankLines.push_back(line + "does not answer (" + v.problem + ")");
      continue;
    }
    const SeenCall* last = v.last();
    std::string where = " [" + v.host + " pid " + std::to_string(v.pid) + "]";
    if (last == nullptr) {
      idle.push_back(r);
      out.rankLines.push_back(line + "no call yet" + where);
      continue;
    }
    // A failed call is where its rank stopped: the waiters of a dump after a timeout.
    if (last->pending() || last->state == "failed") pendingBySeq[last->seq].push_back(r);
    out.rankLines.push_back(line + describe(*last) + " " + stateLine(*last) + where);
  }

  // Ranks whose last calls carry one number but differ: they called different things.
  std::map<uint64_t, std::map<std::tuple<std::string, uint64_t, std::string, std::string, int>, std::vector<int>>>
      shapes;
  std::map<uint64_t, std::map<std::tuple<std::string, uint64_t, std::string, std::string, int>, const SeenCall*>>
      examples;
  for (const auto& [r, v] : comm.ranks) {
    if (!v.answered || v.last() == nullptr) continue;
    shapes[v.last()->seq][shape(*v.last())].push_back(r);
    examples[v.last()->seq][shape(*v.last())] = v.last();
  }
  for (const auto& [seq, byShape] : shapes) {
    if (byShape.size() < 2) continue;
    std::string s = "the ranks called different things as call #" + std::to_string(seq) + ":";
    for (const auto& [key, ranks] : byShape) s += " " + ranksWord(ranks) + " " + describe(*examples[seq][key]) + ";";
    s.back() = '.';
    out.verdict.push_back(s);
  }
  const bool mismatched = !out.verdict.empty();
  if (!mismatched && pendingBySeq.size() > 1) {
    std::string s = "ranks inside Chorus are in different calls:";
    for (const auto& [seq, ranks] : pendingBySeq) {
      s += " " + ranksWord(ranks) + " in " + describe(*comm.ranks.at(ranks.front()).last()) + ";";
    }
    s.back() = '.';
    out.verdict.push_back(s);
  }

  for (int r : silent) {
    out.verdict.push_back("rank " + std::to_string(r) +
                          " does not answer (its process is gone, or hung in a system call)");
  }
  if (!missing.empty()) {
    out.verdict.push_back(ranksWord(missing) + " left no inspect card: not initialized yet, or not started");
  }
  if (mismatched) return out;
  if (pendingBySeq.empty()) {
    bool failed = false;
    for (const auto& [r, v] : comm.ranks) {
      if (v.answered && v.last() != nullptr && v.last()->state == "failed") {
        failed = true;
        out.verdict.push_back("rank " + std::to_string(r) + "'s last call " + describe(*v.last()) + " failed " +
                              seconds(v.last()->endAgo) + " ago");
      }
    }
    if (!failed && silent.empty() && missing.empty()) {
      out.verdict.push_back(
          "no rank is inside a Chorus call: every rank's last call is done (the job is in the "
          "application, or between calls)");
    }
    return out;
  }

  // The call the waiting ranks are in: the newest number any rank is pending in.
  const uint64_t seq = pendingBySeq.rbegin()->first;
  const std::vector<int>& waiters = pendingBySeq.rbegin()->second;
  double waited = 0;
  bool allFailed = true;
  for (int r : waiters) {
    const SeenCall& c = *comm.ranks.at(r).last();
    allFailed &= c.state == "failed";
    waited = std::max(waited, c.state == "failed" ? c.queuedAgo - c.endAgo : c.queuedAgo);
  }
  const SeenCall& call = *comm.ranks.at(waiters.front()).last();
  std::vector<int> behind;  // answered, last call older than seq and ended: outside Chorus
  for (const auto& [r, v] : comm.ranks) {
    if (!v.answered) continue;
    const SeenCall* last = v.last();
    if (last == nullptr || (last->seq < seq && last->state == "done")) behind.push_back(r);
  }
  std::vector<int> heldBy = behind;
  heldBy.insert(heldBy.end(), silent.begin(), silent.end());
  heldBy.insert(heldBy.end(), missing.begin(), missing.end());
  std::sort(heldBy.begin(), heldBy.end());
  const std::string head =
      ranksWord(waiters) + (allFailed
                                ? " failed in " + call.op + " #" + std::to_string(seq) + " after " + seconds(waited)
                                : (waiters.size() == 1 ? " has" : " have") + std::string(" waited ") + seconds(waited) +
                                      " in " + call.op + " #" + std::to_string(seq));
  if (heldBy.empty()) {
    std::set<int> waitedOn;
    for (int r : waiters) {
      if (comm.ranks.at(r).last()->waitingOn >= 0) waitedOn.insert(comm.ranks.at(r).last()->waitingOn);
    }
    out.verdict.push_back(
        head + ", which every rank has reached" +
        (waitedOn.empty() ? std::string() : " (waiting on " + ranksWord({waitedOn.begin(), waitedOn.end()}) + ")") +
        ": the call itself is slow or stuck (the network, a transport, an overloaded host)");
    return out;
  }
  out.verdict.push_back(head + " for " + ranksWord(heldBy));
  for (int r : behind) {
    const SeenCall* last = comm.ranks.at(r).last();
    if (last == nullptr) {
      out.verdict.push_back("rank " + std::to_string(r) +
                            " has made no call yet: it is outside Chorus (slow or stuck "
                            "in the application)");
    } else if (last->state == "failed") {
      out.verdict.push_back("rank " + std::to_string(r) + "'s last call is " + describe(*last) + ", failed " +
                            seconds(last->endAgo) + " ago: it stopped calling after that failure");
    } else {
      out.verdict.push_back("rank " + std::to_string(r) + "'s last call is " + last->op + " #" +
                            std::to_string(last->seq) + ", done " + seconds(last->endAgo) + " ago: rank " +
                            std::to_string(r) + " is outside Chorus (slow or stuck in the application)");
    }
  }
  return out;
}

}  // namespace chorus::inspect
