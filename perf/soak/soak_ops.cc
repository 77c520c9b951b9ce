#include "perf/soak/soak_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "perf/chorus_perf/half_float.h"

namespace chorus::soak {

namespace {

constexpr size_t kGuardBytes = 64;
constexpr uint8_t kGuard = 0xa5;
constexpr uint8_t kUntouched = 0x5a;

uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

bool isSigned(chorusDataType_t t) { return t != chorusUint8 && t != chorusUint32 && t != chorusUint64; }

// The largest magnitude a value or any partial result may reach in type t while staying exact.
int64_t exactLimit(chorusDataType_t t) {
  switch (t) {
    case chorusInt8:
      return 127;
    case chorusUint8:
      return 255;
    case chorusInt32:
    case chorusUint32:
      return 1 << 30;
    case chorusInt64:
    case chorusUint64:
      return 1ll << 50;
    case chorusFloat16:
      return 2048;  // every integer up to 2^11 is a float16
    case chorusBfloat16:
      return 256;  // every integer up to 2^8 is a bfloat16
    case chorusFloat32:
      return 1 << 24;
    case chorusFloat64:
      return 1ll << 50;
    default:
      return 1;
  }
}

// Rank r's value at element i of op: small enough that reducing n of them, in any order, is exact.
int64_t valueOf(uint64_t seed, const SoakOp& op, int rank, int nranks, size_t i) {
  const uint64_t h = mix(seed ^ mix(op.index * 0x100000001b3ull + static_cast<uint64_t>(rank) * 0x9e37 + i));
  const int64_t limit = exactLimit(op.type);
  const bool reduces = op.kind == Kind::kAllReduce || op.kind == Kind::kReduce || op.kind == Kind::kReduceScatter;
  if (!reduces) {
    const int64_t v = static_cast<int64_t>(h % static_cast<uint64_t>(limit + 1));
    return (isSigned(op.type) && (h >> 63)) ? -v : v;
  }
  switch (op.op) {
    case chorusProd: {
      // |product| <= 2: one rank per element may contribute a 2, the others +-1.
      int64_t v = (i % static_cast<size_t>(nranks) == static_cast<size_t>(rank) && (h & 2)) ? 2 : 1;
      return (isSigned(op.type) && (h & 1)) ? -v : v;
    }
    case chorusAvg: {
      // Multiples of nranks, so that the sum divides exactly.
      const int64_t w = limit / nranks / nranks;
      int64_t v = w == 0 ? 0 : static_cast<int64_t>(h % static_cast<uint64_t>(w + 1));
      if (isSigned(op.type) && (h >> 63)) v = -v;
      return v * nranks;
    }
    default: {
      const int64_t w = limit / nranks;
      int64_t v = static_cast<int64_t>(h % static_cast<uint64_t>(w + 1));
      return (isSigned(op.type) && (h >> 63)) ? -v : v;
    }
  }
}

int64_t combine(chorusRedOp_t op, int64_t a, int64_t b) {
  switch (op) {
    case chorusSum:
    case chorusAvg:
      return a + b;
    case chorusProd:
      return a * b;
    case chorusMax:
      return std::max(a, b);
    case chorusMin:
      return std::min(a, b);
    case chorusBand:
      return a & b;
    case chorusBor:
      return a | b;
    case chorusBxor:
      return a ^ b;
    default:
      return 0;
  }
}

// Writes v as element i of type t at p.
void store(void* p, size_t i, chorusDataType_t t, int64_t v) {
  switch (t) {
    case chorusInt8:
      static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v);
      break;
    case chorusUint8:
      static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v);
      break;
    case chorusInt32:
      static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
      break;
    case chorusUint32:
      static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v);
      break;
    case chorusInt64:
      static_cast<int64_t*>(p)[i] = v;
      break;
    case chorusUint64:
      static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v);
      break;
    case chorusFloat16:
      static_cast<uint16_t*>(p)[i] = perf::floatToHalfBits(static_cast<float>(v));
      break;
    case chorusBfloat16:
      static_cast<uint16_t*>(p)[i] = perf::floatToBfloat16Bits(static_cast<float>(v));
      break;
    case chorusFloat32:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      break;
    case chorusFloat64:
      static_cast<double*>(p)[i] = static_cast<double>(v);
      break;
    default:
      break;
  }
}

const char* kindName(Kind k) {
  switch (k) {
    case Kind::kAllReduce:
      return "allreduce";
    case Kind::kBroadcast:
      return "broadcast";
    case Kind::kReduce:
      return "reduce";
    case Kind::kAllGather:
      return "allgather";
    case Kind::kReduceScatter:
      return "reducescatter";
  }
  return "?";
}

// A buffer with guard bytes after it, so that an overrun is seen.
struct Guarded {
  explicit Guarded(size_t bytes, uint8_t fill) : data(bytes + kGuardBytes, fill), size(bytes) {
    std::memset(data.data() + bytes, kGuard, kGuardBytes);
  }
  void* ptr() { return data.data(); }
  bool guardIntact() const {
    return std::all_of(data.begin() + static_cast<long>(size), data.end(), [](uint8_t b) { return b == kGuard; });
  }
  std::vector<uint8_t> data;
  size_t size;
};

void check(chorusResult_t r, chorusComm_t comm, const SoakOp& op) {
  if (r != chorusSuccess) {
    throw std::runtime_error(describe(op) + " failed: " + chorusGetErrorString(r) + ": " + chorusGetLastError(comm));
  }
}

}  // namespace

OpSequence::OpSequence(uint64_t seed, int nranks, size_t maxBytes)
    : rng_(seed), nranks_(nranks), maxBytes_(std::max<size_t>(maxBytes, 16)) {}

SoakOp OpSequence::next() {
  static const chorusDataType_t kTypes[] = {chorusInt8,   chorusUint8,   chorusInt32,    chorusUint32,  chorusInt64,
                                            chorusUint64, chorusFloat16, chorusBfloat16, chorusFloat32, chorusFloat64};
  SoakOp op;
  op.index = index_++;
  op.kind = static_cast<Kind>(rng_() % kKinds);
  op.type = kTypes[rng_() % (sizeof(kTypes) / sizeof(kTypes[0]))];
  op.op = static_cast<chorusRedOp_t>(rng_() % chorusNumOps);
  if (op.op >= chorusBand && op.type > chorusUint64) op.op = chorusSum;  // bitwise ops take integers only
  op.root = static_cast<int>(rng_() % static_cast<uint64_t>(nranks_));
  op.inPlace = rng_() % 3 == 0;
  // Sizes skewed small: 1 in 20 is empty, the rest log-uniform from one element to maxBytes in all.
  const size_t typeBytes = chorusTypeSize(op.type);
  size_t bytes = 0;
  const uint64_t r = rng_();
  if (r % 20 != 0) {
    const double unit = static_cast<double>(rng_() >> 11) * 0x1p-53;
    bytes = static_cast<size_t>(std::exp(unit * std::log(static_cast<double>(maxBytes_))));
  }
  size_t elements = bytes / typeBytes;
  if (op.kind == Kind::kAllGather || op.kind == Kind::kReduceScatter) elements /= static_cast<size_t>(nranks_);
  op.count = elements;
  return op;
}

std::string describe(const SoakOp& op) {
  std::ostringstream os;
  os << "op #" << op.index << " " << kindName(op.kind) << " " << chorusTypeName(op.type);
  if (op.kind != Kind::kBroadcast && op.kind != Kind::kAllGather) os << " " << chorusOpName(op.op);
  os << " count " << op.count;
  if (op.kind == Kind::kBroadcast || op.kind == Kind::kReduce) os << " root " << op.root;
  if (op.inPlace) os << " (in place)";
  return os.str();
}

std::string runAndCheck(chorusComm_t comm, int rank, int nranks, uint64_t seed, const SoakOp& op) {
  const size_t tb = chorusTypeSize(op.type);
  const size_t n = static_cast<size_t>(nranks);
  const size_t count = op.count;
  // Expected element i of the result, computed from every rank's values.
  auto reduced = [&](size_t i) {
    int64_t acc = valueOf(seed, op, 0, nranks, i);
    for (int r = 1; r < nranks; ++r) acc = combine(op.op, acc, valueOf(seed, op, r, nranks, i));
    if (op.op == chorusAvg) acc /= nranks;
    return acc;
  };
  Guarded expected(count * (op.kind == Kind::kAllGather ? n : 1) * tb, 0);
  std::string wrong;
  auto compare = [&](Guarded& got, size_t bytes, const char* what) {
    if (!got.guardIntact()) {
      wrong = std::string(what) + ": wrote past the end of its buffer";
    } else if (std::memcmp(got.ptr(), expected.ptr(), bytes) != 0) {
      size_t at = 0;
      while (at < bytes && got.data[at] == expected.data[at]) ++at;
      wrong = std::string(what) + ": first wrong byte at " + std::to_string(at) + " (element " +
              std::to_string(at / tb) + ")";
    }
  };
  switch (op.kind) {
    case Kind::kAllReduce:
    case Kind::kReduce: {
      Guarded send(count * tb, 0), recv(count * tb, kUntouched);
      for (size_t i = 0; i < count; ++i) store(send.ptr(), i, op.type, valueOf(seed, op, rank, nranks, i));
      void* out = op.inPlace ? send.ptr() : recv.ptr();
      Guarded& result = op.inPlace ? send : recv;
      if (op.kind == Kind::kAllReduce) {
        check(chorusAllReduce(send.ptr(), out, count, op.type, op.op, comm, nullptr), comm, op);
      } else {
        check(chorusReduce(send.ptr(), out, count, op.type, op.op, op.root, comm, nullptr), comm, op);
      }
      if (op.kind == Kind::kAllReduce || rank == op.root) {
        for (size_t i = 0; i < count; ++i) store(expected.ptr(), i, op.type, reduced(i));
        compare(result, count * tb, "result");
      } else if (!op.inPlace) {
        std::memset(expected.ptr(), kUntouched, count * tb);
        compare(recv, count * tb, "a non-root's recvbuff");
      }
      break;
    }
    case Kind::kBroadcast: {
      Guarded send(count * tb, 0), recv(count * tb, kUntouched);
      if (rank == op.root) {
        for (size_t i = 0; i < count; ++i) store(send.ptr(), i, op.type, valueOf(seed, op, rank, nranks, i));
      }
      Guarded& result = op.inPlace ? send : recv;
      check(chorusBroadcast(send.ptr(), result.ptr(), count, op.type, op.root, comm, nullptr), comm, op);
      for (size_t i = 0; i < count; ++i) store(expected.ptr(), i, op.type, valueOf(seed, op, op.root, nranks, i));
      compare(result, count * tb, "result");
      break;
    }
    case Kind::kAllGather: {
      Guarded recv(n * count * tb, kUntouched), send(count * tb, 0);
      void* in = op.inPlace ? recv.data.data() + rank * count * tb : send.ptr();
      for (size_t i = 0; i < count; ++i) store(in, i, op.type, valueOf(seed, op, rank, nranks, i));
      check(chorusAllGather(in, recv.ptr(), count, op.type, comm, nullptr), comm, op);
      for (size_t r = 0; r < n; ++r) {
        for (size_t i = 0; i < count; ++i) {
          store(expected.ptr(), r * count + i, op.type, valueOf(seed, op, static_cast<int>(r), nranks, i));
        }
      }
      compare(recv, n * count * tb, "result");
      break;
    }
    case Kind::kReduceScatter: {
      Guarded send(n * count * tb, 0), recv(count * tb, kUntouched);
      for (size_t j = 0; j < n * count; ++j) store(send.ptr(), j, op.type, valueOf(seed, op, rank, nranks, j));
      void* out = op.inPlace ? send.data.data() + rank * count * tb : recv.ptr();
      check(chorusReduceScatter(send.ptr(), out, count, op.type, op.op, comm, nullptr), comm, op);
      for (size_t i = 0; i < count; ++i) store(expected.ptr(), i, op.type, reduced(rank * count + i));
      if (op.inPlace) {
        if (std::memcmp(out, expected.ptr(), count * tb) != 0) wrong = "result (in place) differs";
        if (!send.guardIntact()) wrong = "wrote past the end of sendbuff";
      } else {
        compare(recv, count * tb, "result");
      }
      break;
    }
  }
  return wrong.empty() ? wrong : describe(op) + ": " + wrong;
}

}  // namespace chorus::soak
