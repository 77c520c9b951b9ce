#include "src/comm/link_probe.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/logging.h"

namespace chorus {

namespace {

using Clock = std::chrono::steady_clock;

// Per class on the wire: latency us, bandwidth GB/s, source (as a double so the record is one array).
constexpr size_t kFieldsPerClass = 3;
using ModelRecord = std::array<double, kLinkClassCount * kFieldsPerClass>;

void sendAndWait(PeerIO& io, int peer, const void* buf, size_t bytes) { io.wait(io.isend(peer, buf, bytes)); }
void recvAndWait(PeerIO& io, int peer, void* buf, size_t bytes) { io.wait(io.irecv(peer, buf, bytes)); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Round trips of `bytes` between io.rank() and peer; the initiator returns the median round trip in us, the
// responder 0.
double pingPong(PeerIO& io, int peer, bool initiator, std::vector<char>& buffer, size_t bytes, int warmup, int rounds) {
  std::vector<double> times;
  for (int i = 0; i < warmup + rounds; ++i) {
    if (initiator) {
      auto start = Clock::now();
      sendAndWait(io, peer, buffer.data(), bytes);
      recvAndWait(io, peer, buffer.data(), bytes);
      double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
      if (i >= warmup) times.push_back(us);
    } else {
      recvAndWait(io, peer, buffer.data(), bytes);
      sendAndWait(io, peer, buffer.data(), bytes);
    }
  }
  return initiator ? median(times) : 0;
}

ModelRecord encode(const LinkModel& m) {
  ModelRecord r{};
  for (LinkClass c : kAllLinkClasses) {
    size_t i = static_cast<size_t>(c) * kFieldsPerClass;
    r[i] = m.params(c).latencyUs;
    r[i + 1] = m.params(c).bandwidthGBs;
    r[i + 2] = static_cast<double>(static_cast<int>(m.source(c)));
  }
  return r;
}

LinkModel decode(const ModelRecord& r) {
  LinkModel m;
  for (LinkClass c : kAllLinkClasses) {
    size_t i = static_cast<size_t>(c) * kFieldsPerClass;
    int source = static_cast<int>(r[i + 2]);
    if (source < 0 || source > static_cast<int>(LinkSource::kProbe)) throwInternal("link probe: bad model record");
    m.set(c, {r[i], r[i + 1]}, static_cast<LinkSource>(source));
  }
  return m;
}

// MPICH's binomial broadcast from rank 0.
void broadcastFromZero(PeerIO& io, ModelRecord& record) {
  const int n = io.size();
  const int rank = io.rank();
  int mask = 1;
  while (mask < n) {
    if (rank & mask) {
      recvAndWait(io, rank - mask, record.data(), sizeof(record));
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (rank + mask < n) sendAndWait(io, rank + mask, record.data(), sizeof(record));
  }
}

}  // namespace

LinkModel probeLinkModel(PeerIO& io, const GlobalTopology& world, const LinkModel& start,
                         const LinkProbeOptions& options) {
  const int rank = io.rank();
  if (world.nranks() != io.size()) {
    throwInternal("link probe: topology of " + std::to_string(world.nranks()) + " ranks on a communicator of " +
                  std::to_string(io.size()));
  }
  if (options.smallBytes == 0 || options.midBytes <= options.smallBytes || options.largeBytes <= options.midBytes ||
      options.smallRounds < 1 || options.largeRounds < 1) {
    throwInvalidArgument("link probe: needs 0 < small < mid < large message sizes and at least one round of each");
  }
  std::vector<char> buffer;  // only the ranks of a measured pair need one
  struct Measured {
    LinkClass c;
    int initiator;
    int responder;
    std::array<double, 2> figures;  // latency us, bandwidth GB/s (valid on the initiator, then on rank 0)
  };
  std::vector<Measured> measured;
  for (LinkClass c : world.linkClassesPresent(MemoryKind::kHost)) {
    auto pair = world.representativePair(c, MemoryKind::kHost);
    if (!pair) continue;
    auto [a, b] = *pair;
    Measured m{c, a, b, {0, 0}};
    if (rank == a || rank == b) {
      buffer.resize(options.largeBytes);
      const bool initiator = rank == a;
      const int peer = initiator ? b : a;
      double smallRoundTrip = pingPong(io, peer, initiator, buffer, options.smallBytes, 3, options.smallRounds);
      double midRoundTrip = pingPong(io, peer, initiator, buffer, options.midBytes, 1, options.largeRounds);
      double largeRoundTrip = pingPong(io, peer, initiator, buffer, options.largeBytes, 1, options.largeRounds);
      if (initiator) {
        double latency = std::max(smallRoundTrip / 2, 0.01);
        // The slope between the two sizes: what one more byte costs once the link is streaming. A shaper's burst
        // and the latency are in both times and cancel; when noise makes the slope useless, the large message alone.
        double slopeUs = (largeRoundTrip - midRoundTrip) / 2;
        double moreBytes = static_cast<double>(options.largeBytes - options.midBytes);
        double oneWay = largeRoundTrip / 2;
        double transfer = oneWay > 1.5 * latency ? oneWay - latency : std::max(oneWay, 0.01);
        const double largeAlone = static_cast<double>(options.largeBytes) / (transfer * 1e3);
        double bandwidth = slopeUs > 0.25 * transfer * moreBytes / options.largeBytes ? moreBytes / (slopeUs * 1e3)
                                                                                       : largeAlone;
        // The large message alone can only overstate the link (by a shaper's burst, a few percent at 4 MiB); a
        // slope far above it is a mid-size time stretched by load, not a faster link.
        bandwidth = std::min(bandwidth, 1.25 * largeAlone);
        m.figures = {latency, bandwidth};
      }
    }
    measured.push_back(m);
  }
  // Figures to rank 0, in class order (each connection keeps its order, so the receives match the sends).
  for (Measured& m : measured) {
    if (m.initiator == 0) continue;
    if (rank == m.initiator) sendAndWait(io, 0, m.figures.data(), sizeof(m.figures));
    if (rank == 0) recvAndWait(io, m.initiator, m.figures.data(), sizeof(m.figures));
  }
  ModelRecord record{};
  if (rank == 0) {
    LinkModel model = start;
    for (const Measured& m : measured) {
      model.set(m.c, {m.figures[0], m.figures[1]}, LinkSource::kProbe);
      CHORUS_INFO(rank, "link probe: " << linkClassName(m.c) << " between ranks " << m.initiator << " and "
                                       << m.responder << ": " << m.figures[0] << " us, " << m.figures[1] << " GB/s");
    }
    record = encode(model);
  }
  broadcastFromZero(io, record);
  return decode(record);
}

}  // namespace chorus
