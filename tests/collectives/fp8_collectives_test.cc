// fp8 through allreduce, reduce and reduce-scatter at 2-4 ranks, each algorithm, checking exact bytes: rounding to
// nearest even, saturation (e4m3 448, e5m2 57344, e5m2 infinity included), NaN, subnormals, negative zero and
// average. Each element's inputs make the result independent of the order the ranks are combined in (one rounding
// step at most, saturation monotone), so any algorithm must give these bytes. Then allgather carries every one of
// the 256 codes unchanged. (The typed matrix of the other collective tests covers fp8 in every collective too.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "reduce/fp8.h"
#include "tests/collectives/suite_knobs.h"
#include "tests/harness/thread_world.h"

namespace chorus::test {
namespace {

// One element: what rank r contributes (first for rank 0, `others` for the rest) and the expected result.
struct Element {
  uint8_t first;
  uint8_t others;
  uint8_t want;
};

struct Format {
  const char* name;
  chorusDataType_t type;
  uint8_t (*encode)(float);
  float (*decode)(uint8_t);
};

const Format kE4m3{"e4m3", chorusFloat8e4m3, floatToFp8e4m3, fp8e4m3ToFloat};
const Format kE5m2{"e5m2", chorusFloat8e5m2, floatToFp8e5m2, fp8e5m2ToFloat};

bool isNan(const Format& f, uint8_t b) { return std::isnan(f.decode(b)); }

// The elements of one (format, op, nranks) check, with the expected bytes written out where they show a rule.
std::vector<Element> elementsFor(const Format& f, chorusRedOp_t op, int nranks) {
  auto e = [&f](float x) { return f.encode(x); };
  const bool e4m3 = f.type == chorusFloat8e4m3;
  const uint8_t top = e4m3 ? 0x7e : 0x7b;         // 448, 57344
  const uint8_t nan = 0x7f;                       // a NaN in both formats
  const uint8_t minSubnormal = 0x01;              // 2^-9, 2^-16
  const float tieStep = e4m3 ? 0.0625f : 0.125f;  // half an ulp of 1.0
  std::vector<Element> out;
  switch (op) {
    case chorusSum:
      out.push_back({e(1.0f), 0x00, e(1.0f)});                           // 1 + 0s
      out.push_back({e(1.0f), e(1.0f), e(static_cast<float>(nranks))});  // exact small integers
      out.push_back({e(tieStep), 0x00, e(tieStep)});
      out.push_back({top, top, top});  // saturates at every step
      out.push_back(
          {static_cast<uint8_t>(top | 0x80), static_cast<uint8_t>(top | 0x80), static_cast<uint8_t>(top | 0x80)});
      out.push_back({nan, e(1.0f), nan});
      out.push_back({minSubnormal, minSubnormal, static_cast<uint8_t>(nranks)});  // n * the smallest subnormal
      out.push_back({0x80, 0x80, 0x80});                                          // -0 + -0 = -0
      if (nranks == 2) {
        out.push_back({e(1.0f), e(tieStep), e(1.0f)});                    // the 1 / 1+ulp midpoint: even 1.0
        out.push_back({e(1.0f), e(3 * tieStep), e(1.0f + 4 * tieStep)});  // 1 + 1.5 ulp: midpoint, even is 1+2ulp
        out.push_back({e(1.0f), e(tieStep / 2), e(1.0f)});                // below the midpoint
      }
      if (!e4m3) out.push_back({0x7c, 0x00, top});  // e5m2 infinity saturates
      if (!e4m3) out.push_back({0xfc, 0x00, static_cast<uint8_t>(top | 0x80)});
      break;
    case chorusProd:
      out.push_back({e(2.0f), e(2.0f), e(std::ldexp(1.0f, nranks))});
      out.push_back({e(-1.0f), e(1.0f), e(-1.0f)});
      out.push_back({top, e(2.0f), top});  // 448 * 2: saturates
      out.push_back({nan, e(1.0f), nan});
      break;
    case chorusMax:
      out.push_back({e(-3.0f), e(2.0f), e(2.0f)});
      out.push_back({e(5.0f), e(-1.0f), e(5.0f)});
      out.push_back({nan, e(1.0f), e(1.0f)});  // a NaN operand is ignored (IEEE fmax)
      break;
    case chorusMin:
      out.push_back({e(-3.0f), e(2.0f), e(-3.0f)});
      out.push_back({minSubnormal, e(1.0f), minSubnormal});
      out.push_back({nan, e(1.0f), e(1.0f)});
      break;
    default:  // chorusAvg: one rank 1.0 (or 2.0), the others 0; the sum is exact, the division rounds once
      out.push_back({e(1.0f), 0x00, e(1.0f / static_cast<float>(nranks))});
      out.push_back({e(2.0f), 0x00, e(2.0f / static_cast<float>(nranks))});
      out.push_back({top, 0x00, e(f.decode(top) / static_cast<float>(nranks))});
      break;
  }
  return out;
}

std::string describe(const Format& f, chorusRedOp_t op, const char* call, int rank, size_t i, uint8_t got,
                     uint8_t want) {
  return std::string(f.name) + " " + chorusOpName(op) + " " + call + " rank " + std::to_string(rank) + " element " +
         std::to_string(i) + ": got " + std::to_string(got) + ", want " + std::to_string(want);
}

void expectBytes(const Format& f, chorusRedOp_t op, const char* call, int rank, const std::vector<Element>& elements,
                 const uint8_t* got) {
  for (size_t i = 0; i < elements.size(); ++i) {
    const uint8_t want = elements[i].want;
    const bool ok = isNan(f, want) ? isNan(f, got[i]) : got[i] == want;
    EXPECT_TRUE(ok) << describe(f, op, call, rank, i, got[i], want);
  }
}

class Fp8CollectivesTest : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(Fp8CollectivesTest, ReductionsGiveExactBytes) {
  const auto& [nranks, algo] = GetParam();
  Config config = suiteConfig();
  config.algo = algo;
  runThreadWorld(
      nranks,
      [&](chorusComm_t comm, int rank) {
        for (const Format* f : {&kE4m3, &kE5m2}) {
          for (chorusRedOp_t op : {chorusSum, chorusProd, chorusMax, chorusMin, chorusAvg}) {
            const std::vector<Element> elements = elementsFor(*f, op, nranks);
            const size_t n = elements.size();
            std::vector<uint8_t> mine(n);
            for (size_t i = 0; i < n; ++i) mine[i] = rank == 0 ? elements[i].first : elements[i].others;

            std::vector<uint8_t> all(n, 0x55);
            ASSERT_EQ(chorusAllReduce(mine.data(), all.data(), n, f->type, op, comm, nullptr), chorusSuccess);
            expectBytes(*f, op, "allreduce", rank, elements, all.data());

            const int root = nranks - 1;
            std::vector<uint8_t> reduced(n, 0x55);
            ASSERT_EQ(chorusReduce(mine.data(), reduced.data(), n, f->type, op, root, comm, nullptr), chorusSuccess);
            if (rank == root) expectBytes(*f, op, "reduce", rank, elements, reduced.data());

            // Reduce-scatter: every rank's block holds the same elements.
            std::vector<uint8_t> blocks(n * static_cast<size_t>(nranks));
            for (int b = 0; b < nranks; ++b) std::copy(mine.begin(), mine.end(), blocks.begin() + b * n);
            std::vector<uint8_t> block(n, 0x55);
            ASSERT_EQ(chorusReduceScatter(blocks.data(), block.data(), n, f->type, op, comm, nullptr), chorusSuccess);
            expectBytes(*f, op, "reducescatter", rank, elements, block.data());

            // In place, as frameworks call it.
            std::vector<uint8_t> inPlace = mine;
            ASSERT_EQ(chorusAllReduce(inPlace.data(), inPlace.data(), n, f->type, op, comm, nullptr), chorusSuccess);
            expectBytes(*f, op, "allreduce in place", rank, elements, inPlace.data());
          }
        }
      },
      kCaseDeadline, config);
}

TEST_P(Fp8CollectivesTest, AllGatherCarriesEveryCodeUnchanged) {
  const auto& [nranks, algo] = GetParam();
  Config config = suiteConfig();
  config.algo = algo;
  runThreadWorld(
      nranks,
      [&](chorusComm_t comm, int rank) {
        for (chorusDataType_t type : {chorusFloat8e4m3, chorusFloat8e5m2}) {
          std::vector<uint8_t> mine(256);
          for (int b = 0; b < 256; ++b) mine[b] = static_cast<uint8_t>(b + rank);
          std::vector<uint8_t> all(256 * static_cast<size_t>(nranks), 0x55);
          ASSERT_EQ(chorusAllGather(mine.data(), all.data(), 256, type, comm, nullptr), chorusSuccess);
          for (int r = 0; r < nranks; ++r) {
            for (int b = 0; b < 256; ++b) {
              ASSERT_EQ(all[r * 256 + b], static_cast<uint8_t>(b + r)) << "rank " << rank << " from " << r;
            }
          }
        }
      },
      kCaseDeadline, config);
}

INSTANTIATE_TEST_SUITE_P(Worlds, Fp8CollectivesTest,
                         ::testing::Combine(::testing::Values(2, 3, 4),
                                            ::testing::Values("ring", "recursive_doubling", "")),
                         [](const auto& info) {
                           const std::string algo = std::get<1>(info.param);
                           return std::to_string(std::get<0>(info.param)) + "ranks_" +
                                  (algo.empty() ? std::string("bysize") : algo);
                         });

}  // namespace
}  // namespace chorus::test
