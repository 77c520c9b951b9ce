// chorus-faults: stages each failure mode several times and prints the median time from fault to error.
//   chorus-faults [--runs N] [--ranks N] [--chorusrun PATH] [MODE...]
//   MODE: timeout dead-peer abort mismatch launcher elastic
// Not a test (tests assert the bounds); this is the measurement behind the numbers in perf/results/elastic.md.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "perf/faults/fault_scenarios.h"

namespace {

struct Mode {
  const char* name;
  const char* what;
  std::function<chorus::faults::Trial()> run;
};

std::string selfPath() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, n) : std::string();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--launcher-rank") == 0) return chorus::faults::launcherRank(argv[2]);
  int runs = 7, ranks = 3;
  std::string self = selfPath();
  std::string chorusrun = (std::filesystem::path(self).parent_path() / "chorusrun").string();
  std::vector<std::string> wanted;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--ranks" && i + 1 < argc) {
      ranks = std::max(2, std::atoi(argv[++i]));
    } else if (a == "--chorusrun" && i + 1 < argc) {
      chorusrun = argv[++i];
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: chorus-faults [--runs N] [--ranks N] [--chorusrun PATH] [timeout|dead-peer|abort|mismatch|"
                  "launcher|elastic ...]\n");
      return 0;
    } else {
      wanted.push_back(a);
    }
  }
  std::vector<Mode> modes = {
      {"timeout", "seconds past CHORUS_TIMEOUT=1", chorus::faults::timeoutTrial},
      {"dead-peer", "SIGKILL to last survivor's error", [ranks] { return chorus::faults::deadPeerTrial(ranks); }},
      {"abort", "chorusCommAbort to the call's return", chorus::faults::abortTrial},
      {"mismatch", "later call to last rank's error", chorus::faults::mismatchTrial},
      {"launcher", "rank death to chorusrun's exit", [&] { return chorus::faults::launcherTrial(chorusrun, self); }},
      {"elastic", "SIGKILL to last survivor's shrink", [ranks] { return chorus::faults::elasticTrial(ranks); }},
  };
  int failures = 0;
  std::printf("%-10s %-36s %5s %9s %9s %9s  %s\n", "mode", "measured", "ok", "median_s", "min_s", "max_s",
              "first message");
  for (const Mode& m : modes) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), m.name) == wanted.end()) continue;
    std::vector<double> secs;
    int ok = 0;
    std::string detail;
    for (int i = 0; i < runs; ++i) {
      chorus::faults::Trial t = m.run();
      secs.push_back(t.seconds);
      ok += t.ok;
      if (detail.empty() || !t.ok) detail = t.detail;
    }
    std::sort(secs.begin(), secs.end());
    if (ok != runs) ++failures;
    std::printf("%-10s %-36s %2d/%-2d %9.3f %9.3f %9.3f  %s\n", m.name, m.what, ok, runs, secs[secs.size() / 2],
                secs.front(), secs.back(), detail.substr(0, 160).c_str());
    std::fflush(stdout);
  }
  return failures == 0 ? 0 : 1;
}
