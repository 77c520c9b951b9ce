// chorus-soak's operations: drawn from a seeded RNG so every rank draws the same sequence without talking, with
// per-element values every rank can compute for every other rank, chosen so that each reduction is exact
// (small integers, in range for the type and op; averages of multiples of the rank count).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "chorus/chorus.h"

namespace chorus::soak {

enum class Kind { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter };
inline constexpr int kKinds = 5;

struct SoakOp {
  uint64_t index = 0;
  Kind kind = Kind::kAllReduce;
  chorusDataType_t type = chorusInt32;
  chorusRedOp_t op = chorusSum;
  int root = 0;
  size_t count = 0;  // elements per rank: the whole buffer (allreduce, broadcast, reduce) or one block
  bool inPlace = false;
};

// The i-th op of the sequence for nranks ranks; identical on every rank for the same seed.
class OpSequence {
 public:
  OpSequence(uint64_t seed, int nranks, size_t maxBytes);
  SoakOp next();

 private:
  std::mt19937_64 rng_;
  int nranks_;
  size_t maxBytes_;
  uint64_t index_ = 0;
};

// Runs op on comm with this rank's values and checks every element it must produce (and that nothing past the
// buffers, nor a non-root's reduce output, was touched). Returns "" when right, else what was wrong.
// Throws std::runtime_error when the call itself fails (with the library's message).
std::string runAndCheck(chorusComm_t comm, int rank, int nranks, uint64_t seed, const SoakOp& op);

// "allreduce int32 sum count 123 root 0 (in place)" for messages.
std::string describe(const SoakOp& op);

}  // namespace chorus::soak
