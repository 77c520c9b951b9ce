#include "tests/collectives/case_matrix.h"

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
  const bool hasOp = grid.kind != CollectiveKind::kBroadcast && grid.kind != CollectiveKind::kAllGather;
  const bool hasRoot = grid.kind == CollectiveKind::kBroadcast || grid.kind == CollectiveKind::kReduce;
  const std::vector<chorusRedOp_t> ops = hasOp ? grid.ops : std::vector<chorusRedOp_t>{chorusSum};
  const std::vector<int> roots = hasRoot ? grid.roots : std::vector<int>{0};
  std::vector<CollectiveCase> out;
  uint32_t salt = firstSalt;
  size_t outOfPlace = 0;
  for (size_t count : grid.counts) {
    for (int root : roots) {
      for (chorusDataType_t type : grid.types) {
        for (chorusRedOp_t op : ops) {
          for (bool inPlace : grid.inPlace) {
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
  return out;
}

}  // namespace chorus::test
