#include "topology/topology_json.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.h"
#include "topology/cpu_list.h"
#include "topology/host_topology_check.h"

namespace chorus {

namespace {

using Json = nlohmann::json;

constexpr int kMaxNesting = 32;
constexpr const char* kParsePrefix = "topology JSON: ";

[[noreturn]] void malformed(const std::string& where, const std::string& what) {
  throwInvalidArgument(std::string(kParsePrefix) + where + ": " + what);
}

const char* typeOf(const Json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_null()) return "null";
  if (v.is_number_integer()) return "an integer";
  return "a number";
}

// Nesting deeper than any valid file is refused before nlohmann builds (and later recursively destroys) it.
void checkNesting(std::string_view text) {
  int depth = 0;
  bool inString = false;
  bool escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        inString = false;
      }
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) {
        malformed("document",
                  "nested deeper than " + std::to_string(kMaxNesting) + " levels at byte " + std::to_string(i));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

// One JSON object being read: typed getters that name the field in their errors, and a check that nothing
// unknown was left over (a misspelt optional field must not be silently ignored).
class ObjectReader {
 public:
  ObjectReader(const Json& value, std::string where) : where_(std::move(where)) {
    if (!value.is_object()) malformed(where_, std::string("must be an object, not ") + typeOf(value));
    object_ = &value;
  }

  bool has(const char* key) const { return object_->contains(key); }

  long long integer(const char* key, long long lo, long long hi) {
    const Json& v = field(key);
    if (!v.is_number_integer()) malformed(path(key), std::string("must be an integer, not ") + typeOf(v));
    bool inRange = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(hi)
                                          : v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
    if (!inRange) {
      malformed(path(key), v.dump() + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    return v.is_number_unsigned() ? static_cast<long long>(v.get<uint64_t>()) : v.get<int64_t>();
  }
  long long integerOr(const char* key, long long lo, long long hi, long long otherwise) {
    return has(key) ? integer(key, lo, hi) : otherwise;
  }

  uint64_t bytes(const char* key, uint64_t hi) {
    const Json& v = field(key);
    if (!v.is_number_integer()) malformed(path(key), std::string("must be an integer, not ") + typeOf(v));
    if (!v.is_number_unsigned() && v.get<int64_t>() < 0) malformed(path(key), "must not be negative");
    uint64_t value = v.get<uint64_t>();
    if (value > hi) malformed(path(key), v.dump() + " is larger than " + std::to_string(hi));
    return value;
  }

  double number(const char* key) {
    const Json& v = field(key);
    if (!v.is_number()) malformed(path(key), std::string("must be a number, not ") + typeOf(v));
    double d = v.get<double>();
    if (!std::isfinite(d)) malformed(path(key), "must be finite");
    return d;
  }

  std::string string(const char* key, size_t maxBytes) {
    const Json& v = field(key);
    if (!v.is_string()) malformed(path(key), std::string("must be a string, not ") + typeOf(v));
    const std::string& s = v.get_ref<const std::string&>();
    if (s.size() > maxBytes) malformed(path(key), "is longer than " + std::to_string(maxBytes) + " bytes");
    return s;
  }
  std::string stringOr(const char* key, size_t maxBytes) { return has(key) ? string(key, maxBytes) : ""; }

  const Json& array(const char* key, size_t maxEntries) {
    const Json& v = field(key);
    if (!v.is_array()) malformed(path(key), std::string("must be an array, not ") + typeOf(v));
    if (v.size() > maxEntries) malformed(path(key), "has more than " + std::to_string(maxEntries) + " entries");
    return v;
  }
  const Json& arrayOr(const char* key, size_t maxEntries) {
    static const Json kEmpty = Json::array();
    return has(key) ? array(key, maxEntries) : kEmpty;
  }

  std::vector<std::string> strings(const char* key, size_t maxEntries, size_t maxBytes) {
    std::vector<std::string> out;
    if (!has(key)) return out;
    const Json& list = array(key, maxEntries);
    for (size_t i = 0; i < list.size(); ++i) {
      std::string where = path(key) + "[" + std::to_string(i) + "]";
      if (!list[i].is_string()) malformed(where, std::string("must be a string, not ") + typeOf(list[i]));
      if (list[i].get_ref<const std::string&>().size() > maxBytes) {
        malformed(where, "is longer than " + std::to_string(maxBytes) + " bytes");
      }
      out.push_back(list[i].get<std::string>());
    }
    return out;
  }

  const Json& object(const char* key) {
    const Json& v = field(key);
    if (!v.is_object()) malformed(path(key), std::string("must be an object, not ") + typeOf(v));
    return v;
  }

  // Throws on any key no getter asked for.
  void rejectUnknown(std::initializer_list<const char*> optionalKeys = {}) {
    for (const char* k : optionalKeys) used_.insert(k);
    for (auto it = object_->begin(); it != object_->end(); ++it) {
      if (used_.count(it.key())) continue;
      std::string known;
      for (const std::string& k : used_) known += (known.empty() ? "" : ", ") + k;
      malformed(where_, "unknown field '" + printable(it.key()) + "' (known here: " + known + ")");
    }
  }

  std::string path(const std::string& key) const { return where_ + "." + key; }

 private:
  const Json& field(const char* key) {
    used_.insert(key);
    auto it = object_->find(key);
    if (it == object_->end()) malformed(path(key), "is missing");
    return *it;
  }

  const Json* object_ = nullptr;
  std::string where_;
  std::set<std::string> used_;
};

std::vector<int> cpuListField(ObjectReader& r, const char* key, size_t* budget) {
  std::string text = r.string(key, 64 * 1024);
  std::vector<int> cpus;
  std::string why;
  if (!parseCpuList(text, &cpus, &why)) {
    // Built by append: g++ 12 -O3 raises a false -Wrestrict on `"'" + std::string` (GCC bug 105329).
    std::string what(1, '\'');
    what.append(printable(text));
    what.append("' is not a CPU list like \"0-7,16-23\": ").append(why);
    malformed(r.path(key), what);
  }
  // Lists of one kind must be disjoint, so together they cannot hold more CPUs than there are CPU numbers.
  if (cpus.size() > *budget) malformed(r.path(key), "more CPUs in total than CPU numbers exist");
  *budget -= cpus.size();
  return cpus;
}

HostTopology readTopology(const Json& doc) {
  ObjectReader top(doc, "document");
  std::string format = top.string("format", 64);
  if (format != kTopologyFormat) {
    malformed("format",
              "'" + printable(format) + "' is not supported (this Chorus reads " + std::string(kTopologyFormat) + ")");
  }
  HostTopology t;
  t.source = top.stringOr("source", kMaxTopologyText);
  t.hostname = top.stringOr("hostname", kMaxTopologyText);

  const Json& packages = top.array("packages", kMaxTopologyEntries);
  size_t budget = kMaxCpuIndex + 1;
  for (size_t i = 0; i < packages.size(); ++i) {
    ObjectReader p(packages[i], "packages[" + std::to_string(i) + "]");
    CpuPackage pkg;
    pkg.id = static_cast<int>(p.integer("id", 0, kMaxPackageId));
    pkg.cpus = cpuListField(p, "cpus", &budget);
    pkg.cores = static_cast<int>(p.integer("cores", 0, kMaxCpuIndex + 1));
    p.rejectUnknown();
    t.packages.push_back(std::move(pkg));
  }

  const Json& numa = top.array("numa", kMaxTopologyEntries);
  budget = kMaxCpuIndex + 1;
  for (size_t i = 0; i < numa.size(); ++i) {
    ObjectReader n(numa[i], "numa[" + std::to_string(i) + "]");
    NumaNode node;
    node.id = static_cast<int>(n.integer("id", 0, kMaxNumaId));
    node.cpus = cpuListField(n, "cpus", &budget);
    node.cores = static_cast<int>(n.integer("cores", 0, kMaxCpuIndex + 1));
    node.memoryBytes = n.bytes("memory_bytes", kMaxMemoryBytes);
    n.rejectUnknown();
    t.numaNodes.push_back(std::move(node));
  }

  const Json& caches = top.arrayOr("caches", kMaxTopologyEntries);
  for (size_t i = 0; i < caches.size(); ++i) {
    ObjectReader c(caches[i], "caches[" + std::to_string(i) + "]");
    CacheGroup g;
    g.level = static_cast<int>(c.integer("level", 1, 5));
    g.sizeBytes = c.bytes("size_bytes", kMaxCacheBytes);
    g.count = static_cast<int>(c.integer("count", 1, 1 << 20));
    c.rejectUnknown();
    t.caches.push_back(g);
  }

  const Json& pci = top.arrayOr("pci", kMaxTopologyEntries);
  for (size_t i = 0; i < pci.size(); ++i) {
    ObjectReader d(pci[i], "pci[" + std::to_string(i) + "]");
    PciDevice dev;
    std::string kind = d.string("kind", 16);
    if (kind == "gpu") {
      dev.kind = PciKind::kGpu;
    } else if (kind == "nic") {
      dev.kind = PciKind::kNic;
    } else {
      malformed(d.path("kind"), "'" + printable(kind) + "' is neither \"gpu\" nor \"nic\"");
    }
    dev.busId = d.string("bus_id", 64);
    dev.numaNode = static_cast<int>(d.integerOr("numa", -1, kMaxNumaId, -1));
    dev.vendorId = d.stringOr("vendor_id", 16);
    dev.deviceId = d.stringOr("device_id", 16);
    dev.name = d.stringOr("name", kMaxTopologyText);
    dev.interfaces = d.strings("interfaces", kMaxDeviceNames, 64);
    dev.rdmaDevices = d.strings("rdma", kMaxDeviceNames, 64);
    d.rejectUnknown();
    t.pciDevices.push_back(std::move(dev));
  }

  if (top.has("links")) {
    const Json& links = top.object("links");
    for (auto it = links.begin(); it != links.end(); ++it) {
      std::optional<LinkClass> c = linkClassFromName(it.key());
      std::string shown = printable(it.key());
      if (!c) {
        malformed("links",
                  "unknown link class '" + shown + "' (known: same_numa, cross_numa, network, cuda_ipc, rdma)");
      }
      ObjectReader l(it.value(), "links." + shown);
      LinkParams p;
      p.latencyUs = l.number("latency_us");
      p.bandwidthGBs = l.number("bandwidth_gbs");
      if (l.has("burst_bytes") || l.has("peak_gbs")) {
        p.burstBytes = l.number("burst_bytes");
        p.peakGBs = l.number("peak_gbs");
      }
      if (l.has("frame_bytes") || l.has("multi_frame_us")) {
        p.frameBytes = l.number("frame_bytes");
        p.multiFrameUs = l.number("multi_frame_us");
      }
      if (l.has("chain_us")) p.chainUs = l.number("chain_us");
      l.rejectUnknown();
      t.linkOverrides[*c] = p;
    }
  }
  if (top.has("fabric")) {
    ObjectReader f(top.object("fabric"), "fabric");
    t.fabric.hostsPerRack = static_cast<int>(f.integer("hosts_per_rack", 1, 1 << 20));
    t.fabric.uplinkGBs = f.number("uplink_gbs");
    f.rejectUnknown();
  }
  if (top.has("scheduler")) {
    ObjectReader s(top.object("scheduler"), "scheduler");
    t.contextSwitchUs = s.number("context_switch_us");
    s.rejectUnknown();
  }
  top.rejectUnknown({"links", "fabric", "scheduler", "caches", "pci", "source", "hostname"});
  return t;
}

void sortEntries(HostTopology* t) {
  std::sort(t->packages.begin(), t->packages.end(), [](auto& a, auto& b) { return a.id < b.id; });
  std::sort(t->numaNodes.begin(), t->numaNodes.end(), [](auto& a, auto& b) { return a.id < b.id; });
  std::sort(t->caches.begin(), t->caches.end(),
            [](auto& a, auto& b) { return std::pair(a.level, a.sizeBytes) < std::pair(b.level, b.sizeBytes); });
  std::sort(t->pciDevices.begin(), t->pciDevices.end(), [](auto& a, auto& b) { return a.busId < b.busId; });
}

}  // namespace

HostTopology parseTopologyJson(std::string_view text) {
  if (text.size() > kMaxTopologyJsonBytes) {
    malformed("document", std::to_string(text.size()) + " bytes is more than the " +
                              std::to_string(kMaxTopologyJsonBytes) + " a topology may have");
  }
  checkNesting(text);
  Json doc;
  try {
    doc = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 7: ..." without the bracketed id.
    std::string what = e.what();
    size_t close = what.find("] ");
    malformed("document", close == std::string::npos ? what : what.substr(close + 2));
  }
  HostTopology t;
  try {
    t = readTopology(doc);
  } catch (const Json::exception& e) {
    malformed("document", e.what());  // a getter misjudged a type: report rather than crash
  }
  try {
    validateHostTopology(t);
  } catch (const Error& e) {
    throwInvalidArgument(std::string(kParsePrefix) + e.what());
  }
  sortEntries(&t);
  return t;
}

std::string topologyToJson(const HostTopology& t) {
  using Ordered = nlohmann::ordered_json;
  Ordered doc;
  doc["format"] = kTopologyFormat;
  if (!t.source.empty()) doc["source"] = t.source;
  if (!t.hostname.empty()) doc["hostname"] = t.hostname;
  doc["packages"] = Ordered::array();
  for (const CpuPackage& p : t.packages) {
    doc["packages"].push_back({{"id", p.id}, {"cpus", formatCpuList(p.cpus)}, {"cores", p.cores}});
  }
  doc["numa"] = Ordered::array();
  for (const NumaNode& n : t.numaNodes) {
    doc["numa"].push_back(
        {{"id", n.id}, {"cpus", formatCpuList(n.cpus)}, {"cores", n.cores}, {"memory_bytes", n.memoryBytes}});
  }
  doc["caches"] = Ordered::array();
  for (const CacheGroup& c : t.caches) {
    doc["caches"].push_back({{"level", c.level}, {"size_bytes", c.sizeBytes}, {"count", c.count}});
  }
  doc["pci"] = Ordered::array();
  for (const PciDevice& d : t.pciDevices) {
    Ordered e = {{"kind", pciKindName(d.kind)}, {"bus_id", d.busId}, {"numa", d.numaNode}};
    if (!d.vendorId.empty()) e["vendor_id"] = d.vendorId;
    if (!d.deviceId.empty()) e["device_id"] = d.deviceId;
    if (!d.name.empty()) e["name"] = d.name;
    if (!d.interfaces.empty()) e["interfaces"] = d.interfaces;
    if (!d.rdmaDevices.empty()) e["rdma"] = d.rdmaDevices;
    doc["pci"].push_back(std::move(e));
  }
  if (!t.linkOverrides.empty()) {
    Ordered links = Ordered::object();
    for (const auto& [c, p] : t.linkOverrides) {
      Ordered link = {{"latency_us", p.latencyUs}, {"bandwidth_gbs", p.bandwidthGBs}};
      if (p.burstBytes > 0) {
        link["burst_bytes"] = p.burstBytes;
        link["peak_gbs"] = p.peakGBs;
      }
      if (p.frameBytes > 0) {
        link["frame_bytes"] = p.frameBytes;
        link["multi_frame_us"] = p.multiFrameUs;
      }
      if (p.chainUs > 0) link["chain_us"] = p.chainUs;
      links[linkClassName(c)] = std::move(link);
    }
    doc["links"] = std::move(links);
  }
  if (t.fabric.hostsPerRack > 0) {
    doc["fabric"] = {{"hosts_per_rack", t.fabric.hostsPerRack}, {"uplink_gbs", t.fabric.uplinkGBs}};
  }
  if (t.contextSwitchUs > 0) doc["scheduler"] = {{"context_switch_us", t.contextSwitchUs}};
  // One entry per line: a 2-socket box stays a screenful, and diffs show which entry changed. Invalid UTF-8 (a
  // device name from a broken driver) is replaced rather than thrown on.
  auto compact = [](const Ordered& v) { return v.dump(-1, ' ', false, Ordered::error_handler_t::replace); };
  std::string text = "{\n";
  size_t field = 0;
  for (auto it = doc.begin(); it != doc.end(); ++it, ++field) {
    text += "  " + compact(it.key()) + ": ";
    const Ordered& v = it.value();
    if ((v.is_array() || v.is_object()) && !v.empty()) {
      text += v.is_array() ? "[\n" : "{\n";
      size_t i = 0;
      for (auto e = v.begin(); e != v.end(); ++e, ++i) {
        text += "    " + (v.is_object() ? compact(e.key()) + ": " : std::string()) + compact(*e);
        text += i + 1 < v.size() ? ",\n" : "\n";
      }
      text += v.is_array() ? "  ]" : "  }";
    } else {
      text += compact(v);
    }
    text += field + 1 < doc.size() ? ",\n" : "\n";
  }
  return text + "}\n";
}

HostTopology loadTopologyFile(const std::string& path) {
  const std::string prefix = "topology file '" + path + "': ";
  std::ifstream in(path, std::ios::binary);
  if (!in) throwInvalidArgument(prefix + "cannot be opened: " + std::strerror(errno));
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxTopologyJsonBytes) {
      throwInvalidArgument(prefix + "is larger than " + std::to_string(kMaxTopologyJsonBytes) + " bytes");
    }
  }
  if (in.bad()) throwInvalidArgument(prefix + "read failed: " + std::strerror(errno));
  try {
    HostTopology t = parseTopologyJson(text);
    return t;
  } catch (const Error& e) {
    std::string what = e.what();
    if (what.rfind(kParsePrefix, 0) == 0) what.erase(0, std::strlen(kParsePrefix));
    throwInvalidArgument(prefix + what);
  }
}

}  // namespace chorus
