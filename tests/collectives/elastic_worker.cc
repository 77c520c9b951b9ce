// chorus_elastic_worker SCENARIO: one rank of an elastic process world (tests/harness/process_world.h), against the
// public C API only. Exits 0 only when every call it expected to succeed did, with the right results.
//   kill_and_shrink: CHORUS_TEST_VICTIMS="2" or rounds "1;4" (ranks of the first world): in each round the victims
//     SIGKILL themselves as the others enter an allreduce; the survivors get an error, shrink (CHORUS_SHRINK_ABORT,
//     the lost ranks found among themselves, or the victims listed with CHORUS_TEST_LIST_VICTIMS=1), check the
//     new ranks and go on. After the last round the shrunk communicator runs allreduce, allgather, a group and a
//     split.
//   exclude: CHORUS_TEST_EXCLUDE="1,3" on a healthy world: the others shrink with that list (CHORUS_SHRINK_DEFAULT,
//     connections shared); the excluded ranks stop calling.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "tests/collectives/emulated_hosts.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kCount = 1 << 18;  // 1 MiB of floats: long enough that a kill lands inside the call

std::vector<int> parseList(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(std::atoi(item.c_str()));
  }
  return out;
}

std::vector<std::vector<int>> parseRounds(const char* text) {
  std::vector<std::vector<int>> rounds;
  std::stringstream in(text ? text : "");
  std::string round;
  while (std::getline(in, round, ';')) rounds.push_back(parseList(round));
  return rounds;
}

bool contains(const std::vector<int>& v, int x) {
  for (int y : v) {
    if (y == x) return true;
  }
  return false;
}

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// The world as seen by one rank: its communicator and the first-world ranks of its members, in its rank order.
struct World {
  chorusComm_t comm = nullptr;
  std::vector<int> members;
  int self = -1;  // this rank's number in the first world
  int calls = 0;
  std::string failure;

  bool fail(const std::string& what) {
    if (failure.empty()) failure = what;
    return false;
  }

  // An allreduce whose sum is known: each member contributes (first-world rank + 1) * k.
  chorusResult_t allReduce(int k) {
    std::vector<float> v(kCount, static_cast<float>((self + 1) * k));
    chorusResult_t r = chorusAllReduce(v.data(), v.data(), v.size(), chorusFloat32, chorusSum, comm, nullptr);
    if (r != chorusSuccess) return r;
    float expected = 0;
    for (int m : members) expected += static_cast<float>((m + 1) * k);
    for (size_t i = 0; i < v.size(); i += 4099) {
      if (v[i] != expected) {
        fail("allreduce " + std::to_string(calls) + ": element " + std::to_string(i) + " is " + std::to_string(v[i]) +
             ", expected " + std::to_string(expected));
        return chorusInternalError;
      }
    }
    ++calls;
    return chorusSuccess;
  }

  // Checks that the communicator has the members' size and that this rank sits where the old order puts it.
  bool checkShape() {
    int n = 0, rank = -1;
    chorusCommCount(comm, &n);
    chorusCommUserRank(comm, &rank);
    int want = -1;
    for (size_t i = 0; i < members.size(); ++i) {
      if (members[i] == self) want = static_cast<int>(i);
    }
    if (n != static_cast<int>(members.size()) || rank != want) {
      return fail("shrunk communicator has " + std::to_string(n) + " ranks and this rank is " + std::to_string(rank) +
                  "; expected " + std::to_string(members.size()) + " and " + std::to_string(want));
    }
    return true;
  }

  // Takes the shrunk communicator in place of the current one (destroyed), without the `gone` members; checks it.
  bool adopt(chorusComm_t next, const std::vector<int>& gone) {
    chorusCommDestroy(comm);
    comm = next;
    std::vector<int> left;
    for (int m : members) {
      if (!contains(gone, m)) left.push_back(m);
    }
    members = left;
    return checkShape();
  }

  // The calls every communicator must serve, on the final one.
  bool finalCalls() {
    for (int k = 1; k <= 3; ++k) {
      if (allReduce(k) != chorusSuccess) return fail(std::string("final allreduce: ") + chorusGetLastError(comm));
    }
    const int n = static_cast<int>(members.size());
    std::vector<int32_t> mine = {self}, all(static_cast<size_t>(n));
    if (chorusAllGather(mine.data(), all.data(), 1, chorusInt32, comm, nullptr) != chorusSuccess) {
      return fail(std::string("allgather: ") + chorusGetLastError(comm));
    }
    for (int i = 0; i < n; ++i) {
      if (all[i] != members[i])
        return fail("allgather: slot " + std::to_string(i) + " holds " + std::to_string(all[i]));
    }
    std::vector<float> a(64, 1.0f), b(64, 2.0f);
    chorusGroupStart();
    chorusAllReduce(a.data(), a.data(), a.size(), chorusFloat32, chorusSum, comm, nullptr);
    chorusAllReduce(b.data(), b.data(), b.size(), chorusFloat32, chorusSum, comm, nullptr);
    if (chorusGroupEnd() != chorusSuccess || a[7] != n || b[7] != 2 * n) {
      return fail(std::string("group: ") + chorusGetLastError(comm));
    }
    int rank = 0;
    chorusCommUserRank(comm, &rank);
    chorusComm_t half = nullptr;
    if (chorusCommSplit(comm, rank % 2, rank, &half, nullptr) != chorusSuccess) {
      return fail(std::string("split: ") + chorusGetLastError(comm));
    }
    float one = 1.0f;
    chorusResult_t r = chorusAllReduce(&one, &one, 1, chorusFloat32, chorusSum, half, nullptr);
    const int halfSize = (n + (rank % 2 == 0 ? 1 : 0)) / 2;
    chorusCommDestroy(half);
    if (r != chorusSuccess || one != static_cast<float>(halfSize)) return fail("allreduce on a split of it");
    return true;
  }
};

int finish(World& w, const char* scenario, const std::string& extra) {
  if (w.comm) chorusCommDestroy(w.comm);
  if (!w.failure.empty()) {
    std::printf("rank %d: %s FAILED: %s\n", w.self, scenario, w.failure.c_str());
    return 1;
  }
  std::printf("rank %d: %s right (%d calls checked)%s\n", w.self, scenario, w.calls, extra.c_str());
  return 0;
}

int killAndShrink(World& w) {
  const std::vector<std::vector<int>> rounds = parseRounds(std::getenv("CHORUS_TEST_VICTIMS"));
  const bool listVictims = std::getenv("CHORUS_TEST_LIST_VICTIMS") != nullptr;
  std::string timings;
  for (const std::vector<int>& victims : rounds) {
    if (w.allReduce(1) != chorusSuccess) {
      w.fail(std::string("allreduce before the kill: ") + chorusGetLastError(w.comm));
      return finish(w, "kill_and_shrink", "");
    }
    // The victims' last call: it may fail on a survivor too, since a process killed with unread bytes in its
    // sockets resets them, and what it had sent but a peer had not read yet is lost with them.
    Clock::time_point start = Clock::now();
    chorusResult_t r = w.allReduce(2);
    if (contains(victims, w.self)) {
      std::printf("rank %d: dying without a goodbye, on purpose\n", w.self);
      std::fflush(stdout);
      ::raise(SIGKILL);
    }
    if (r == chorusSuccess) {
      // The victims never join this call: it must fail, soon.
      start = Clock::now();
      r = w.allReduce(9);
      if (r == chorusSuccess) {
        w.fail("the allreduce with a dead rank succeeded");
        return finish(w, "kill_and_shrink", "");
      }
    }
    const double failedMs = msSince(start);
    const std::string error = chorusGetLastError(w.comm);
    const Clock::time_point errorAt = Clock::now();
    std::vector<int> excluded;  // numbers in the current communicator
    for (size_t i = 0; i < w.members.size(); ++i) {
      if (contains(victims, w.members[i])) excluded.push_back(static_cast<int>(i));
    }
    chorusComm_t next = nullptr;
    r = chorusCommShrink(w.comm, listVictims ? excluded.data() : nullptr,
                         listVictims ? static_cast<int>(excluded.size()) : 0, &next, nullptr, CHORUS_SHRINK_ABORT);
    const double shrinkMs = msSince(errorAt);
    if (r != chorusSuccess) {
      w.fail(std::string("chorusCommShrink: ") + chorusGetLastError(nullptr) + " (after the call's error: " + error +
             ")");
      return finish(w, "kill_and_shrink", "");
    }
    if (shrinkMs > 5000) w.fail("chorusCommShrink took " + std::to_string(shrinkMs) + " ms after the error");
    if (!w.adopt(next, victims)) return finish(w, "kill_and_shrink", "");
    char line[160];
    std::snprintf(line, sizeof(line), "; error after %.0f ms, shrink %.1f ms", failedMs, shrinkMs);
    timings += line;
  }
  w.finalCalls();
  return finish(w, "kill_and_shrink", timings);
}

int exclude(World& w) {
  const std::vector<int> excluded =
      parseList(std::getenv("CHORUS_TEST_EXCLUDE") ? std::getenv("CHORUS_TEST_EXCLUDE") : "");
  for (int k = 1; k <= 2; ++k) {
    if (w.allReduce(k) != chorusSuccess) {
      w.fail(std::string("allreduce before the shrink: ") + chorusGetLastError(w.comm));
      return finish(w, "exclude", "");
    }
  }
  if (contains(excluded, w.self)) return finish(w, "exclude", " (excluded)");
  const Clock::time_point start = Clock::now();
  chorusComm_t next = nullptr;
  if (chorusCommShrink(w.comm, excluded.data(), static_cast<int>(excluded.size()), &next, nullptr,
                       CHORUS_SHRINK_DEFAULT) != chorusSuccess) {
    w.fail(std::string("chorusCommShrink: ") + chorusGetLastError(nullptr));
    return finish(w, "exclude", "");
  }
  const double shrinkMs = msSince(start);
  // The parent stays usable beside its shrunk child until destroyed; here it goes at once.
  if (w.adopt(next, excluded)) w.finalCalls();
  char line[80];
  std::snprintf(line, sizeof(line), "; shrink %.1f ms", shrinkMs);
  return finish(w, "exclude", line);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: chorus_elastic_worker kill_and_shrink|exclude\n");
    return 2;
  }
  const std::string scenario = argv[1];
  const char* rankText = std::getenv("CHORUS_RANK");
  const char* sizeText = std::getenv("CHORUS_WORLD_SIZE");
  const int nranks = sizeText ? std::atoi(sizeText) : 0;
  chorus::test::emulateHosts(rankText ? std::atoi(rankText) : -1, nranks);
  World w;
  if (chorusCommInitFromEnv(&w.comm) != chorusSuccess) {
    std::printf("init failed: %s\n", chorusGetLastError(nullptr));
    return 1;
  }
  chorusCommUserRank(w.comm, &w.self);
  for (int r = 0; r < nranks; ++r) w.members.push_back(r);
  if (scenario == "kill_and_shrink") return killAndShrink(w);
  if (scenario == "exclude") return exclude(w);
  std::printf("unknown scenario '%s'\n", scenario.c_str());
  return 2;
}
