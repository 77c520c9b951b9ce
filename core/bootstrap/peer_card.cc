#include "core/bootstrap/peer_card.h"

#include <charconv>
#include <cstring>

#include "core/error.h"

namespace chorus {

namespace {
void putString(Bytes& out, const std::string& s) {
  uint32_t n = static_cast<uint32_t>(s.size());
  const auto* p = reinterpret_cast<const uint8_t*>(&n);
  out.insert(out.end(), p, p + 4);
  out.insert(out.end(), s.begin(), s.end());
}

class Reader {
 public:
  Reader(const Bytes& b, int from) : b_(b), from_(from) {}
  uint32_t u32() {
    need(4);
    uint32_t v;
    std::memcpy(&v, b_.data() + pos_, 4);
    pos_ += 4;
    return v;
  }
  std::string str() {
    uint32_t n = u32();
    if (n > 4096) fail("string too long");
    need(n);
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  // A decimal integer field in [lo, hi], nothing else (no sign, spaces or trailing bytes).
  long long number(const char* what, long long lo, long long hi) {
    std::string s = str();
    long long v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi) fail(what);
    return v;
  }
  bool done() const { return pos_ == b_.size(); }
  [[noreturn]] void fail(const char* what) {
    throw Error(chorusRemoteError, "peer card of rank " + std::to_string(from_) + " is malformed: " + what);
  }

 private:
  void need(size_t n) {
    if (b_.size() - pos_ < n) fail("truncated");
  }
  const Bytes& b_;
  int from_;
  size_t pos_ = 0;
};
}  // namespace

Bytes PeerCard::encode() const {
  Bytes out;
  putString(out, "chorus-card-1");
  putString(out, std::to_string(rank));
  putString(out, std::to_string(pid));
  putString(out, hostId);
  putString(out, std::to_string(entries.size()));
  for (const auto& [k, v] : entries) {
    putString(out, k);
    putString(out, v);
  }
  return out;
}

PeerCard PeerCard::decode(const Bytes& bytes, int from) {
  Reader r(bytes, from);
  if (r.str() != "chorus-card-1") r.fail("bad magic");
  PeerCard c;
  c.rank = static_cast<int>(r.number("bad rank", 0, 1 << 24));
  c.pid = static_cast<int>(r.number("bad pid", 0, (1LL << 31) - 1));
  c.hostId = r.str();
  const long long n = r.number("bad entry count (at most 64)", 0, 64);
  for (long long i = 0; i < n; ++i) {
    std::string k = r.str();
    if (!c.entries.emplace(std::move(k), r.str()).second) r.fail("duplicate entry");
  }
  if (!r.done()) r.fail("trailing bytes");
  if (c.rank != from) r.fail("rank field disagrees with its key");
  return c;
}

}  // namespace chorus
