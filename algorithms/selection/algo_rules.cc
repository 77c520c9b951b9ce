#include "algorithms/selection/algo_rules.h"

#include <cctype>
#include <charconv>

#include "algorithms/algorithm_registry.h"
#include "core/error.h"

namespace chorus {
namespace {


std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

[[noreturn]] void bad(std::string_view text, std::string_view piece, const std::string& why) {
  throwInvalidArgument("CHORUS_ALGO=" + std::string(text) + ": '" + std::string(piece) + "': " + why);
}

size_t parseSize(std::string_view text, std::string_view s) {
  if (s == "inf" || s == "max") return SIZE_MAX;
  size_t digits = 0;
  unsigned long long v = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) {
    if (v > (1ULL << 50)) bad(text, s, "size too large");
    v = v * 10 + static_cast<unsigned>(s[digits] - '0');
    ++digits;
  }
  if (digits == 0) bad(text, s, "expected a size like 0, 4096, 64K, 4M, 1G or inf");
  std::string_view unit = s.substr(digits);
  int shift = 0;
  if (unit == "K" || unit == "k") shift = 10;
  else if (unit == "M" || unit == "m") shift = 20;
  else if (unit == "G" || unit == "g") shift = 30;
  else if (!unit.empty()) bad(text, s, "unknown size suffix (K, M or G)");
  return static_cast<size_t>(v << shift);
}

std::string algorithmsOf(Collective c) {
  std::string names;
  for (const AlgorithmRecord& r : algorithmRegistry()) {
    if (r.collective == c) names += (names.empty() ? "" : ", ") + std::string(algorithmName(r.id));
  }
  return names;
}

}  // namespace

std::optional<Collective> collectiveNamed(std::string_view name) {
  for (Collective c : kAllCollectives) {
    if (name == collectiveName(c)) return c;
  }
  if (name == "reduce_scatter") return Collective::kReduceScatter;
  return std::nullopt;
}

std::string formatSize(size_t bytes) {
  if (bytes == SIZE_MAX) return "inf";
  const char* units[] = {"", "K", "M", "G"};
  int u = 0;
  while (u < 3 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + units[u];
}

AlgoRules AlgoRules::parse(std::string_view text) {
  AlgoRules out;
  for (std::string_view entry : split(text, ';')) {
    if (entry.empty()) continue;
    std::optional<Collective> coll;
    int elementBytes = 0;
    std::string_view ranges = entry;
    if (size_t colon = entry.find(':'); colon != std::string_view::npos) {
      std::string_view name = trim(entry.substr(0, colon));
      if (size_t dot = name.find('.'); dot != std::string_view::npos) {
        const std::string_view bits = name.substr(dot + 1);
        elementBytes = bits == "8" ? 1 : bits == "16" ? 2 : bits == "32" ? 4 : bits == "64" ? 8 : -1;
        if (elementBytes < 0) bad(text, name, "element width must be .8, .16, .32 or .64 (bits)");
        name = name.substr(0, dot);
      }
      coll = collectiveNamed(name);
      if (!coll) bad(text, name, "not a collective (allreduce, broadcast, reduce, allgather, reducescatter)");
      ranges = entry.substr(colon + 1);
    }
    for (std::string_view range : split(ranges, ',')) {
      if (range.empty()) bad(text, entry, "empty range");
      AlgoRule rule;
      rule.collective = coll;
      rule.elementBytes = elementBytes;
      std::string_view name = range;
      if (size_t eq = range.find('='); eq != std::string_view::npos) {
        std::string_view bounds = trim(range.substr(0, eq));
        name = trim(range.substr(eq + 1));
        size_t dash = bounds.find('-');
        if (dash == std::string_view::npos) bad(text, range, "expected lo-hi=algorithm, e.g. 0-64K=tree");
        rule.lo = parseSize(text, trim(bounds.substr(0, dash)));
        rule.hi = parseSize(text, trim(bounds.substr(dash + 1)));
        if (rule.lo >= rule.hi) bad(text, range, "empty size range (lo must be below hi)");
      } else if (std::isdigit(static_cast<unsigned char>(range.front()))) {
        bad(text, range, "expected lo-hi=algorithm, e.g. 0-64K=tree");
      }
      if (size_t slash = name.find('/'); slash != std::string_view::npos) {
        const std::string_view n = trim(name.substr(slash + 1));
        int sockets = 0;
        auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), sockets);
        if (ec != std::errc() || end != n.data() + n.size() || sockets < 1 || sockets > kMaxRuleSockets) {
          bad(text, range, "sockets per rail after '/' must be 1.." + std::to_string(kMaxRuleSockets));
        }
        rule.sockets = sockets;
        name = trim(name.substr(0, slash));
      }
      if (size_t at = name.find('@'); at != std::string_view::npos) {
        rule.sliceBytes = parseSize(text, trim(name.substr(at + 1)));
        if (rule.sliceBytes < kMinSliceBytes || rule.sliceBytes > kMaxSliceBytes) {
          bad(text, range, "slice size out of range (4K..64M)");
        }
        name = trim(name.substr(0, at));
      }
      const std::optional<AlgorithmId> id = algorithmNamed(name);
      if (!id) bad(text, range, "not an algorithm name");
      rule.algorithm = coll ? algorithmFor(*coll, *id) : *id;
      if (coll && !findAlgorithm(*coll, rule.algorithm)) {
        bad(text, range, "no algorithm '" + std::string(algorithmName(rule.algorithm)) + "' for " +
                             collectiveName(*coll) + " (it has " + algorithmsOf(*coll) + ")");
      }
      out.rules_.push_back(std::move(rule));
    }
  }
  return out;
}

std::optional<AlgoRule> AlgoRules::lookup(Collective c, size_t bytes, int elementBytes) const {
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    if (it->collective && *it->collective != c) continue;
    if (it->elementBytes != 0 && it->elementBytes != elementBytes) continue;
    if (bytes < it->lo || bytes >= it->hi) continue;
    const AlgorithmId algorithm = algorithmFor(c, it->algorithm);
    if (!findAlgorithm(c, algorithm)) continue;  // a catch-all name this collective lacks
    AlgoRule rule = *it;
    rule.algorithm = algorithm;
    return rule;
  }
  return std::nullopt;
}

bool AlgoRules::perCall() const {
  for (const AlgoRule& r : rules_) {
    if (r.elementBytes != 0 || r.sliceBytes != 0 || r.sockets != 0) return true;
  }
  return false;
}

}  // namespace chorus
