#include "tests/collectives/collective_case.h"

#include <cstring>
#include <memory>
#include <sstream>
#include <vector>

#include "tests/collectives/reference_cache.h"
#include "tests/collectives/typed_values.h"

namespace chorus::test {

namespace {

constexpr size_t kGuardBytes = 64;
constexpr uint8_t kGuardByte = 0xA5;
// What output buffers hold before the call: as int8 125, as float16 a NaN, as wider types values far outside
// any reference result, so an element the library forgot to write cannot pass for a right one.
constexpr uint8_t kUnwrittenByte = 0x7D;
// What buffers the call must ignore hold (non-root broadcast send).
constexpr uint8_t kIgnoredByte = 0x3C;
constexpr int kMismatchesShown = 4;

// A heap buffer with guard bytes on both sides, placed `misalign` bytes after a 64-byte boundary.
class GuardedBuffer {
 public:
  GuardedBuffer(size_t bytes, size_t misalign)
      : bytes_(bytes), size_(bytes + misalign + 3 * kGuardBytes), storage_(new uint8_t[size_]) {
    std::memset(storage_.get(), kGuardByte, size_);
    uintptr_t base = reinterpret_cast<uintptr_t>(storage_.get()) + kGuardBytes;
    base = (base + kGuardBytes - 1) / kGuardBytes * kGuardBytes;
    data_ = reinterpret_cast<uint8_t*>(base) + misalign;
  }
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  void fill(uint8_t byte) { std::memset(data_, byte, bytes_); }

  // "" when every guard byte before and after the payload is intact, else where the first changed one is.
  std::string damagedGuard(const std::string& name) const {
    const uint8_t* const end = storage_.get() + size_;
    for (const uint8_t* p = storage_.get(); p < end; ++p) {
      if (p == data_) p += bytes_;  // the payload is the checks' to judge
      if (p < end && *p != kGuardByte) {
        std::ostringstream out;
        long offset = p < data_ ? -static_cast<long>(data_ - p) : static_cast<long>(p - (data_ + bytes_));
        out << name << ": guard byte " << (p < data_ ? "before" : "after") << " the buffer changed (offset " << offset
            << (p < data_ ? " from its start" : " past its end") << ")";
        return out.str();
      }
    }
    return "";
  }

 private:
  size_t bytes_, size_;
  std::unique_ptr<uint8_t[]> storage_;  // not zeroed first: every byte is set to the guard byte
  uint8_t* data_;
};

// Fills count elements at dst with value(i) encoded as type.
template <typename ValueOf>
void fillElements(chorusDataType_t type, uint8_t* dst, size_t count, ValueOf value) {
  const size_t es = chorusTypeSize(type);
  for (size_t i = 0; i < count; ++i) encodeValue(type, value(i), dst + i * es);
}

// The expected result at element `index` of a reduction: op over every rank's input there.
void reducedElement(const CollectiveCase& c, int nranks, size_t index, uint8_t* dst) {
  int64_t acc = inputValue(c.type, c.op, 0, index, c.salt);
  for (int r = 1; r < nranks; ++r) acc = combineExact(c.op, acc, inputValue(c.type, c.op, r, index, c.salt));
  encodeReduced(c.type, c.op, acc, nranks, dst);
}

// Describes where `actual` differs from `expected` (both count elements of type); "" when equal.
std::string compareElements(const std::string& name, chorusDataType_t type, const uint8_t* actual,
                            const uint8_t* expected, size_t count) {
  const size_t es = chorusTypeSize(type);
  if (count == 0 || std::memcmp(actual, expected, count * es) == 0) return "";
  std::ostringstream out;
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    if (std::memcmp(actual + i * es, expected + i * es, es) == 0) continue;
    if (wrong < kMismatchesShown) {
      out << (wrong ? "; " : ": ") << "[" << i << "] got " << formatElement(type, actual + i * es) << " want "
          << formatElement(type, expected + i * es);
    }
    ++wrong;
  }
  return name + ": " + std::to_string(wrong) + " of " + std::to_string(count) + " elements wrong" + out.str();
}

// Collects problems; the first few are kept.
class Findings {
 public:
  void add(const std::string& problem) {
    if (problem.empty()) return;
    text_ += text_.empty() ? problem : "\n    " + problem;
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// The buffers of one call and the bytes expected in them afterwards.
struct Checked {
  GuardedBuffer* buffer;
  std::string name;
  std::vector<uint8_t> expected;  // the whole payload; empty with a non-zero buffer: check guards only
  size_t expectedOffset = 0;      // where in the payload `expected` starts
};

class CaseRun {
 public:
  CaseRun(int rank, int nranks, const CollectiveCase& c)
      : rank_(rank), n_(nranks), c_(c), es_(chorusTypeSize(c.type)), bytes_(c.count * es_) {}

  // A payload of `bytes`, recorded for the guard check.
  GuardedBuffer& make(size_t bytes) {
    owned_.push_back(std::make_unique<GuardedBuffer>(bytes, c_.misalign));
    return *owned_.back();
  }
  // Expects buffer's payload bytes [offset, offset + expected.size()) to equal expected afterwards.
  void expect(GuardedBuffer& b, const std::string& name, std::vector<uint8_t> expected, size_t offset = 0) {
    checks_.push_back({&b, name, std::move(expected), offset});
  }
  // This rank's own input for c_.count * blocks elements.
  std::vector<uint8_t> ownInput(size_t blocks, chorusRedOp_t op) const {
    std::vector<uint8_t> v(bytes_ * blocks);
    fillElements(c_.type, v.data(), c_.count * blocks,
                 [&](size_t i) { return inputValue(c_.type, op, rank_, i, c_.salt); });
    return v;
  }
  std::vector<uint8_t> inputOf(int rank, chorusRedOp_t op) const {
    std::vector<uint8_t> v(bytes_);
    fillElements(c_.type, v.data(), c_.count, [&](size_t i) { return inputValue(c_.type, op, rank, i, c_.salt); });
    return v;
  }
  // The reduction's reference for elements [first, first + count).
  std::vector<uint8_t> reduced(size_t first) const {
    return sharedReference(c_, n_, first, [&] {
      std::vector<uint8_t> v(bytes_);
      for (size_t i = 0; i < c_.count; ++i) reducedElement(c_, n_, first + i, v.data() + i * es_);
      return v;
    });
  }
  static void load(GuardedBuffer& b, const std::vector<uint8_t>& bytes, size_t offset = 0) {
    if (!bytes.empty()) std::memcpy(b.data() + offset, bytes.data(), bytes.size());
  }
  std::vector<uint8_t> filled(size_t bytes, uint8_t byte) const { return std::vector<uint8_t>(bytes, byte); }
  bool useNull() const { return c_.nullUnused; }
  size_t bytes() const { return bytes_; }

  CaseOutcome finish(chorusComm_t comm, chorusResult_t result) const {
    CaseOutcome outcome;
    const std::string where = "rank " + std::to_string(rank_) + ": " + describeCase(c_);
    if (result != chorusSuccess) {
      outcome.callFailed = true;
      outcome.problem = where + ": returned " + chorusGetErrorString(result) + ": " + chorusGetLastError(comm);
      return outcome;
    }
    Findings findings;
    for (const Checked& k : checks_) {
      findings.add(compareElements(k.name, c_.type, k.buffer->data() + k.expectedOffset, k.expected.data(),
                                   k.expected.size() / es_));
    }
    for (size_t i = 0; i < owned_.size(); ++i) findings.add(owned_[i]->damagedGuard("buffer " + std::to_string(i)));
    if (!findings.text().empty()) outcome.problem = where + ":\n    " + findings.text();
    return outcome;
  }

  const int rank_, n_;
  const CollectiveCase& c_;
  const size_t es_, bytes_;

 private:
  std::vector<std::unique_ptr<GuardedBuffer>> owned_;
  std::vector<Checked> checks_;
};

CaseOutcome runAllReduce(chorusComm_t comm, CaseRun& run) {
  const CollectiveCase& c = run.c_;
  std::vector<uint8_t> input = run.ownInput(1, c.op);
  std::vector<uint8_t> want = run.reduced(0);
  GuardedBuffer& recv = run.make(run.bytes());
  recv.fill(kUnwrittenByte);
  if (c.inPlace) {
    CaseRun::load(recv, input);
    run.expect(recv, "result", want);
    return run.finish(comm, chorusAllReduce(recv.data(), recv.data(), c.count, c.type, c.op, comm, nullptr));
  }
  GuardedBuffer& send = run.make(run.bytes());
  CaseRun::load(send, input);
  run.expect(recv, "result", want);
  run.expect(send, "sendbuff (must stay unchanged)", input);
  bool null = c.count == 0 && run.useNull();
  return run.finish(comm, chorusAllReduce(null ? nullptr : send.data(), null ? nullptr : recv.data(), c.count, c.type,
                                          c.op, comm, nullptr));
}

CaseOutcome runBroadcast(chorusComm_t comm, CaseRun& run) {
  const CollectiveCase& c = run.c_;
  const bool isRoot = run.rank_ == c.root;
  std::vector<uint8_t> data = run.inputOf(c.root, chorusSum);
  GuardedBuffer& recv = run.make(run.bytes());
  recv.fill(kUnwrittenByte);
  run.expect(recv, "result", data);
  if (c.inPlace) {
    if (isRoot) CaseRun::load(recv, data);
    return run.finish(comm, chorusBroadcast(recv.data(), recv.data(), c.count, c.type, c.root, comm, nullptr));
  }
  const void* sendPtr = nullptr;
  if (isRoot) {
    GuardedBuffer& send = run.make(run.bytes());
    CaseRun::load(send, data);
    run.expect(send, "root's sendbuff (must stay unchanged)", data);
    sendPtr = send.data();
  } else if (!run.useNull()) {
    GuardedBuffer& send = run.make(run.bytes());
    send.fill(kIgnoredByte);
    run.expect(send, "non-root sendbuff (must be ignored)", run.filled(run.bytes(), kIgnoredByte));
    sendPtr = send.data();
  }
  bool null = c.count == 0 && run.useNull();
  return run.finish(comm, chorusBroadcast(null ? nullptr : sendPtr, null ? nullptr : recv.data(), c.count, c.type,
                                          c.root, comm, nullptr));
}

CaseOutcome runReduce(chorusComm_t comm, CaseRun& run) {
  const CollectiveCase& c = run.c_;
  const bool isRoot = run.rank_ == c.root;
  std::vector<uint8_t> input = run.ownInput(1, c.op);
  GuardedBuffer& send = run.make(run.bytes());
  CaseRun::load(send, input);
  if (c.inPlace) {
    // On the root the buffer becomes the result; elsewhere it is only the input and must stay as it was.
    run.expect(send, isRoot ? "result" : "non-root buffer (input only)", isRoot ? run.reduced(0) : input);
    return run.finish(comm, chorusReduce(send.data(), send.data(), c.count, c.type, c.op, c.root, comm, nullptr));
  }
  run.expect(send, "sendbuff (must stay unchanged)", input);
  void* recvPtr = nullptr;
  if (isRoot || !run.useNull()) {
    GuardedBuffer& recv = run.make(run.bytes());
    recv.fill(kUnwrittenByte);
    run.expect(recv, isRoot ? "result" : "non-root recvbuff (must stay untouched)",
               isRoot ? run.reduced(0) : run.filled(run.bytes(), kUnwrittenByte));
    recvPtr = recv.data();
  }
  bool null = c.count == 0 && run.useNull();
  return run.finish(comm, chorusReduce(null ? nullptr : send.data(), null ? nullptr : recvPtr, c.count, c.type, c.op,
                                       c.root, comm, nullptr));
}

CaseOutcome runAllGather(chorusComm_t comm, CaseRun& run) {
  const CollectiveCase& c = run.c_;
  const size_t own = static_cast<size_t>(run.rank_) * run.bytes();
  std::vector<uint8_t> want;
  for (int r = 0; r < run.n_; ++r) {
    std::vector<uint8_t> block = run.inputOf(r, chorusSum);
    want.insert(want.end(), block.begin(), block.end());
  }
  GuardedBuffer& recv = run.make(run.bytes() * run.n_);
  recv.fill(kUnwrittenByte);
  run.expect(recv, "result", want);
  std::vector<uint8_t> input = run.inputOf(run.rank_, chorusSum);
  if (c.inPlace) {
    CaseRun::load(recv, input, own);
    return run.finish(comm, chorusAllGather(recv.data() + own, recv.data(), c.count, c.type, comm, nullptr));
  }
  GuardedBuffer& send = run.make(run.bytes());
  CaseRun::load(send, input);
  run.expect(send, "sendbuff (must stay unchanged)", input);
  bool null = c.count == 0 && run.useNull();
  return run.finish(comm, chorusAllGather(null ? nullptr : send.data(), null ? nullptr : recv.data(), c.count, c.type,
                                          comm, nullptr));
}

CaseOutcome runReduceScatter(chorusComm_t comm, CaseRun& run) {
  const CollectiveCase& c = run.c_;
  const size_t own = static_cast<size_t>(run.rank_) * run.bytes();
  std::vector<uint8_t> input = run.ownInput(static_cast<size_t>(run.n_), c.op);
  std::vector<uint8_t> want = run.reduced(static_cast<size_t>(run.rank_) * c.count);
  GuardedBuffer& send = run.make(run.bytes() * run.n_);
  CaseRun::load(send, input);
  if (c.inPlace) {
    // Only this rank's block is specified afterwards; the others may have served as scratch.
    run.expect(send, "result (own block)", want, own);
    return run.finish(comm, chorusReduceScatter(send.data(), send.data() + own, c.count, c.type, c.op, comm, nullptr));
  }
  GuardedBuffer& recv = run.make(run.bytes());
  recv.fill(kUnwrittenByte);
  run.expect(recv, "result", want);
  run.expect(send, "sendbuff (must stay unchanged)", input);
  bool null = c.count == 0 && run.useNull();
  return run.finish(comm, chorusReduceScatter(null ? nullptr : send.data(), null ? nullptr : recv.data(), c.count,
                                              c.type, c.op, comm, nullptr));
}

// The value of element `index` of rank `rank`'s send buffer in the data-moving calls (no reduction).
std::vector<uint8_t> valuesOf(const CaseRun& run, int rank, size_t firstIndex, size_t count) {
  std::vector<uint8_t> v(count * run.es_);
  fillElements(run.c_.type, v.data(), count,
               [&](size_t i) { return inputValue(run.c_.type, chorusSum, rank, firstIndex + i, run.c_.salt); });
  return v;
}

CaseOutcome runAllToAll(chorusComm_t comm, CaseRun& run) {
  const CollectiveCase& c = run.c_;
  const size_t n = static_cast<size_t>(run.n_);
  GuardedBuffer& send = run.make(run.bytes() * n);
  std::vector<uint8_t> input = valuesOf(run, run.rank_, 0, c.count * n);
  CaseRun::load(send, input);
  GuardedBuffer& recv = run.make(run.bytes() * n);
  recv.fill(kUnwrittenByte);
  std::vector<uint8_t> want;
  for (int j = 0; j < run.n_; ++j) {
    std::vector<uint8_t> block = valuesOf(run, j, static_cast<size_t>(run.rank_) * c.count, c.count);
    want.insert(want.end(), block.begin(), block.end());
  }
  run.expect(recv, "result", want);
  run.expect(send, "sendbuff (must stay unchanged)", input);
  bool null = c.count == 0 && run.useNull();
  return run.finish(comm, chorusAllToAll(null ? nullptr : send.data(), null ? nullptr : recv.data(), c.count, c.type,
                                         comm, nullptr));
}

// Alltoallv's shape: how many elements rank `from` sends to rank `to` (0, about half of c.count, or c.count), and
// where blocks sit: in reverse peer order, one element apart, so that displacements matter.
size_t pairCount(const CollectiveCase& c, int from, int to) {
  return c.count * static_cast<size_t>((from + 2 * to + static_cast<int>(c.salt)) % 3) / 2;
}
std::vector<size_t> displacementsOf(const std::vector<size_t>& counts, size_t* extent) {
  std::vector<size_t> d(counts.size());
  size_t at = 0;
  for (size_t j = counts.size(); j-- > 0;) {
    d[j] = at;
    at += counts[j] + 1;
  }
  *extent = at;
  return d;
}

CaseOutcome runAllToAllv(chorusComm_t comm, CaseRun& run) {
  const CollectiveCase& c = run.c_;
  const int n = run.n_, r = run.rank_;
  std::vector<size_t> sendCounts(n), recvCounts(n);
  for (int j = 0; j < n; ++j) {
    sendCounts[j] = pairCount(c, r, j);
    recvCounts[j] = pairCount(c, j, r);
  }
  size_t sendExtent = 0, recvExtent = 0;
  std::vector<size_t> sdispls = displacementsOf(sendCounts, &sendExtent);
  std::vector<size_t> rdispls = displacementsOf(recvCounts, &recvExtent);
  GuardedBuffer& send = run.make(sendExtent * run.es_);
  std::vector<uint8_t> input = valuesOf(run, r, 0, sendExtent);
  CaseRun::load(send, input);
  GuardedBuffer& recv = run.make(recvExtent * run.es_);
  recv.fill(kUnwrittenByte);
  std::vector<uint8_t> want(recvExtent * run.es_, kUnwrittenByte);  // the gaps stay unwritten
  for (int j = 0; j < n; ++j) {
    size_t theirExtent = 0;
    std::vector<size_t> theirCounts(n);
    for (int k = 0; k < n; ++k) theirCounts[k] = pairCount(c, j, k);
    std::vector<size_t> theirDispls = displacementsOf(theirCounts, &theirExtent);
    std::vector<uint8_t> block = valuesOf(run, j, theirDispls[r], recvCounts[j]);
    if (!block.empty()) std::memcpy(want.data() + rdispls[j] * run.es_, block.data(), block.size());
  }
  run.expect(recv, "result (gaps between blocks must stay unwritten)", want);
  run.expect(send, "sendbuff (must stay unchanged)", input);
  return run.finish(comm, chorusAllToAllv(send.data(), sendCounts.data(), sdispls.data(), recv.data(),
                                          recvCounts.data(), rdispls.data(), c.type, comm, nullptr));
}

CaseOutcome runGather(chorusComm_t comm, CaseRun& run) {
  const CollectiveCase& c = run.c_;
  const bool isRoot = run.rank_ == c.root;
  const size_t n = static_cast<size_t>(run.n_);
  std::vector<uint8_t> input = valuesOf(run, run.rank_, 0, c.count);
  std::vector<uint8_t> want;
  for (int j = 0; j < run.n_; ++j) {
    std::vector<uint8_t> block = valuesOf(run, j, 0, c.count);
    want.insert(want.end(), block.begin(), block.end());
  }
  if (c.inPlace && isRoot) {
    GuardedBuffer& recv = run.make(run.bytes() * n);
    recv.fill(kUnwrittenByte);
    const size_t own = static_cast<size_t>(c.root) * run.bytes();
    CaseRun::load(recv, input, own);
    run.expect(recv, "result", want);
    return run.finish(comm, chorusGather(recv.data() + own, recv.data(), c.count, c.type, c.root, comm, nullptr));
  }
  GuardedBuffer& send = run.make(run.bytes());
  CaseRun::load(send, input);
  run.expect(send, "sendbuff (must stay unchanged)", input);
  void* recvPtr = nullptr;
  if (isRoot || !run.useNull()) {
    GuardedBuffer& recv = run.make(run.bytes() * n);
    recv.fill(kUnwrittenByte);
    run.expect(recv, isRoot ? "result" : "non-root recvbuff (must stay untouched)",
               isRoot ? want : run.filled(run.bytes() * n, kUnwrittenByte));
    recvPtr = recv.data();
  }
  bool null = c.count == 0 && run.useNull();
  return run.finish(comm, chorusGather(null ? nullptr : send.data(), null ? nullptr : recvPtr, c.count, c.type, c.root,
                                       comm, nullptr));
}

CaseOutcome runScatter(chorusComm_t comm, CaseRun& run) {
  const CollectiveCase& c = run.c_;
  const bool isRoot = run.rank_ == c.root;
  const size_t n = static_cast<size_t>(run.n_);
  std::vector<uint8_t> all = valuesOf(run, c.root, 0, c.count * n);
  std::vector<uint8_t> want = valuesOf(run, c.root, static_cast<size_t>(run.rank_) * c.count, c.count);
  if (c.inPlace && isRoot) {
    GuardedBuffer& send = run.make(run.bytes() * n);
    CaseRun::load(send, all);
    run.expect(send, "root's sendbuff (must stay unchanged)", all);
    const size_t own = static_cast<size_t>(c.root) * run.bytes();
    return run.finish(comm, chorusScatter(send.data(), send.data() + own, c.count, c.type, c.root, comm, nullptr));
  }
  GuardedBuffer& recv = run.make(run.bytes());
  recv.fill(kUnwrittenByte);
  run.expect(recv, "result", want);
  const void* sendPtr = nullptr;
  if (isRoot) {
    GuardedBuffer& send = run.make(run.bytes() * n);
    CaseRun::load(send, all);
    run.expect(send, "root's sendbuff (must stay unchanged)", all);
    sendPtr = send.data();
  } else if (!run.useNull()) {
    GuardedBuffer& send = run.make(run.bytes() * n);
    send.fill(kIgnoredByte);
    run.expect(send, "non-root sendbuff (must be ignored)", run.filled(run.bytes() * n, kIgnoredByte));
    sendPtr = send.data();
  }
  bool null = c.count == 0 && run.useNull();
  return run.finish(comm, chorusScatter(null ? nullptr : sendPtr, null ? nullptr : recv.data(), c.count, c.type,
                                        c.root, comm, nullptr));
}

CaseOutcome runSendRecv(chorusComm_t comm, CaseRun& run) {
  const CollectiveCase& c = run.c_;
  const int to = (run.rank_ + 1) % run.n_, from = (run.rank_ - 1 + run.n_) % run.n_;
  std::vector<uint8_t> input = valuesOf(run, run.rank_, 0, c.count);
  GuardedBuffer& send = run.make(run.bytes());
  CaseRun::load(send, input);
  GuardedBuffer& recv = run.make(run.bytes());
  recv.fill(kUnwrittenByte);
  run.expect(recv, "result", valuesOf(run, from, 0, c.count));
  run.expect(send, "sendbuff (must stay unchanged)", input);
  bool null = c.count == 0 && run.useNull();
  chorusResult_t result = chorusGroupStart();
  if (result == chorusSuccess) result = chorusSend(null ? nullptr : send.data(), c.count, c.type, to, comm, nullptr);
  if (result == chorusSuccess) result = chorusRecv(null ? nullptr : recv.data(), c.count, c.type, from, comm, nullptr);
  const chorusResult_t ended = chorusGroupEnd();
  return run.finish(comm, result != chorusSuccess ? result : ended);
}

}  // namespace

bool kindReduces(CollectiveKind kind) {
  return kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduce ||
         kind == CollectiveKind::kReduceScatter;
}

bool kindHasRoot(CollectiveKind kind) {
  return kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce || kind == CollectiveKind::kGather ||
         kind == CollectiveKind::kScatter;
}

const char* kindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "allreduce";
    case CollectiveKind::kBroadcast: return "broadcast";
    case CollectiveKind::kReduce: return "reduce";
    case CollectiveKind::kAllGather: return "allgather";
    case CollectiveKind::kReduceScatter: return "reducescatter";
    case CollectiveKind::kAllToAll: return "alltoall";
    case CollectiveKind::kAllToAllv: return "alltoallv";
    case CollectiveKind::kGather: return "gather";
    case CollectiveKind::kScatter: return "scatter";
    case CollectiveKind::kSendRecv: return "sendrecv";
  }
  return "unknown";
}

std::string describeCase(const CollectiveCase& c) {
  std::ostringstream out;
  out << kindName(c.kind) << "(" << chorusTypeName(c.type);
  if (kindReduces(c.kind)) out << ", " << chorusOpName(c.op);
  out << ", count " << c.count;
  if (kindHasRoot(c.kind)) out << ", root " << c.root;
  out << ", " << (c.inPlace ? "in-place" : "out-of-place");
  if (c.nullUnused) out << ", NULL unused buffers";
  if (c.misalign) out << ", misaligned by " << c.misalign;
  out << ", salt " << c.salt << ")";
  return out.str();
}

CaseOutcome runCase(chorusComm_t comm, int rank, int nranks, const CollectiveCase& c) {
  CaseRun run(rank, nranks, c);
  switch (c.kind) {
    case CollectiveKind::kAllReduce: return runAllReduce(comm, run);
    case CollectiveKind::kBroadcast: return runBroadcast(comm, run);
    case CollectiveKind::kReduce: return runReduce(comm, run);
    case CollectiveKind::kAllGather: return runAllGather(comm, run);
    case CollectiveKind::kReduceScatter: return runReduceScatter(comm, run);
    case CollectiveKind::kAllToAll: return runAllToAll(comm, run);
    case CollectiveKind::kAllToAllv: return runAllToAllv(comm, run);
    case CollectiveKind::kGather: return runGather(comm, run);
    case CollectiveKind::kScatter: return runScatter(comm, run);
    case CollectiveKind::kSendRecv: return runSendRecv(comm, run);
  }
  return {true, "unknown collective kind"};
}

}  // namespace chorus::test
