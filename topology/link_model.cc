#include "topology/link_model.h"

#include <cmath>

#include "core/error.h"

namespace chorus {

const char* linkClassName(LinkClass c) {
  switch (c) {
    case LinkClass::kSameNuma:
      return "same_numa";
    case LinkClass::kCrossNuma:
      return "cross_numa";
    case LinkClass::kNetwork:
      return "network";
    case LinkClass::kCudaIpc:
      return "cuda_ipc";
    case LinkClass::kRdma:
      return "rdma";
  }
  return "unknown";
}

std::optional<LinkClass> linkClassFromName(std::string_view name) {
  for (LinkClass c : kAllLinkClasses) {
    if (name == linkClassName(c)) return c;
  }
  return std::nullopt;
}

const char* linkSourceName(LinkSource s) {
  switch (s) {
    case LinkSource::kDefault:
      return "default";
    case LinkSource::kFile:
      return "file";
    case LinkSource::kProbe:
      return "probe";
  }
  return "unknown";
}

// Where the defaults come from (one-way latency of a tiny message, large-message bandwidth):
// - same_numa 0.5 us / 10 GB/s: a shared-memory ring within one NUMA node. Open MPI's vader measures 0.5 us and
//   5-7 GB/s allreduce busbw on this project's 2-core VM (perf/results/peers.md); a copy through a shared buffer on a
//   current server socket runs at ~10 GB/s per pair.
// - cross_numa 0.8 us / 6 GB/s: the same through the socket interconnect (UPI/Infinity Fabric): one more hop,
//   ~60% of the local copy bandwidth (STREAM-style remote/local ratios on 2-socket x86).
// - network 15 us / 2 GB/s: TCP. Chorus's own TCP measures 9.9 us per 8-byte exchange and ~2 GB/s on loopback
//   (perf/results/peers.md); between hosts a NIC and a switch add a few microseconds (25 GbE: ~3 GB/s line rate).
// - rdma 2 us / 12 GB/s: verbs over 100 Gb/s InfiniBand/RoCE (ib_write_lat ~1-2 us, ib_write_bw ~12 GB/s).
// - cuda_ipc 3 us / 100 GB/s: GPU to GPU on one host over NVLink through CUDA IPC handles (cudaMemcpy launch
//   ~3 us; NVLink 3/4 gives 100+ GB/s per direction, PCIe 4 x16 ~25 GB/s when there is no NVLink).
LinkParams defaultLinkParams(LinkClass c) {
  switch (c) {
    case LinkClass::kSameNuma:
      return {0.5, 10.0};
    case LinkClass::kCrossNuma:
      return {0.8, 6.0};
    case LinkClass::kNetwork:
      return {15.0, 2.0};
    case LinkClass::kCudaIpc:
      return {3.0, 100.0};
    case LinkClass::kRdma:
      return {2.0, 12.0};
  }
  return {15.0, 2.0};
}

LinkModel::LinkModel() {
  for (LinkClass c : kAllLinkClasses) {
    params_[index(c)] = defaultLinkParams(c);
    sources_[index(c)] = LinkSource::kDefault;
  }
}

void LinkModel::setFabric(RackFabric f) {
  if (f.hostsPerRack < 0 || (f.hostsPerRack > 0 && (!std::isfinite(f.uplinkGBs) || !(f.uplinkGBs > 0)))) {
    throwInvalidArgument("fabric: " + std::to_string(f.hostsPerRack) + " hosts per rack with an uplink of " +
                         std::to_string(f.uplinkGBs) + " GB/s (needs hosts per rack >= 0 and an uplink > 0)");
  }
  fabric_ = f;
}

void LinkModel::setContextSwitchUs(double us) {
  if (!std::isfinite(us) || us < 0) {
    throwInvalidArgument("scheduler: a context switch of " + std::to_string(us) + " us (needs a finite figure >= 0)");
  }
  contextSwitchUs_ = us;
}

void LinkModel::set(LinkClass c, LinkParams p, LinkSource from) {
  if (!std::isfinite(p.latencyUs) || p.latencyUs < 0 || !std::isfinite(p.bandwidthGBs) || !(p.bandwidthGBs > 0)) {
    throwInvalidArgument(std::string("link ") + linkClassName(c) + ": latency " + std::to_string(p.latencyUs) +
                         " us and bandwidth " + std::to_string(p.bandwidthGBs) +
                         " GB/s must be finite, latency >= 0 and bandwidth > 0");
  }
  params_[index(c)] = p;
  sources_[index(c)] = from;
}

double LinkModel::transferUs(LinkClass c, size_t bytes) const {
  const LinkParams& p = params(c);
  // GB/s = 1e9 bytes/s = 1e3 bytes/us.
  return p.latencyUs + static_cast<double>(bytes) / (p.bandwidthGBs * 1e3);
}

}  // namespace chorus
