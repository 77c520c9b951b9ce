// chorus-inspect: asks every rank of a running job where it is, and says in words who holds the others up.
//
//   chorus-inspect HOST:PORT [--job ID | --job-file PATH] [--timeout S] [--newest K] [--raw]
//       the job's store (as chorusrun prints it and CHORUS_STORE names it). The job id and secret: --job ID (or
//       CHORUS_JOB_ID) with CHORUS_SECRET; else the job file --job-file names; else the one chorusrun left for this
//       address (core/bootstrap/job_file.h). Each process is asked once, all at once, within S seconds (default
//       1.5); a rank that does not answer within them is named so.
//   chorus-inspect --dumps DIR     the same reading from the flight-record files CHORUS_FLIGHT_DIR holds.
//
// Exit status: 0 when it could read the job (whatever it found), 1 when it could not, 2 on a usage error.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/bootstrap/job_file.h"
#include "core/error.h"
#include "core/host_port.h"
#include "perf/chorus_inspect/flight_view.h"
#include "perf/chorus_inspect/rank_query.h"
#include "perf/chorus_inspect/verdict.h"

namespace {

using namespace chorus::inspect;

constexpr const char* kUsage =
    "usage: chorus-inspect HOST:PORT [--job ID | --job-file PATH] [--timeout SECONDS] [--newest K] [--raw]\n"
    "       chorus-inspect --dumps DIR\n";

void print(const std::map<std::string, CommView>& comms) {
  for (const auto& [identity, comm] : comms) {
    std::printf("communicator %s%s (%d ranks)\n", comm.name.empty() ? "" : (comm.name + " ").c_str(), identity.c_str(),
                comm.size);
    const Reading reading = readComm(comm);
    for (const std::string& line : reading.rankLines) std::printf("  %s\n", line.c_str());
    for (size_t i = 0; i < reading.verdict.size(); ++i) {
      std::printf("%s%s\n", i == 0 ? "verdict: " : "         ", reading.verdict[i].c_str());
    }
  }
}

int fromDumps(const std::string& dir) {
  std::map<std::string, CommView> comms;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("chorus-flight-", 0) != 0 || entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    try {
      addRecord(comms, text.str());
      ++files;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "chorus-inspect: %s: %s\n", entry.path().c_str(), e.what());
    }
  }
  if (files == 0) {
    std::fprintf(stderr, "chorus-inspect: no flight records (chorus-flight-*.json) in %s\n", dir.c_str());
    return 1;
  }
  // A rank without a file left none: its process died before it could, or it never failed nor was signalled.
  for (auto& [identity, comm] : comms) {
    for (int r = 0; r < comm.size; ++r) {
      if (comm.ranks.count(r) == 0) {
        comm.ranks[r].rank = r;
        comm.ranks[r].problem = "no file: its process died before writing one, or was never asked to";
      }
    }
  }
  std::printf("chorus-inspect: %d flight records from %s\n", files, dir.c_str());
  print(comms);
  return 0;
}

// Connects to the job's store with the credentials given, or with those chorusrun left in its job file.
std::unique_ptr<chorus::StoreClient> connectStore(std::string address, std::string job, const std::string& jobFile) {
  if (job.empty() && jobFile.empty() && std::getenv("CHORUS_JOB_ID") != nullptr) job = std::getenv("CHORUS_JOB_ID");
  std::string secret;
  const bool fromFile = job.empty();
  if (fromFile) {
    const std::string path = jobFile.empty() ? chorus::job_file::pathFor(address) : jobFile;
    if (jobFile.empty() && access(path.c_str(), F_OK) != 0) {
      throw std::runtime_error("the job id: --job ID or CHORUS_JOB_ID, or --job-file PATH (no job file for " + address +
                               " at " + path + ": is the job chorusrun's, run by this user?)");
    }
    const chorus::job_file::JobCredentials credentials = chorus::job_file::read(path);
    if (credentials.pid > 0 && kill(static_cast<pid_t>(credentials.pid), 0) != 0 && errno == ESRCH) {
      std::fprintf(stderr, "chorus-inspect: %s names chorusrun pid %ld, which is gone: the file may be stale\n",
                   path.c_str(), credentials.pid);
    }
    if (address.empty()) address = credentials.store;
    job = credentials.jobId;
    secret = credentials.secret;
  }
  std::string host;
  uint16_t port = 0;
  chorus::splitHostPort(address, "the store's address", &host, &port);
  if (!fromFile) return std::make_unique<chorus::StoreClient>(host, port, job, -1, chorus::Deadline::after(5));
  return std::make_unique<chorus::StoreClient>(host, port, job, secret, -1, chorus::Deadline::after(5));
}

int live(const std::string& address, const std::string& job, const std::string& jobFile, double timeout, size_t newest,
         bool raw) {
  const auto began = std::chrono::steady_clock::now();
  const std::unique_ptr<chorus::StoreClient> client = connectStore(address, job, jobFile);
  chorus::StoreClient& store = *client;
  const std::vector<Card> cards = readCards(store, chorus::Deadline::after(5));
  std::map<std::string, std::string> listeners;  // address -> token
  std::map<std::string, CommView> comms;
  for (const Card& c : cards) {
    if (raw) std::printf("card %s rank %d of %d %s\n", c.address.c_str(), c.rank, c.size, c.identity.c_str());
    listeners[c.address] = c.token;
    CommView& comm = comms[c.identity];
    comm.identity = c.identity;
    comm.size = c.size;
    comm.ranks[c.rank].rank = c.rank;
  }
  const auto answers = askAll(listeners, newest, timeout);
  int answered = 0;
  for (const auto& [where, answer] : answers) {
    if (!answer.ok) continue;
    try {
      addAnswer(comms, answer.text);
      ++answered;
      if (raw) std::printf("%s", answer.text.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "chorus-inspect: the answer of %s: %s\n", where.c_str(), e.what());
    }
  }
  // Cards whose process did not answer: their ranks say why.
  for (const Card& c : cards) {
    RankView& r = comms[c.identity].ranks[c.rank];
    if (!r.answered) r.problem = answers.at(c.address).problem + ", " + c.address;
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::printf("chorus-inspect: %zu communicator(s), %zu process(es) asked, %d answered, in %.3f s\n", comms.size(),
              listeners.size(), answered, took);
  if (cards.empty()) std::printf("no inspect card in the store: no communicator of this job is up yet\n");
  print(comms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string address, job, jobFile, dumps;
  double timeout = 1.5;
  size_t newest = 16;
  bool raw = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool hasValue = i + 1 < argc;
    if (a == "--dumps" && hasValue) {
      dumps = argv[++i];
    } else if (a == "--job" && hasValue) {
      job = argv[++i];
    } else if (a == "--job-file" && hasValue) {
      jobFile = argv[++i];
    } else if (a == "--timeout" && hasValue) {
      timeout = std::atof(argv[++i]);
    } else if (a == "--newest" && hasValue) {
      newest = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--raw") {
      raw = true;
    } else if (a == "-h" || a == "--help") {
      std::printf("%s", kUsage);
      return 0;
    } else if (address.empty() && a[0] != '-') {
      address = a;
    } else {
      std::fprintf(stderr, "%s", kUsage);
      return 2;
    }
  }
  const bool asksLive = !address.empty() || !jobFile.empty();
  if (dumps.empty() != asksLive || (!job.empty() && !jobFile.empty()) || timeout <= 0 || newest == 0) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  try {
    return dumps.empty() ? live(address, job, jobFile, timeout, newest, raw) : fromDumps(dumps);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chorus-inspect: %s\n", e.what());
    return 1;
  }
}
