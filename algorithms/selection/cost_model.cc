#include "algorithms/selection/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "algorithms/algorithm_registry.h"
#include "algorithms/selection/call_planner.h"

namespace chorus {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMinCores = 1e-3;  // a host's share of the cores is never taken below this
// What a chain costs per call when calls come back to back (as in training loops and every benchmark), as fractions
// of a message's latency: the root moves on once its message is sent and every rank relays as its message comes, so
// the calls stream down the chain and its length is paid about once per run, not per call. Each hop past the first
// still costs a little (kChainHopHidden), so that a single call along a chain of thousands of ranks still loses to a
// tree's log p. Figures: docs/cost_model.md, "Streamed chains".
constexpr double kChainFirstHop = 0.8, kChainHopHidden = 0.02;

// The cost model's inputs, and whether a call is priced for its latency or for its bound by the network's rate when
// calls come back to back (predictUs): then a pipeline's fill through its hops overlaps the previous call's drain.
struct Inputs : CostInputs {
  bool rateBound = false;
};

// The inputs with the network's per-message costs left out (latency, a second frame's, a chain's hop): what crossing
// it costs in bytes alone.
Inputs bytesOnly(Inputs in) {
  in.interHost.latencyUs = 0;
  in.interHost.multiFrameUs = 0;
  in.interHost.chainUs = 0;
  return in;
}

// One link as the formulas use it: alpha in us, beta and gamma in us per byte; waitUs the part of alpha that is the
// scheduler's (crowded cores), which calls streamed back to back do not pay per call; coreShare the host's cores
// where it has less than one (emulated hosts sharing a machine's cores).
struct Link {
  double alpha, beta, gamma;
  double waitUs = 0;
  double coreShare = 1;
  bool rateBound = false;  // Inputs::rateBound
  double frameBytes = 0, multiFrameUs = 0;  // LinkCost's
  double chainUs = 0;                       // LinkCost's; asStreamed scales it as alpha
  // beta's two parts across hosts: the wire's (what flows sharing a link divide) and the cores' (what the host's
  // share of its cores pushes, each rank its own bytes); beta is the larger. 0 inside a host.
  double wireBeta = 0, coresBeta = 0;
};

// A message's latency: alpha, and LinkCost::multiFrameUs more when it does not fit one frame (where ranks exchange
// messages, one just longer than a frame costs more than one just shorter: docs/cost_model.md, "Messages longer
// than one frame").
double alphaOf(const Link& l, double bytes) {
  return l.alpha + (l.frameBytes > 0 && bytes > l.frameBytes ? l.multiFrameUs : 0);
}

// The latencies of the steps of a halving (or doubling) over 2^lg ranks: messages of n/2, n/4, ..., n/2^lg.
double halvingAlphas(const Link& l, double n, int lg) {
  double t = 0;
  for (int i = 1; i <= lg; ++i) t += alphaOf(l, n / (1 << i));
  return t;
}

// The link as calls streamed back to back see it: no wait for the scheduler (a rank woken for one call finds the
// next ones queued), but each host's part of every call done on its share of a core, so a host with half a core
// relays at half the pace (docs/cost_model.md, "Calls back to back").
Link asStreamed(Link l) {
  l.alpha = (l.alpha - l.waitUs) / l.coreShare;
  l.multiFrameUs /= l.coreShare;
  l.chainUs /= l.coreShare;
  l.waitUs = 0;
  return l;
}

int floorLog2(int p) {
  int l = 0;
  while ((2 << l) <= p) ++l;
  return l;
}

int ceilLog2(int p) {
  int l = 0;
  while ((1 << l) < p) ++l;
  return l;
}

// How many times `ranksPerHost` ranks outnumber their host's cores (1: not at all).
double crowding(const CostInputs& in, int ranksPerHost) {
  return std::max(1.0, ranksPerHost / std::max(kMinCores, in.coresPerHost));
}

// The link a flat algorithm over `p` ranks is paced by: the network as soon as it spans hosts. With more ranks
// than cores on a host, every step also waits for the scheduler, and copies and reductions share the cores.
// coresPerByte: what the algorithm's flows cost the cores per byte over TCP, relative to one flow each way between
// two ranks (coresPerByte, below); it counts where the cores set the pace: TCP inside a host, and a shaped link's
// cores' part.
Link linkFor(const Inputs& in, bool acrossHosts, int ranksPerHost, double coresPerByte = 1) {
  const LinkCost& c = acrossHosts ? in.interHost : in.intraHost;
  const double share = crowding(in, ranksPerHost);
  // Bound by the network's rate, a step across hosts waits for the wire, not for the scheduler.
  const double oversub = in.rateBound && acrossHosts ? 0 : std::max(0.0, share - 1) * in.contextSwitchUs;
  const double wire = 1e-3 / c.bandwidthGBs;
  // A shaped link (a token bucket, whose unshaped rate peakGBs was measured) paces a flow by the slower of its rate
  // and what the host's share of the cores pushes at the unshaped rate: the wire does not slow down because the cores
  // are crowded (at 2x2 in the lab, one core per host, a 16 MiB chain reduce runs at the link's rate). Unshaped, the
  // link's rate is taken to be the cores' own, as for TCP on loopback.
  const bool shaped = acrossHosts && c.peakGBs > c.bandwidthGBs;
  const double cores = shaped ? share * coresPerByte * 1e-3 / c.peakGBs
                              : share * wire * (!acrossHosts && !in.intraHostMemory ? coresPerByte : 1);
  const double beta = std::max(wire, cores);
  return Link{c.latencyUs + oversub,
              beta,
              share * 1e-3 / in.reduceGBs,
              oversub,
              std::min(1.0, std::max(kMinCores, in.coresPerHost)),
              in.rateBound,
              c.frameBytes,
              c.multiFrameUs,
              c.chainUs,
              acrossHosts ? wire : 0,
              acrossHosts ? cores : 0};
}

// n bytes cut into slices of at most `slice`: the size of one and how many (at least one).
struct Slices {
  double bytes, count;
};
Slices slicesOf(double n, size_t slice) {
  const double s = std::min<double>(n, static_cast<double>(slice));
  return {s, std::max(1.0, std::ceil(n / std::max(1.0, s)))};
}

// Pipelined through `hops` hops in slices: the first slice pays every hop, the rest stream behind it. Its bound by
// the rate (Link::rateBound) is its slices' passage over one link: back to back, the fill overlaps a drain.
// fillHidden: hops of the bytes' fill that calls back to back hide (every hop's latency is still paid).
double pipelined(double n, int hops, double perByte, const Link& l, size_t slice, double fillHidden = 0) {
  if (hops <= 0) return 0;
  const Slices s = slicesOf(n, slice);
  const double latencyHops = l.rateBound ? 1 : hops;
  const double fillHops = l.rateBound ? 1 : std::max(1.0, hops - fillHidden);
  return (latencyHops + s.count - 1) * alphaOf(l, s.bytes) + (fillHops + s.count - 1) * s.bytes * perByte;
}

// A tree's calls back to back hide half a hop of the bytes' fill (pipelined's fillHidden): a call's fill partly
// overlaps the previous call's drain, measured between no fill and the whole fill through both levels of a two-level
// tree. Deeper trees were not measured: they hide no more here. Figures: docs/cost_model.md, "Streamed trees".
constexpr double kStreamedTreeFillHidden = 0.5;

// Flat algorithms spanning hosts (ranks in host blocks of k): the per-flow link of a step between ranks `distance`
// apart. Inside a host below k; past it every rank of a host sends across at once, so its k flows share the
// host's network link (the wire's part of beta); past a rack, all of the rack's ranks share its uplink when that is
// the narrower. The cores' part is already each rank's on its share of the cores: the flows do not divide it again
// (2 hosts x 2 ranks on one core each, within the burst: 16 KiB recursive doubling 33-37 us, priced 72 with both).
Link stepLink(const Inputs& in, int distance) {
  const int k = std::max(1, in.maxRanksPerHost);
  if (distance < k) return linkFor(in, false, k);
  Link l = linkFor(in, true, k);
  double flowShare = k;
  if (in.hostsPerRack > 0 && in.rackUplinkGBs > 0 && distance >= k * in.hostsPerRack) {
    flowShare = std::max(flowShare, k * in.hostsPerRack * in.interHost.bandwidthGBs / in.rackUplinkGBs);
  }
  l.beta = std::max(l.wireBeta * flowShare, l.coresBeta);
  return l;
}

// Halving-doubling and recursive doubling across hosts, step by step (their partners are 2^i ranks apart, so the
// near steps stay inside a host and the far ones share its link). Halving-doubling moves distance * n / p bytes
// at each distance, recursive doubling all n at each; the non-power-of-two fold is a distance-1 exchange.
// A step's message sent whole, not in slices, crosses a network link about 10% slower than a sliced pipeline's
// stream (nothing overlaps its copies and reductions with the wire). Where hosts have less than a core each, every
// step across pays it whatever its size, back to back past the burst: a dependent step waits on a partner that waits
// on another, while ring's pipeline keeps every rank fed. Neither holds for a call that the runner cuts into pieces
// of a slice or two (segmentBytesFor: an allreduce over the network, larger than a piece), whose ring is cut alike.
// Figures: docs/cost_model.md, "Across hosts, step by step".
constexpr double kUnslicedAcrossHosts = 1.1;

// The binomial scatter that opens a halving-doubling broadcast. A holder of m posts all its blocks at once (m/2 to
// the farthest partner, m/4 to the next, ...), and the kernel's socket buffers take them all, so the blocks that
// leave on one link share it: the farthest, which its receiver relays on, arrives only when all of them have. Its
// receiver then does the same with m/2 (at 4 hosts x 1 the scatter takes 1.16x the root's link time for n, not
// (p-1)/p of it: docs/cost_model.md, "Across hosts, step by step"). At 2 hosts x 2 the far block has the network link
// to itself and the near ones go over shared memory.
double scatterRelay(double n, int p2, const Inputs& in) {
  const int k = std::max(1, in.maxRanksPerHost);
  const double acrossBeta = linkFor(in, true, k).beta, withinBeta = linkFor(in, false, k).beta;
  double t = 0, m = n;
  for (int top = p2 / 2; top >= 1; top /= 2, m /= 2) {
    const bool across = top >= k;
    double sameLink = 0;  // what leaves on the farthest block's link, the farthest block included
    for (int d = top; d >= 1; d /= 2) {
      if ((d >= k) == across) sameLink += m * d / (2.0 * top);
    }
    t += sameLink * (across ? acrossBeta : withinBeta);
  }
  return t;
}

// A message of m bytes sent one way by a rank that goes on once it is sent, in calls back to back: a chain's first
// hop (flatRooted), not a latency. A rooted halving-doubling's one-way steps across hosts (a broadcast's scatter, a
// reduce's gather) are such hops, but only with one rank per host: where a host has more, their steps inside it share
// its cores and each pays a latency. Figures: docs/cost_model.md, "Across hosts, step by step".
double streamedHopUs(const Link& l, double m) {
  const Link s = asStreamed(l);
  const double alpha = alphaOf(s, m);
  return s.chainUs > 0 ? s.chainUs + (alpha - s.alpha) : kChainFirstHop * alpha;
}

double acrossHostsDoubling(Collective c, AlgorithmId a, double n, const Inputs& in) {
  const int p = in.nranks;
  const int p2 = 1 << floorLog2(p);
  const bool reduce = c != Collective::kAllGather && c != Collective::kBroadcast;
  const Link near = stepLink(in, 1);
  const Link one = linkFor(in, true, std::max(1, in.maxRanksPerHost));  // a single flow across: the root's
  const size_t piece = segmentBytesFor(c, a, p, in.sliceBytes, /*overNetwork=*/true);
  const bool inPieces = piece > 0 && n > static_cast<double>(piece);
  double t = 0;
  for (int d = p2 / 2; d >= 1; d /= 2) {
    const double m = a == AlgorithmId::kRecursiveDoubling ? n : n * d / p2;
    Link s = stepLink(in, d);
    const bool onAFractionOfACore = s.coreShare < 1 && !in.rateBound;  // priced past the burst
    if (!inPieces && d >= in.maxRanksPerHost && (m > static_cast<double>(in.sliceBytes) || onAFractionOfACore)) {
      s.beta *= kUnslicedAcrossHosts;
    }
    const double g = reduce ? s.gamma : 0;
    const double alpha = alphaOf(s, m);
    const double oneWay = in.maxRanksPerHost == 1 ? streamedHopUs(s, m) : alpha;
    if (a == AlgorithmId::kRecursiveDoubling) {
      t += alpha + m * (s.beta + s.gamma);
    } else if (c == Collective::kAllReduce) {
      t += 2 * alpha + m * (2 * s.beta + s.gamma);  // halving, then the mirrored doubling step
    } else if (c == Collective::kBroadcast) {
      t += alpha + oneWay + m * s.beta;  // the doubling allgather's step (its scatter: scatterRelay, below)
    } else if (c == Collective::kReduce) {
      // All ranks exchange one way; the root alone the other, over the network only where the step crosses hosts
      // (at 2x2 the near step's block stays inside the host).
      const double toRoot = d >= in.maxRanksPerHost ? one.beta : near.beta;
      t += alpha + oneWay + m * (s.beta + g) + m * toRoot;
    } else {
      t += alpha + m * (s.beta + g);  // reduce-scatter or allgather: one pass
    }
  }
  if (c == Collective::kBroadcast) t += scatterRelay(n, p2, in);
  if (p2 != p) {
    const bool blocks = c == Collective::kAllGather || c == Collective::kReduceScatter;
    t += blocks ? alphaOf(near, n / p) + n / p * near.beta
                : 2 * (alphaOf(near, n) + n * near.beta) + (reduce ? n * near.gamma : 0);
  }
  return t;
}

// A ring allreduce's and a tree allreduce's flows run one way: each rank sends to its next rank (its parent, its
// children) on one connection and receives from another, where an exchange (halving-doubling, recursive doubling)
// sends and receives on one. Over TCP one-way flows cost the cores more per byte moved: at 16 MiB over 4 ranks the
// ring and the tree took 1.3-1.45x halving-doubling's CPU time on loopback, the ring 1.25x between 4 emulated hosts
// (/proc/stat), the extra in the sender's transmit path; the segment counts are the same. With 2 ranks both are one
// connection, used both ways. Figures: docs/cost_model.md, "One-way flows over TCP".
constexpr double kOneWayFlowsCores = 1.25;

double coresPerByte(Collective c, AlgorithmId a, const Inputs& in) {
  const bool oneWay = a == AlgorithmId::kRing || a == AlgorithmId::kTree;
  return c == Collective::kAllReduce && oneWay && in.nranks > 2 ? kOneWayFlowsCores : 1;
}

// The double binary tree's allreduce across hosts: every rank is interior in at most one tree, so in each phase a
// link carries about `children` halves each way and the two trees overlap; what remains is that bandwidth bound
// and one message per tree edge, up and down (one tree's pipeline would price it 2-3x over).
// With one rank per host, an interior rank's own link carries all it relays: its children's slices in and the
// partial sum out going up, its parent's slices in and its children's out coming down, both trees' flows at once.
// Once the trees pipeline more than one slice each, that link runs at about 1/1.22 of its rate (not the hosts' half
// core, nor loss). Figures: docs/cost_model.md, "The double tree across hosts".
constexpr double kRelayedTreeLink = 1.22;

double acrossHostsTree(double n, const Inputs& in) {
  const int p = in.nranks;
  Link l = linkFor(in, true, in.maxRanksPerHost, coresPerByte(Collective::kAllReduce, AlgorithmId::kTree, in));
  if (in.maxRanksPerHost == 1 && p > 2 && !in.rateBound && n / 2 > static_cast<double>(in.sliceBytes)) {
    l.beta *= kRelayedTreeLink;
  }
  const double children = std::min(2, p - 1);
  // The trees' messages overlap where each rank has a core. On crowded cores they take turns, and the call pays the
  // depth of the double tree up and down, as within a host.
  const int steps = l.waitUs > 0 ? 2 * ceilLog2(p + 1) : 2 * floorLog2(p);
  return steps * alphaOf(l, std::min<double>(n / 2, static_cast<double>(in.sliceBytes))) + children * n * l.beta +
         n * l.gamma;
}

bool steppedAcrossHosts(Collective c, AlgorithmId a) {
  if (a != AlgorithmId::kHalvingDoubling && a != AlgorithmId::kRecursiveDoubling) return false;
  if (a == AlgorithmId::kRecursiveDoubling) return c == Collective::kAllReduce;
  return c == Collective::kAllReduce || c == Collective::kReduceScatter || c == Collective::kAllGather ||
         c == Collective::kBroadcast || c == Collective::kReduce;
}

// Corrections measured within one host over shared memory, where the formulas' byte counts miss how memory is
// touched (NCCL's treeCorrectionFactor plays this role): docs/cost_model.md, "Corrections within one host".
constexpr double kCachedReduceIntraHost = 0.25;     // gamma below kCachedBytes
// TCP between ranks of one host (loopback) is two copies through the kernel per byte: up to 128 KiB they run from
// cache, at about half the per-byte cost of the large messages that the network's figures come from.
constexpr double kCachedLoopbackCopy = 0.5;  // beta below kCachedLoopbackBytes, with gamma as kCachedReduceIntraHost
constexpr double kHalvingDoublingIntraHost = 1.15;  // its per-byte cost from kHalvingDoublingLargeBytes up
constexpr double kCachedBytes = 128.0 * 1024;
constexpr double kCachedLoopbackBytes = 256.0 * 1024;
constexpr double kHalvingDoublingLargeBytes = 4.0 * 1024 * 1024;

Link scaledBandwidth(Link l, double factor) {
  l.beta *= factor;
  l.gamma *= factor;
  return l;
}

// Where a flat collective's ranks are: on several hosts, on one host over shared memory, or on one host over TCP.
enum class Reach { kHosts, kSharedMemory, kLoopback };

Reach insideHost(const CostInputs& in) { return in.intraHostMemory ? Reach::kSharedMemory : Reach::kLoopback; }

double flatAllReduce(AlgorithmId a, double n, int p, const Link& l, size_t slice, Reach reach) {
  if (p == 1) return 0;
  const bool loopback = reach == Reach::kLoopback;
  if ((reach == Reach::kSharedMemory && n < kCachedBytes) || (loopback && n < kCachedLoopbackBytes)) {
    Link cached = l;
    cached.gamma *= kCachedReduceIntraHost;
    if (loopback) cached.beta *= kCachedLoopbackCopy;
    return flatAllReduce(a, n, p, cached, slice, Reach::kHosts);
  }
  const bool intraHost = reach == Reach::kSharedMemory;
  if (intraHost && a == AlgorithmId::kHalvingDoubling && n >= kHalvingDoublingLargeBytes) {
    return flatAllReduce(a, n, p, scaledBandwidth(l, kHalvingDoublingIntraHost), slice, Reach::kHosts);
  }
  const int lg = floorLog2(p);
  const double p2 = static_cast<double>(1 << lg);
  const bool pow2 = (1 << lg) == p;
  const double fix = pow2 ? 0 : 2 * (alphaOf(l, n) + n * l.beta) + n * l.gamma;
  if (a == AlgorithmId::kRing) {
    return 2 * (p - 1) * alphaOf(l, n / p) + 2.0 * (p - 1) / p * n * l.beta + (p - 1.0) / p * n * l.gamma;
  }
  if (a == AlgorithmId::kRecursiveDoubling) return lg * (alphaOf(l, n) + n * (l.beta + l.gamma)) + fix;
  if (a == AlgorithmId::kHalvingDoubling) {
    return 2 * halvingAlphas(l, n, lg) + 2 * (p2 - 1) / p2 * n * l.beta + (p2 - 1) / p2 * n * l.gamma + fix;
  }
  if (a == AlgorithmId::kTree) {
    // Two trees, each half the data, up then down; an interior rank handles two children per slice (one when
    // there are only two ranks).
    const int depth = ceilLog2(p + 1);
    const double children = std::min(2, p - 1);
    return pipelined(n / 2, depth, children * l.beta + l.gamma, l, slice) +
           pipelined(n / 2, depth, children * l.beta, l, slice);
  }
  return kInf;
}

// streamed: the call is one of many back to back (the collective the caller asked for); not streamed: a phase that
// the rest of its call waits for (a two-level allreduce's reduce and broadcast inside each host), whose chain is paid
// hop by hop.
double flatRooted(AlgorithmId a, bool reduce, double n, int p, const Link& l, size_t slice, bool streamed) {
  if (p == 1) return 0;
  const double g = reduce ? l.gamma : 0;
  const int lg = ceilLog2(p);
  if (!streamed && a == AlgorithmId::kChain) return pipelined(n, p - 1, l.beta + g, l, slice);
  // A chain's calls overlap along it when they come back to back (kChainFirstHop above). With two ranks both trees
  // of the double binary tree are the one edge between them: the chain's pattern, in two messages of half the data.
  if (streamed && (a == AlgorithmId::kChain || (a == AlgorithmId::kTree && p == 2))) {
    // Nor do they wait for the scheduler call by call where the cores are crowded: a rank woken for one call finds
    // the next ones queued.
    // The first hop is the link's measured chain time where it has one (LinkCost::chainUs), which follows the
    // machine's state apart from the latency.
    // Back to back, a chain is a pipeline whose stages are the ranks' work and the wire: each slice costs the slower
    // of the two, not their sum. Figures for all of these: docs/cost_model.md, "Streamed chains".
    const Link s = asStreamed(l);
    const Slices piece = slicesOf(n, slice);
    const double alpha = alphaOf(s, piece.bytes);
    const double firstHop = streamedHopUs(l, piece.bytes);
    return piece.count * std::max(firstHop + piece.bytes * g, piece.bytes * s.beta) + kChainHopHidden * (p - 2) * alpha;
  }
  if (a == AlgorithmId::kTree) {
    // Back to back on crowded cores, a tree's broadcast and its reduce alike pay each level at the streamed pace and
    // the scheduler's wait once per call, not once per level: the ranks that go on (a broadcast's root, a reduce's
    // leaves) run ahead, and an interior rank, woken once, finds the next calls' messages queued. Where the hosts
    // have less than a core, the streamed pace (asStreamed) already holds part of that wait, so the call adds only
    // the host's share of it. Figures: docs/cost_model.md, "Streamed trees".
    if (!streamed) return pipelined(n / 2, lg, 2 * l.beta + g, l, slice);
    const double onceACall = l.waitUs * l.coreShare;
    return pipelined(n / 2, lg, 2 * l.beta + g, asStreamed(l), slice, kStreamedTreeFillHidden) + onceACall;
  }
  if (a == AlgorithmId::kHalvingDoubling) {
    // Scatter (or reduce-scatter) then allgather (or gather): 2 log p steps, twice the data once.
    return 2 * halvingAlphas(l, n, lg) + 2.0 * (p - 1) / p * n * l.beta + (p - 1.0) / p * n * g;
  }
  return kInf;
}

double flatBlocks(AlgorithmId a, bool reduce, double n, int p, const Link& l) {
  if (p == 1) return 0;
  const double g = reduce ? l.gamma : 0;
  const double moved = (p - 1.0) / p * n * (l.beta + g);
  if (a == AlgorithmId::kRing) return (p - 1) * alphaOf(l, n / p) + moved;
  if (a == AlgorithmId::kHalvingDoubling) {
    // Blocks of n/p, 2n/p, ..., n/2 (allgather; reduce-scatter the other way round).
    const bool pow2 = (p & (p - 1)) == 0;
    const int lg = ceilLog2(p);
    return halvingAlphas(l, n * (1 << lg) / p, lg) + moved + (pow2 ? 0 : alphaOf(l, n / p) + n / p * l.beta);
  }
  return kInf;
}

// Alltoall(v) of `n` bytes per rank (n / p per peer). Pairwise sends p - 1 messages of n / p; Bruck sends log2 p
// messages of about n / 2 and copies the data twice per step (pack, unpack) plus twice around it (rotations).
double flatAllToAll(AlgorithmId a, double n, int p, const Link& l) {
  if (p == 1) return n * l.gamma;
  if (a == AlgorithmId::kPairwise) return (p - 1) * alphaOf(l, n / p) + (p - 1.0) / p * n * l.beta;
  if (a == AlgorithmId::kBruck) {
    const int lg = ceilLog2(p);
    return lg * (alphaOf(l, n / 2) + n / 2 * (l.beta + 2 * l.gamma)) + 2 * n * l.gamma;
  }
  return kInf;
}

// Gather and scatter of `n` bytes in all (n / p per rank): both move (p - 1) / p of them through the root; direct
// pays a message per rank there, binomial log2 p messages and a staging copy of everything.
double flatGatherScatter(AlgorithmId a, double n, int p, const Link& l) {
  if (p == 1) return 0;
  const double moved = (p - 1.0) / p * n * l.beta;
  if (a == AlgorithmId::kDirect) return (p - 1) * alphaOf(l, n / p) + moved;
  if (a == AlgorithmId::kBinomial) {
    const int lg = ceilLog2(p);
    return halvingAlphas(l, n * (1 << lg) / p, lg) + moved + 2 * n * l.gamma;  // blocks of n/2, n/4, ... at the root
  }
  return kInf;
}

double flat(Collective c, AlgorithmId a, double n, int p, const Link& l, size_t slice, Reach reach,
            bool streamed = true) {
  switch (c) {
    case Collective::kAllReduce:
      return flatAllReduce(a, n, p, l, slice, reach);
    case Collective::kBroadcast: return flatRooted(a, false, n, p, l, slice, streamed);
    case Collective::kReduce: return flatRooted(a, true, n, p, l, slice, streamed);
    case Collective::kAllGather: return flatBlocks(a, false, n, p, l);
    case Collective::kReduceScatter: return flatBlocks(a, true, n, p, l);
    case Collective::kAllToAll:
    case Collective::kAllToAllv: return flatAllToAll(a, n, p, l);
    case Collective::kGather:
    case Collective::kScatter: return flatGatherScatter(a, n, p, l);
    case Collective::kBarrier: return a == AlgorithmId::kDissemination ? ceilLog2(p) * l.alpha : kInf;
    case Collective::kSend:
    case Collective::kRecv: return kInf;  // no algorithm: the engine posts them itself
  }
  return kInf;
}

// The best flat algorithm for one level of a two-level collective.
double bestFlat(Collective c, double n, int p, const Link& l, size_t slice, Reach reach, bool streamed = true) {
  double best = kInf;
  for (const AlgorithmRecord& r : algorithmRegistry()) {
    if (r.collective == c && r.flat) best = std::min(best, flat(c, r.id, n, p, l, slice, reach, streamed));
  }
  return best;
}

// How many of a host's ranks are at work at once in the steps of algorithm `a`. Recursive doubling and
// halving-doubling over a number of ranks that is not a power of two fold the extra ranks into partners first: then
// only the largest power of two below p exchange, and the fold's pairs; the others wait. On crowded cores the steps of
// those few then do not wait for the scheduler as a ring's, whose every step needs every rank (3 ranks on 2 cores:
// recursive doubling's steps 17 us against the ring's 28 over TCP). Figures: docs/cost_model.md, "Inputs".
int ranksAtWork(Collective c, AlgorithmId a, const Inputs& in) {
  const bool folds =
      c == Collective::kAllReduce && (a == AlgorithmId::kRecursiveDoubling || a == AlgorithmId::kHalvingDoubling);
  const int p = in.maxRanksPerHost;
  return folds && in.nhosts == 1 ? 1 << floorLog2(p) : p;
}

double predictFlat(Collective c, AlgorithmId a, double n, const Inputs& in) {
  const bool across = in.nhosts > 1;
  if (across && steppedAcrossHosts(c, a)) return acrossHostsDoubling(c, a, n, in);
  if (across && c == Collective::kAllReduce && a == AlgorithmId::kTree) return acrossHostsTree(n, in);
  const Link l = linkFor(in, across, ranksAtWork(c, a, in), coresPerByte(c, a, in));
  return flat(c, a, n, in.nranks, l, in.sliceBytes, across ? Reach::kHosts : insideHost(in));
}

// The host leaders' level of a two-level collective: one rank per host (leaderLevel).
double bestAmongLeaders(Collective c, double n, const Inputs& in) {
  Inputs leaders = in;
  static_cast<CostInputs&>(leaders) = leaderLevel(in, c);
  double best = kInf;
  for (const AlgorithmRecord& r : algorithmRegistry()) {
    if (r.collective == c && r.flat) best = std::min(best, predictFlat(c, r.id, n, leaders));
  }
  return best;
}

double hierarchical(Collective c, double n, const Inputs& in) {
  if (in.nhosts < 2 || in.maxRanksPerHost < 2) return kInf;
  const Link local = linkFor(in, false, in.maxRanksPerHost);
  const Link net = linkFor(in, true, 1);
  const int l = in.maxRanksPerHost;
  if (c == Collective::kAllToAll) {
    // n bytes per rank: gathered to the leader and handed back (l - 1 messages of n each way, about three copies of
    // the host's l * n bytes at the leader), and one message of l * l blocks per other host.
    const double block = n / in.nranks;
    return 2 * ((l - 1) * alphaOf(local, n) + (l - 1) * n * local.beta) + 3 * l * n * local.gamma +
           (in.nhosts - 1) * (alphaOf(net, l * l * block) + l * l * block * net.beta);
  }
  if (c != Collective::kAllReduce && c != Collective::kBroadcast && c != Collective::kReduce) return kInf;
  if (c == Collective::kAllReduce) {
    // The host's reduce and broadcast are phases of one call, on its critical path: not streamed.
    return bestFlat(Collective::kReduce, n, l, local, in.sliceBytes, insideHost(in), false) +
           bestAmongLeaders(Collective::kAllReduce, n, in) +
           bestFlat(Collective::kBroadcast, n, l, local, in.sliceBytes, insideHost(in), false);
  }
  // Broadcast and reduce: the leaders' step streams from call to call like any chain, but a broadcast's host step
  // does not (its ranks wait for the leader's data). A reduce's host step streams all the same: the host's ranks hand
  // their data to the leader and go on to the next call. Figures: docs/cost_model.md, "Two-level collectives".
  const bool hostStepStreams = c == Collective::kReduce;
  const double hostStep = bestFlat(c, n, l, local, in.sliceBytes, insideHost(in), hostStepStreams);
  const double leaders = bestAmongLeaders(c, n, in);
  // Back to back, a broadcast's host step (the cores' work) overlaps the next call's bytes on the leaders' wire: the
  // call costs the host step and the leaders' latency, or the leaders' wire, whichever is the longer. Only where the
  // wire is not the cores' own work, as a shaped link's is (see linkFor): over loopback the two do not overlap.
  // Figures: docs/cost_model.md, "Two-level collectives".
  const bool wireOfItsOwn = in.interHost.peakGBs > 0;  // a token bucket's (predictUs prices its peak as the rate)
  if (hostStepStreams || !wireOfItsOwn) return hostStep + leaders;
  const double leadersWire = bestAmongLeaders(c, n, bytesOnly(in));
  return std::max(leadersWire, hostStep + leaders - leadersWire);
}

double predictSteady(Collective c, AlgorithmId a, double n, const Inputs& in) {
  return a == AlgorithmId::kHierarchical ? hierarchical(c, n, in) : predictFlat(c, a, n, in);
}

}  // namespace

CostInputs hostLevel(const CostInputs& world) {
  CostInputs level = world;
  level.nranks = world.maxRanksPerHost;
  level.nhosts = 1;
  return level;
}

CostInputs leaderLevel(const CostInputs& world, Collective c) {
  CostInputs level = world;
  level.nranks = world.nhosts;
  level.maxRanksPerHost = 1;
  // A leader still shares its crowded core with its host's other ranks, and inside a two-level allreduce, a phase
  // the call waits for, each of its steps waits for the scheduler as theirs do; without that wait the leaders would
  // pick algorithms of more crowded steps (docs/cost_model.md, "Two-level collectives"). A broadcast's or reduce's
  // leaders stream from call to call, as any chain.
  if (c == Collective::kAllReduce) {
    level.interHost.latencyUs += (crowding(world, world.maxRanksPerHost) - 1) * world.contextSwitchUs;
  }
  return level;
}

// Across a token-bucket link, calls repeated back to back whose bytes on the link fit its burst run at the slower of
// two paces: their messages cross at the peak rate while the bucket holds tokens (the latency path), and on average
// no faster than the bucket refills (the link's rate, no latency). Calls whose bytes overflow the burst pay the rate
// as any link. Figures: docs/cost_model.md, "Token-bucket links".
double predictUs(Collective collective, AlgorithmId algorithm, size_t bytes, const CostInputs& given) {
  const Inputs in{given};
  const double n = static_cast<double>(bytes);
  const double steady = predictSteady(collective, algorithm, n, in);
  const LinkCost& net = in.interHost;
  if (in.nhosts < 2 || !(net.burstBytes > 0) || !(net.peakGBs > net.bandwidthGBs) || !std::isfinite(steady)) {
    return steady;
  }
  // The rate bound: the network's latency and its steps' wait for the scheduler left out, and a pipeline's hops paid
  // once (back to back, a call's fill overlaps the previous call's drain).
  Inputs atRate = bytesOnly(in);
  atRate.rateBound = true;
  const double rateBound = predictSteady(collective, algorithm, n, atRate);
  if (rateBound * net.bandwidthGBs * 1e3 > net.burstBytes) return steady;  // more than a burst crosses the link
  Inputs atPeak = in;
  atPeak.interHost.bandwidthGBs = net.peakGBs;
  return std::max(rateBound, predictSteady(collective, algorithm, n, atPeak));
}

}  // namespace chorus
