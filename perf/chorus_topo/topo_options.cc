#include "perf/chorus_topo/topo_options.h"

#include <cerrno>
#include <cstdlib>
#include <string_view>

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
  if (o.ranks > 0 && o.hosts > o.ranks) {
    o.error =
        "--hosts " + std::to_string(o.hosts) + " needs at least as many ranks, got --ranks " + std::to_string(o.ranks);
  }
  return o;
}

}  // namespace chorus::topo
