#include "perf/chorus_topo/topo_options.h"

#include <cerrno>
#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "algorithms/selection/algo_rules.h"
#include "core/error.h"
#include "core/params.h"

namespace chorus::topo {

namespace {

constexpr int kMaxRanks = 1 << 20;

bool parseCount(const std::string& text, int* out) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || v < 1 || v > kMaxRanks) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

std::string topoUsage() {
  return "usage: chorus-topo [--ranks N] [--hosts H] [--file F] [--dump F] [--json]\n"
         "       chorus-topo --predict CLUSTER [--ranks N] [--collective C,...|all] [--sizes S,...] [--json]\n"
         "\n"
         "Prints this host's topology as Chorus sees it (packages, NUMA nodes, cores, memory, caches, GPUs and\n"
         "NICs with their NUMA node), the world of N ranks on H hosts like this one (contiguous blocks, as\n"
         "chorusrun --hosts splits them), the link classes with their latency and bandwidth, and the algorithm\n"
         "chosen for each collective and size.\n"
         "\n"
         "  --ranks N   world size (default: one rank per core, times H)\n"
         "  --hosts H   number of hosts, each like this one (default 1)\n"
         "  --file F    read the host from topology file F instead of detecting (default: CHORUS_TOPO_FILE)\n"
         "  --dump F    write the host's topology to F as JSON (the format --file and CHORUS_TOPO_FILE read)\n"
         "  --json      print the host's topology as JSON and nothing else\n"
         "\n"
         "  --predict CLUSTER  the cost model's predicted time and busbw of every algorithm, and the one the\n"
         "              selector picks, for a cluster description (JSON, format chorus-cluster/1: see\n"
         "              perf/chorus_topo/cluster_file.h) at 8 to 16384 ranks (--ranks N: that size only)\n"
         "  --collective C,...  with --predict: allreduce (default), broadcast, reduce, allgather, reducescatter,\n"
         "              alltoall, gather, scatter, barrier, or all\n"
         "  --sizes S,...  with --predict: message sizes (8, 64K, 1M; default 8 B to 1 GiB, x8)\n"
         "  --json      with --predict: the predictions as one JSON document\n"
         "  -h, --help  print this help\n";
}

TopoOptions parseTopoOptions(int argc, const char* const* argv) {
  TopoOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    // "--opt value" or "--opt=value".
    auto value = [&](std::string_view name, std::string* out) {
      if (arg.size() > name.size() && arg[name.size()] == '=') {
        *out = std::string(arg.substr(name.size() + 1));
        return true;
      }
      if (arg != name || i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    auto is = [&](std::string_view name) { return arg == name || arg.rfind(std::string(name) + "=", 0) == 0; };
    std::string v;
    if (arg == "-h" || arg == "--help") {
      o.showHelp = true;
      return o;
    } else if (arg == "--json") {
      o.json = true;
    } else if (is("--ranks")) {
      if (!value("--ranks", &v) || !parseCount(v, &o.ranks)) {
        o.error = "--ranks needs a number of ranks in 1.." + std::to_string(kMaxRanks) + ", got '" + v + "'";
        return o;
      }
    } else if (is("--hosts")) {
      if (!value("--hosts", &v) || !parseCount(v, &o.hosts)) {
        o.error = "--hosts needs a number of hosts in 1.." + std::to_string(kMaxRanks) + ", got '" + v + "'";
        return o;
      }
    } else if (is("--file")) {
      if (!value("--file", &o.file) || o.file.empty()) {
        o.error = "--file needs a path";
        return o;
      }
    } else if (is("--predict")) {
      if (!value("--predict", &o.predictPath) || o.predictPath.empty()) {
        o.error = "--predict needs a cluster file";
        return o;
      }
    } else if (is("--collective")) {
      if (!value("--collective", &v) || v.empty()) {
        o.error = "--collective needs a name (allreduce, ... or all)";
        return o;
      }
      if (v == "all") {
        o.predict.collectives = {Collective::kAllReduce, Collective::kBroadcast, Collective::kReduce,
                                 Collective::kAllGather, Collective::kReduceScatter, Collective::kAllToAll,
                                 Collective::kGather, Collective::kScatter, Collective::kBarrier};
        continue;
      }
      for (size_t start = 0; start <= v.size();) {
        const size_t end = std::min(v.find(',', start), v.size());
        auto c = collectiveNamed(std::string_view(v).substr(start, end - start));
        if (!c) {
          o.error = "--collective: unknown collective '" + v.substr(start, end - start) + "'";
          return o;
        }
        o.predict.collectives.push_back(*c);
        start = end + 1;
      }
    } else if (is("--sizes")) {
      if (!value("--sizes", &v) || v.empty()) {
        o.error = "--sizes needs a comma list of sizes (8,64K,1M)";
        return o;
      }
      try {
        for (size_t start = 0; start <= v.size();) {
          const size_t end = std::min(v.find(',', start), v.size());
          o.predict.sizes.push_back(
              static_cast<size_t>(params::asBytes("--sizes", v.substr(start, end - start), 1, 1LL << 40)));
          start = end + 1;
        }
      } catch (const Error& e) {
        o.error = e.what();
        return o;
      }
    } else if (is("--dump")) {
      if (!value("--dump", &o.dumpPath) || o.dumpPath.empty()) {
        o.error = "--dump needs a path";
        return o;
      }
    } else {
      o.error = "unknown argument '" + std::string(arg) + "'";
      return o;
    }
  }
  if (o.predictPath.empty() && (!o.predict.collectives.empty() || !o.predict.sizes.empty())) {
    o.error = "--collective and --sizes go with --predict";
    return o;
  }
  if (!o.predictPath.empty() && o.ranks > 0) o.predict.ranks = {o.ranks};
  o.predict.json = o.json;
  if (o.ranks > 0 && o.hosts > o.ranks) {
    o.error =
        "--hosts " + std::to_string(o.hosts) + " needs at least as many ranks, got --ranks " + std::to_string(o.ranks);
  }
  return o;
}

}  // namespace chorus::topo
