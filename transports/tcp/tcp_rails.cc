#include "transports/tcp/tcp_rails.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"

namespace chorus {

std::string encodeRails(const std::vector<TcpRail>& rails) {
  std::string out;
  for (const TcpRail& r : rails) out += (out.empty() ? "" : " ") + r.ifname + "=" + r.address;
  return out;
}

std::vector<TcpRail> cardRails(const PeerCard& card, const std::string& prefix, int selfRank) {
  auto listed = card.entries.find(prefix + ".rails");
  if (listed == card.entries.end()) return {TcpRail{"", card.entries.at(prefix + ".addr")}};
  std::vector<TcpRail> rails;
  std::istringstream in(listed->second);
  std::string item;
  while (in >> item) {
    const size_t eq = item.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == item.size()) {
      throw Error(chorusRemoteError, errorContext(selfRank, card.rank) + ": the peer card has a malformed " + prefix +
                                         ".rails entry '" + listed->second + "'");
    }
    rails.push_back({item.substr(0, eq), item.substr(eq + 1)});
  }
  if (rails.empty()) {
    throw Error(chorusRemoteError,
                errorContext(selfRank, card.rank) + ": the peer card lists no rails in " + prefix + ".rails");
  }
  return rails;
}

std::vector<std::pair<size_t, size_t>> pairRails(const std::vector<std::string>& lower,
                                                 const std::vector<std::string>& higher) {
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t i = 0; i < lower.size(); ++i) {
    if (lower[i].empty()) continue;
    for (size_t j = 0; j < higher.size(); ++j) {
      if (lower[i] == higher[j]) pairs.emplace_back(i, j);
    }
  }
  if (pairs.empty()) {
    for (size_t i = 0; i < std::min(lower.size(), higher.size()); ++i) pairs.emplace_back(i, i);
  }
  return pairs;
}

StripeCuts RailPlan::cuts(size_t sockets, size_t width) const {
  const bool weighted = weighs(sockets);
  const size_t each = socketsPerRail(sockets);
  if (width == 0 || width > each) width = each;
  std::vector<uint32_t> w;
  for (size_t i = 0; i < sockets; ++i) {
    const bool used = i % each < width;
    w.push_back(used ? (weighted ? weights[railOf(i)] : 1) : 0);
  }
  return StripeCuts(w);
}

std::string RailPlan::describe() const {
  if (interfaces.size() <= 1) return "";
  uint64_t total = 0;
  for (uint32_t w : weights) total += w;
  std::string out = " over ";
  for (size_t r = 0; r < interfaces.size(); ++r) {
    out += (r ? ", " : "") + interfaces[r];
    if (r < weights.size()) out += " (" + std::to_string(weights[r]) + "/" + std::to_string(total) + ")";
  }
  return out;
}

}  // namespace chorus
