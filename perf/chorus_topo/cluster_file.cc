#include "perf/chorus_topo/cluster_file.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "topology/link_model.h"

namespace chorus::topo {

namespace {

using Json = nlohmann::json;

[[noreturn]] void malformed(const std::string& where, const std::string& what) {
  throwInvalidArgument("cluster JSON: " + where + ": " + what);
}

void rejectUnknown(const Json& object, std::initializer_list<const char*> known, const std::string& where) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; })) {
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      malformed(where, "unknown field '" + it.key().substr(0, 40) + "' (known: " + list + ")");
    }
  }
}

const Json& objectAt(const Json& parent, const char* key, const std::string& where) {
  const Json& v = parent.at(key);
  if (!v.is_object()) malformed(where + key, "must be an object");
  return v;
}

double number(const Json& object, const char* key, const std::string& where, double lo, double hi, double fallback,
              bool required = false) {
  if (!object.contains(key)) {
    if (required) malformed(where + key, "missing");
    return fallback;
  }
  const Json& v = object.at(key);
  if (!v.is_number()) malformed(where + key, "must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) {
    std::ostringstream range;
    range << "must be in " << lo << ".." << hi << ", got " << d;
    malformed(where + key, range.str());
  }
  return d;
}

int integer(const Json& object, const char* key, const std::string& where, int lo, int hi, int fallback,
            bool required = false) {
  const double d = number(object, key, where, lo, hi, fallback, required);
  if (d != std::floor(d)) malformed(where + key, "must be an integer");
  return static_cast<int>(d);
}

LinkCost linkAt(const Json& parent, const char* key, bool required) {
  if (!parent.contains(key)) {
    if (required) malformed(key, "missing");
    return LinkCost{};
  }
  const std::string where = std::string(key) + ".";
  const Json& link = objectAt(parent, key, "");
  rejectUnknown(link,
                {"latency_us", "bandwidth_gbs", "burst_bytes", "peak_gbs", "frame_bytes", "multi_frame_us",
                 "chain_us", "shared_memory"},
                key);
  LinkCost cost{number(link, "latency_us", where, 0, 1e6, 0, true),
                number(link, "bandwidth_gbs", where, 1e-6, 1e6, 0, true)};
  cost.burstBytes = number(link, "burst_bytes", where, 0, 1e12, 0);
  if (cost.burstBytes > 0) {
    cost.peakGBs = number(link, "peak_gbs", where, cost.bandwidthGBs, 1e6, 0, true);
    if (!(cost.peakGBs > cost.bandwidthGBs)) malformed(where + "peak_gbs", "must be above bandwidth_gbs");
  }
  cost.frameBytes = number(link, "frame_bytes", where, 0, 1e9, 0);
  if (cost.frameBytes > 0) cost.multiFrameUs = number(link, "multi_frame_us", where, 0, 1e6, 0, true);
  cost.chainUs = number(link, "chain_us", where, 0, 1e6, 0);
  return cost;
}

}  // namespace

CostInputs ClusterSpec::inputsFor(int nranks) const {
  CostInputs in;
  in.nranks = nranks;
  in.maxRanksPerHost = std::min(nranks, ranksPerHost);
  in.nhosts = (nranks + ranksPerHost - 1) / ranksPerHost;
  in.coresPerHost = coresPerHost > 0 ? coresPerHost : ranksPerHost;
  in.intraHost = intraHost;
  in.intraHostMemory = sharedMemory;
  // A host's NICs side by side: their rates and buckets add up; every per-message figure is one NIC's.
  in.interHost = nic;
  in.interHost.bandwidthGBs *= nicsPerHost;
  in.interHost.burstBytes *= nicsPerHost;
  in.interHost.peakGBs *= nicsPerHost;
  in.reduceGBs = reduceGBs;
  in.contextSwitchUs = contextSwitchUs;
  in.sliceBytes = sliceBytes;
  if (hostsPerRack > 0 && in.nhosts > hostsPerRack) {
    in.hostsPerRack = hostsPerRack;
    in.rackUplinkGBs = uplinkGBs;
  }
  return in;
}

ClusterSpec parseClusterJson(std::string_view text) {
  if (text.size() > (1 << 20)) malformed("document", "larger than 1 MiB");
  Json doc = Json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) malformed("document", "not valid JSON");
  if (!doc.is_object()) malformed("document", "must be an object");
  rejectUnknown(doc,
                {"format", "name", "ranks_per_host", "cores_per_host", "intra_host", "nics_per_host", "nic", "fabric",
                 "reduce_gbs", "slice_bytes", "context_switch_us"},
                "document");
  if (!doc.contains("format") || !doc["format"].is_string() || doc["format"].get<std::string>() != kClusterFormat) {
    malformed("format", "must be \"" + std::string(kClusterFormat) + "\"");
  }
  ClusterSpec c;
  if (doc.contains("name")) {
    if (!doc["name"].is_string()) malformed("name", "must be a string");
    c.name = doc["name"].get<std::string>();
  }
  c.ranksPerHost = integer(doc, "ranks_per_host", "", 1, 4096, 1, true);
  c.coresPerHost = number(doc, "cores_per_host", "", 1e-3, 1 << 16, 0);
  if (doc.contains("intra_host")) {
    c.intraHost = linkAt(doc, "intra_host", true);
  } else {
    const LinkParams same = defaultLinkParams(LinkClass::kSameNuma);
    c.intraHost = LinkCost{same.latencyUs, same.bandwidthGBs};
  }
  if (doc.contains("intra_host") && doc["intra_host"].contains("shared_memory")) {
    if (!doc["intra_host"]["shared_memory"].is_boolean()) malformed("intra_host.shared_memory", "must be a boolean");
    c.sharedMemory = doc["intra_host"]["shared_memory"].get<bool>();
  }
  c.nicsPerHost = integer(doc, "nics_per_host", "", 1, 64, 1);
  c.nic = linkAt(doc, "nic", true);
  if (doc.contains("fabric")) {
    const Json& f = objectAt(doc, "fabric", "");
    rejectUnknown(f, {"hosts_per_rack", "oversubscription", "uplink_gbs"}, "fabric");
    c.hostsPerRack = integer(f, "hosts_per_rack", "fabric.", 1, 1 << 20, 0, true);
    const bool over = f.contains("oversubscription"), uplink = f.contains("uplink_gbs");
    if (over == uplink) malformed("fabric", "give one of oversubscription or uplink_gbs");
    const double hostGBs = c.nic.bandwidthGBs * c.nicsPerHost;
    c.uplinkGBs = uplink ? number(f, "uplink_gbs", "fabric.", 1e-6, 1e9, 0)
                         : c.hostsPerRack * hostGBs / number(f, "oversubscription", "fabric.", 1, 1024, 1);
  }
  c.reduceGBs = number(doc, "reduce_gbs", "", 1e-3, 1e6, 12.0);
  c.sliceBytes = static_cast<size_t>(integer(doc, "slice_bytes", "", 4096, 64 << 20, 512 * 1024));
  c.contextSwitchUs = number(doc, "context_switch_us", "", 0, 1e6, CostInputs{}.contextSwitchUs);
  return c;
}

ClusterSpec loadClusterFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throwSystemError("cluster file '" + path + "'", "open", errno);
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return parseClusterJson(text.str());
  } catch (const Error& e) {
    throwInvalidArgument("cluster file '" + path + "': " + e.what());
  }
}

}  // namespace chorus::topo
