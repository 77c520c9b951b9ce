// The rules every HostTopology obeys, whether detected or read from a file.
#pragma once

#include <string>
#include <string_view>

#include "topology/host_topology.h"

namespace chorus {

// Limits on what a topology may hold (bounds for hostile files, far above any real machine).
inline constexpr int kMaxTopologyEntries = 1024;  // packages, NUMA nodes, cache groups, PCI devices each
inline constexpr int kMaxNumaId = 4095;
inline constexpr int kMaxPackageId = 65535;
inline constexpr int kMaxDeviceNames = 16;       // interfaces or RDMA devices of one NIC
inline constexpr size_t kMaxTopologyText = 256;  // source, hostname, device name
inline constexpr uint64_t kMaxMemoryBytes = 1ULL << 60;
inline constexpr uint64_t kMaxCacheBytes = 1ULL << 40;

// Throws chorusInvalidArgument naming the first broken rule as the topology file spells it ("numa[1].cpus: CPU 3
// is also in numa[0]"): at least one package and NUMA node, unique ids, disjoint CPU sets, NUMA nodes covering
// exactly the packages' CPUs, core counts that fit their CPUs and agree between packages and nodes, sane cache
// groups, well-formed unique PCI bus ids whose NUMA node exists, valid link figures. Entries are checked in the
// order they are stored.
void validateHostTopology(const HostTopology& topology);

// `text` as it may appear in an error message: at most maxBytes (then "..."), control and non-ASCII bytes as '?'.
std::string printable(std::string_view text, size_t maxBytes = 64);

// True when `busId` is "dddd:bb:dd.f" in lowercase hex (domain 4-8 digits).
bool isPciBusId(const std::string& busId);

}  // namespace chorus
