#include "perf/chorus_inspect/flight_view.h"

#include <nlohmann/json.hpp>

namespace chorus::inspect {
namespace {

using Json = nlohmann::json;

double agoSeconds(int64_t nowMs, int64_t thenMs) { return thenMs == 0 ? -1 : (nowMs - thenMs) / 1000.0; }

void addParsed(std::map<std::string, CommView>& comms, const Json& j) {
  CommView& comm = comms[j.at("identity").get<std::string>()];
  comm.identity = j.at("identity").get<std::string>();
  comm.name = j.value("comm", "");
  comm.size = j.at("size").get<int>();
  RankView& r = comm.ranks[j.at("rank").get<int>()];
  r.rank = j.at("rank").get<int>();
  r.answered = true;
  r.problem.clear();
  r.host = j.value("host", "");
  r.pid = j.value("pid", int64_t{0});
  const int64_t now = j.at("nowMs").get<int64_t>();
  r.calls.clear();
  for (const Json& c : j.at("calls")) {
    SeenCall s;
    s.seq = c.at("seq").get<uint64_t>();
    s.op = c.at("op").get<std::string>();
    s.type = c.value("type", "");
    s.reduction = c.value("reduction", "");
    s.algorithm = c.value("algorithm", "");
    s.state = c.at("state").get<std::string>();
    s.bytes = c.value("bytes", uint64_t{0});
    s.peer = c.value("peer", -1);
    s.waitingOn = c.value("waitingOn", -1);
    s.waitingCount = c.value("waitingCount", 0);
    s.queuedAgo = agoSeconds(now, c.value("queuedMs", int64_t{0}));
    s.waitingAgo = agoSeconds(now, c.value("waitingMs", int64_t{0}));
    s.endAgo = agoSeconds(now, c.value("endMs", int64_t{0}));
    r.calls.push_back(std::move(s));
  }
}

}  // namespace

void addRecord(std::map<std::string, CommView>& comms, std::string_view json) { addParsed(comms, Json::parse(json)); }

void addAnswer(std::map<std::string, CommView>& comms, std::string_view json) {
  const Json j = Json::parse(json);
  for (const Json& record : j.at("comms")) addParsed(comms, record);
}

std::string rankList(const std::vector<int>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(ranks[i]);
    if (j > i) s += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return s;
}

}  // namespace chorus::inspect
