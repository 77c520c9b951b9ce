// The topology file (CHORUS_TOPO_FILE, chorus-topo --dump): one host described in JSON, format
// "chorus-topology/1". Example files: tests/data/topology/. Field by field:
//   format    "chorus-topology/1" (required)
//   source, hostname  informational strings (optional)
//   packages  [{"id": 0, "cpus": "0-7,16-23", "cores": 8}]               (required, at least one)
//   numa      [{"id": 0, "cpus": "0-7", "cores": 4, "memory_bytes": N}]  (required, at least one)
//   caches    [{"level": 3, "size_bytes": 33554432, "count": 2}]          (optional)
//   pci       [{"kind": "gpu"|"nic", "bus_id": "0000:3b:00.0", "numa": 0 (-1 unknown), "vendor_id": "10de",
//               "device_id": "2330", "name": "...", "interfaces": ["eth0"], "rdma": ["mlx5_0"]}]  (optional)
//   links     {"network": {"latency_us": 12, "bandwidth_gbs": 3}, ...}  overrides per link class (optional); a shaped
//             link adds "burst_bytes" and "peak_gbs" (a token bucket, passed at the peak rate while full); a link
//             whose messages longer than one frame cost more adds "frame_bytes" and "multi_frame_us"; a measured
//             chain's time per call back to back, "chain_us"
#pragma once

#include <string>
#include <string_view>

#include "topology/host_topology.h"

namespace chorus {

inline constexpr std::string_view kTopologyFormat = "chorus-topology/1";
// Larger input is refused before parsing.
inline constexpr size_t kMaxTopologyJsonBytes = 1 << 20;

// Parses a topology description. Safe on hostile input: never crashes, bounded memory and time; throws
// chorusInvalidArgument "topology JSON: <field>: <what is wrong>" on malformed, oversized, unknown-field or
// inconsistent input (the rules of validateHostTopology). Entries come back sorted (ids, levels, bus ids).
HostTopology parseTopologyJson(std::string_view text);

// The JSON text (indented, newline-terminated) of a valid topology; parseTopologyJson gives back an equal one.
std::string topologyToJson(const HostTopology& topology);

// Reads and parses `path`; errors name the file ("topology file '/x.json': numa[0].cpus: ...").
HostTopology loadTopologyFile(const std::string& path);

}  // namespace chorus
