// How ranks are connected, by class of link, and what each class costs (alpha-beta: latency + bytes/bandwidth).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace chorus {

// The kinds of link between two ranks that the cost model tells apart.
enum class LinkClass { kSameNuma, kCrossNuma, kNetwork, kCudaIpc, kRdma };

inline constexpr int kLinkClassCount = 5;
inline constexpr std::array<LinkClass, kLinkClassCount> kAllLinkClasses = {
    LinkClass::kSameNuma, LinkClass::kCrossNuma, LinkClass::kNetwork, LinkClass::kCudaIpc, LinkClass::kRdma};

// "same_numa", "cross_numa", "network", "cuda_ipc", "rdma" (the names the topology file and chorus-topo use).
const char* linkClassName(LinkClass c);
// The class called `name`; nullopt for any other string.
std::optional<LinkClass> linkClassFromName(std::string_view name);

struct LinkParams {
  double latencyUs = 0;     // one-way time of a tiny message
  double bandwidthGBs = 0;  // sustained one-way bandwidth of a large message, 1e9 bytes/s
  // A token-bucket link (a tbf-shaped one, a cloud NIC with a burst allowance): up to burstBytes at a time pass at
  // peakGBs while the bucket is full, which refills at bandwidthGBs. 0: none.
  double burstBytes = 0;
  double peakGBs = 0;
  // Messages longer than one frame (frameBytes of payload: 1448 for TCP at a 1500-byte MTU) cost multiFrameUs more
  // than the latency where ranks exchange them (likely: the receiving kernel acknowledges them at once rather than
  // with the reply; the topology lab measures it: docs/cost_model.md, "Messages longer than one frame"). 0: not
  // modelled.
  double frameBytes = 0;
  double multiFrameUs = 0;
  // A one-way message's time per call when calls come back to back (a 2-rank chain broadcast, measured), which a
  // streamed chain's first hop costs in place of kChainFirstHop of the latency (docs/cost_model.md, "Streamed
  // chains"). 0: not measured.
  double chainUs = 0;
  bool operator==(const LinkParams&) const = default;
};

// Racks: hosts in contiguous blocks of hostsPerRack (by host order, as ranks are numbered) reach the other racks
// through one uplink of uplinkGBs each. hostsPerRack 0: one switch, no uplink to share.
struct RackFabric {
  int hostsPerRack = 0;
  double uplinkGBs = 0;
  bool operator==(const RackFabric&) const = default;
};

// Where a class's figures came from.
enum class LinkSource { kDefault, kFile, kProbe };
// "default", "file", "probe".
const char* linkSourceName(LinkSource s);

// Latency and bandwidth per link class. The defaults are the figures documented in link_model.cc; the topology
// file and the probe replace them class by class. Copies are cheap and equal models compare equal.
class LinkModel {
 public:
  // Every class at its default.
  LinkModel();

  const LinkParams& params(LinkClass c) const { return params_[index(c)]; }
  LinkSource source(LinkClass c) const { return sources_[index(c)]; }
  // Replaces the figures of one class. Throws chorusInvalidArgument unless both are finite, latency >= 0 and
  // bandwidth > 0.
  void set(LinkClass c, LinkParams p, LinkSource from);
  // Predicted one-way time of `bytes` over one link of class c: latency + bytes / bandwidth, in microseconds.
  double transferUs(LinkClass c, size_t bytes) const;
  // The network's racks (a topology file's "fabric"); one switch unless set.
  const RackFabric& fabric() const { return fabric_; }
  // Throws chorusInvalidArgument unless hostsPerRack >= 0 and, with racks, the uplink is finite and > 0.
  void setFabric(RackFabric f);
  // What a step waits for the scheduler per oversubscription of the cores (a topology file's "scheduler"); 0: the
  // cost model's own figure. Throws chorusInvalidArgument unless finite and >= 0.
  double contextSwitchUs() const { return contextSwitchUs_; }
  void setContextSwitchUs(double us);

  bool operator==(const LinkModel&) const = default;

 private:
  static size_t index(LinkClass c) { return static_cast<size_t>(c); }
  std::array<LinkParams, kLinkClassCount> params_;
  std::array<LinkSource, kLinkClassCount> sources_;
  RackFabric fabric_;
  double contextSwitchUs_ = 0;
};

// The default figures of class c (see link_model.cc for where they come from).
LinkParams defaultLinkParams(LinkClass c);

}  // namespace chorus
