#include "transports/peer_info.h"

#include <cstring>

#include "src/core/error.h"

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
  try {
    c.rank = std::stoi(r.str());
    c.pid = std::stoi(r.str());
    c.hostId = r.str();
    size_t n = std::stoul(r.str());
    if (n > 64) r.fail("too many entries");
    for (size_t i = 0; i < n; ++i) {
      std::string k = r.str();
      c.entries[k] = r.str();
    }
  } catch (const std::logic_error&) {
    r.fail("bad number");
  }
  if (!r.done()) r.fail("trailing bytes");
  if (c.rank != from) r.fail("rank field disagrees with its key");
  return c;
}

}  // namespace chorus
