// Fuzzes the topology file parser (CHORUS_TOPO_FILE): hostile text must be refused with a chorus::Error, never
// crash or hang; what parses must print back to JSON that parses to an equal topology.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/error.h"
#include "topology/topology_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  chorus::HostTopology topology;
  try {
    topology = chorus::parseTopologyJson(text);
  } catch (const chorus::Error&) {
    return 0;
  }
  if (chorus::parseTopologyJson(chorus::topologyToJson(topology)) != topology) std::abort();
  return 0;
}
