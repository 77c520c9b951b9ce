#include "tests/collectives/case_matrix.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace chorus::test {

std::vector<chorusDataType_t> allTypes() {
  std::vector<chorusDataType_t> out;
  for (int t = 0; t < chorusNumTypes; ++t) out.push_back(static_cast<chorusDataType_t>(t));
  return out;
}

std::vector<chorusRedOp_t> allOps() {
  std::vector<chorusRedOp_t> out;
  for (int o = 0; o < chorusNumOps; ++o) out.push_back(static_cast<chorusRedOp_t>(o));
  return out;
}

namespace {

// The N of CHORUS_TEST_CASE_SAMPLE (1 when unset); anything but a positive integer is a mistake worth stopping for.
uint32_t caseSampleStride() {
  const char* text = std::getenv(kCaseSampleVariable);
  if (text == nullptr || *text == '\0') return 1;
  char* end = nullptr;
  const unsigned long n = std::strtoul(text, &end, 10);
  if (*end != '\0' || n == 0 || n > 1000) {
    throw std::invalid_argument(std::string(kCaseSampleVariable) + "=" + text + ": expected an integer in 1..1000");
  }
  return static_cast<uint32_t>(n);
}

// Keeps the cases whose salt is a multiple of stride, and the first case if that leaves none.
void sample(std::vector<CollectiveCase>& cases, uint32_t stride) {
  if (stride <= 1 || cases.empty()) return;
  std::vector<CollectiveCase> kept;
  for (const CollectiveCase& c : cases) {
    if (c.salt % stride == 0) kept.push_back(c);
  }
  if (kept.empty()) kept.push_back(cases.front());
  cases.swap(kept);
}

}  // namespace

std::vector<size_t> standardCounts() { return {0, 1, 7, 1000, 5000, 70001}; }

std::vector<int> rootsFor(int nranks) {
  if (nranks <= 5) {
    std::vector<int> all;
    for (int r = 0; r < nranks; ++r) all.push_back(r);
    return all;
  }
  return {0, nranks / 2 - 1, nranks - 1};
}

std::vector<CollectiveCase> casesOf(const CaseGrid& grid, uint32_t firstSalt) {
  const bool hasOp = kindReduces(grid.kind);
  const bool hasRoot = kindHasRoot(grid.kind);
  const std::vector<chorusRedOp_t> ops = hasOp ? grid.ops : std::vector<chorusRedOp_t>{chorusSum};
  const std::vector<int> roots = hasRoot ? grid.roots : std::vector<int>{0};
  // Alltoall(v) and send/receive have no in-place form.
  const bool outOfPlaceOnly = grid.kind == CollectiveKind::kAllToAll || grid.kind == CollectiveKind::kAllToAllv ||
                              grid.kind == CollectiveKind::kSendRecv;
  const std::vector<bool> placements = outOfPlaceOnly ? std::vector<bool>{false} : grid.inPlace;
  std::vector<CollectiveCase> out;
  uint32_t salt = firstSalt;
  size_t outOfPlace = 0;
  for (size_t count : grid.counts) {
    for (int root : roots) {
      for (chorusDataType_t type : grid.types) {
        for (chorusRedOp_t op : ops) {
          if (op >= chorusBand && type > chorusUint64) continue;  // bitwise ops take integers only
          for (bool inPlace : placements) {
            CollectiveCase c;
            c.kind = grid.kind;
            c.type = type;
            c.op = op;
            c.count = count;
            c.root = root;
            c.inPlace = inPlace;
            c.salt = salt++;
            if (!inPlace) {
              c.nullUnused = outOfPlace % 2 == 1;
              c.misalign = outOfPlace % 7 == 3 ? 1 : 0;
              ++outOfPlace;
            }
            out.push_back(c);
          }
        }
      }
    }
  }
  sample(out, caseSampleStride());
  return out;
}

}  // namespace chorus::test
