// chorus-faults elastic: a rank is SIGKILLed mid-run; the survivors shrink (CHORUS_SHRINK_ABORT, the lost rank found
// among themselves), check their results at the smaller size, then grow back to the old size with a restarted
// process (chorusCommGrow) and check again. Timed from the kill to the last survivor's shrink returning.
#include <signal.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "perf/faults/fault_scenarios.h"
#include "perf/faults/rank_processes.h"

namespace chorus::faults {
namespace {

constexpr size_t kCount = 1 << 18;  // 1 MiB of floats: the kill lands inside a call

std::string hexOf(const chorusUniqueId& id) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : std::string(id.internal, sizeof(id.internal))) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

bool idOf(const std::string& hex, chorusUniqueId* id) {
  if (hex.size() != 2 * sizeof(id->internal)) return false;
  for (size_t i = 0; i < sizeof(id->internal); ++i) {
    id->internal[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return true;
}

// An allreduce in which rank r contributes (r + 1) * k, or sends (identity + 1) * k when given; true when every
// element is `expected` * k.
chorusResult_t checkedAllReduce(chorusComm_t comm, float mine, float expected, std::string* problem) {
  std::vector<float> v(kCount, mine);
  chorusResult_t r = chorusAllReduce(v.data(), v.data(), v.size(), chorusFloat32, chorusSum, comm, nullptr);
  if (r == chorusSuccess && (v[0] != expected || v[kCount - 1] != expected)) {
    *problem = "allreduce gave " + std::to_string(v[0]) + ", expected " + std::to_string(expected);
    return chorusInternalError;
  }
  return r;
}

// The restarted process's side: joins the grown communicator as its last rank and checks one allreduce.
void joinGrown(int nranks, const chorusUniqueId& growId, int out) {
  chorusComm_t grown = nullptr;
  chorusConfig_t config = withTimeout(60);
  if (chorusCommGrow(nullptr, 1, &growId, nranks - 1, &grown, &config) != chorusSuccess) {
    sendReport(out, chorusInternalError, now(), (std::string("grow: ") + chorusGetLastError(nullptr)).c_str());
    _exit(1);
  }
  std::string problem;
  chorusResult_t r = checkedAllReduce(grown, static_cast<float>(nranks), nranks * (nranks + 1) / 2.0f, &problem);
  sendReport(out, r, now(), r == chorusSuccess ? "grown right" : (problem + chorusGetLastError(grown)).c_str());
  chorusCommDestroy(grown);
}

// A rank of the first world: allreduces until the loss, shrink, check, grow, check.
void survive(int rank, int nranks, int victim, const chorusUniqueId& id, int out) {
  chorusComm_t comm = initOrDie(nranks, id, rank, out, 60);
  const float all = nranks * (nranks + 1) / 2.0f;
  std::string problem;
  bool announced = false;
  chorusResult_t r = chorusSuccess;
  for (double end = now() + 60; now() < end;) {
    r = checkedAllReduce(comm, static_cast<float>(rank + 1), all, &problem);
    if (r != chorusSuccess) break;
    if (!announced) sendReport(out, chorusSuccess, now(), "running");
    announced = true;
  }
  const double failed = now();
  chorusComm_t shrunk = nullptr;
  r = chorusCommShrink(comm, nullptr, 0, &shrunk, nullptr, CHORUS_SHRINK_ABORT);
  const double back = now();
  if (r != chorusSuccess) {
    sendReport(out, r, back, (std::string("shrink: ") + chorusGetLastError(nullptr)).c_str());
    _exit(1);
  }
  chorusCommDestroy(comm);
  const float survivors = all - static_cast<float>(victim + 1);
  for (int k = 0; k < 3 && r == chorusSuccess; ++k) {
    r = checkedAllReduce(shrunk, static_cast<float>(rank + 1), survivors, &problem);
  }
  char line[160];
  std::snprintf(line, sizeof(line), "shrunk: error %.3f s before the shrink returned; %s", back - failed,
                r == chorusSuccess ? "3 calls right" : (problem + chorusGetLastError(shrunk)).c_str());
  sendReport(out, r, back, line);
  int newRank = -1;
  chorusCommUserRank(shrunk, &newRank);
  chorusUniqueId growId{};
  if (newRank == 0) {
    chorusCommGetUniqueId(shrunk, &growId);
    sendReport(out, chorusSuccess, now(), ("growid " + hexOf(growId)).c_str());
  }
  chorusComm_t grown = nullptr;
  r = chorusCommGrow(shrunk, 1, newRank == 0 ? &growId : nullptr, -1, &grown, nullptr);
  if (r != chorusSuccess) {
    sendReport(out, r, now(), (std::string("grow: ") + chorusGetLastError(nullptr)).c_str());
    _exit(1);
  }
  r = checkedAllReduce(grown, static_cast<float>(newRank + 1), all, &problem);
  sendReport(out, r, now(), r == chorusSuccess ? "grown right" : (problem + chorusGetLastError(grown)).c_str());
  chorusCommDestroy(grown);
  chorusCommDestroy(shrunk);
}

}  // namespace

Trial elasticTrial(int nranks) {
  const int victim = nranks / 2;
  RankProcesses ranks(nranks, [nranks, victim](int rank, const chorusUniqueId& id, int out, int) {
    survive(rank, nranks, victim, id, out);
  });
  Trial t;
  auto failWith = [&](const std::string& what) {
    t.ok = false;
    if (t.detail.empty() || t.detail.rfind("shrunk", 0) == 0) t.detail = what;
    return t;
  };
  for (int r = 0; r < nranks; ++r) {
    if (!ranks.read(r, 30).received) return failWith("rank " + std::to_string(r) + " never started");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // into the middle of a call (each takes ms)
  const double killed = now();
  ::kill(ranks.pid(victim), SIGKILL);
  t.ok = true;
  double last = killed;
  chorusUniqueId growId{};
  for (int r = 0; r < nranks; ++r) {
    if (r == victim) continue;
    Report rep = ranks.read(r, 30);
    if (!rep.received || rep.result != chorusSuccess) {
      return failWith("rank " + std::to_string(r) + ": " + (rep.received ? rep.message : "no shrink report"));
    }
    if (t.detail.empty()) t.detail = rep.message;
    last = std::max(last, rep.time);
    if (r == (victim == 0 ? 1 : 0)) {
      Report id = ranks.read(r, 30);
      if (!id.received || id.message.rfind("growid ", 0) != 0 || !idOf(id.message.substr(7), &growId)) {
        return failWith("rank " + std::to_string(r) + " sent no grow id: " + id.message);
      }
    }
  }
  t.seconds = last - killed;
  const int restarted =
      ranks.spawn([nranks, growId](int, const chorusUniqueId&, int out, int) { joinGrown(nranks, growId, out); });
  for (int r = 0; r <= restarted; ++r) {
    if (r == victim) continue;
    Report rep = ranks.read(r, 30);
    if (!rep.received || rep.result != chorusSuccess || rep.message != "grown right") {
      return failWith((r == restarted ? std::string("restarted rank") : "rank " + std::to_string(r)) +
                      " after grow: " + (rep.received ? rep.message : "no report"));
    }
  }
  if (int left = leftoverSegments()) failWith(std::to_string(left) + " chorus segment(s) left in /dev/shm");
  return t;
}

}  // namespace chorus::faults
