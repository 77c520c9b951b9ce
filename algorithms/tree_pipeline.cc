#include "algorithms/tree_pipeline.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "algorithms/patterns/ring_pattern.h"
#include "core/datatype.h"
#include "core/error.h"

namespace chorus {

namespace {

// Ordering, and why it cannot deadlock. Every rank runs its steps (one slice of one tree, going up or down) in the
// order of a key that both ends of every message agree on: a step going up at depth d has key slice - d, a step
// going down has key slice + d. Each message carries the key, tree and direction of the step that sends it; a
// step only waits for messages with smaller keys; and every rank posts its receives in (key, tree, direction)
// order, which is also the order in which their senders post them, so that messages on each connection match in
// posting order. The smallest unfinished step in the whole world then always has what it waits for, and the keys
// make a slice at depth d go up d steps ahead of the slice coming down (the pipelined timing).
enum Direction : int { kUp = 0, kDown = 1 };

// Receives run at most this many keys ahead of the step being run (a bound on queued receives, not a necessity).
constexpr long long kLookahead = 8;

struct Step {
  long long key;
  int tree;
  int direction;
  size_t slice;
};

// A message this rank receives: from one of its children (going up) or from its parent (going down).
struct Incoming {
  long long key;  // of the sender's step
  int tree;
  int direction;
  int child;  // index among this rank's children over both trees; -1 for the parent
  size_t slice;
};

class TreeRun {
 public:
  TreeRun(PeerIO& io, const TreePipelineSpec& spec) : io_(io), spec_(spec), es_(typeSize(spec.type)) {
    const size_t sliceElems = io.sliceBytes() / es_;
    for (int t = 0; t < 2; ++t) {
      half_[t] = splitEven(spec.count, 2, static_cast<size_t>(t));
      slices_[t] = half_[t].len == 0 ? 0 : slicesFor(half_[t].len, 1, sliceElems);
      const TreeNode& node = spec.trees.tree(t);
      childBase_[t] = static_cast<int>(childRank_.size());
      for (int c = 0; c < node.numChildren; ++c) childRank_.push_back(node.child[c]);
    }
    const int children = static_cast<int>(childRank_.size());
    if (children > 2) {
      throwInternal(errorContext(io.rank()) + ": tree node with " + std::to_string(children) +
                    " children over both trees");
    }
    // Landing slots: a pool per child when partial sums stay in recv; else the landing pool is shared by the
    // children and the results pool holds the partial sums on their way to the parent.
    resultSlots_ = spec.up && !spec.partialsInRecv;
    window_ = resultSlots_ ? io.slots() / 2 : io.slots();
    if (window_ < 1) throwInternal("tree pipeline needs at least two staging slots");
    resultSend_.resize(static_cast<size_t>(io.slots()));
    resultBusy_.assign(static_cast<size_t>(io.slots()), false);
    childReq_.resize(static_cast<size_t>(children));
    childConsumed_.assign(static_cast<size_t>(children), 0);
    for (int j = 0; j < children; ++j) childReq_[j].resize(slices_[childTree(j)]);
    for (int t = 0; t < 2; ++t) parentReq_[t].resize(slices_[t]);
  }

  void run() {
    std::vector<Step> steps;
    std::vector<Incoming> incoming;
    for (int t = 0; t < 2; ++t) {
      const TreeNode& node = spec_.trees.tree(t);
      const long long d = node.depth;
      for (size_t s = 0; s < slices_[t]; ++s) {
        const long long ls = static_cast<long long>(s);
        if (spec_.up) {
          steps.push_back({ls - d, t, kUp, s});
          for (int c = 0; c < node.numChildren; ++c) incoming.push_back({ls - (d + 1), t, kUp, childBase_[t] + c, s});
        }
        if (spec_.down) {
          steps.push_back({ls + d, t, kDown, s});
          if (node.parent >= 0) incoming.push_back({ls + d - 1, t, kDown, -1, s});
        }
      }
    }
    std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
      return std::tie(a.key, a.tree, a.direction, a.slice) < std::tie(b.key, b.tree, b.direction, b.slice);
    });
    std::sort(incoming.begin(), incoming.end(), [](const Incoming& a, const Incoming& b) {
      return std::tie(a.key, a.tree, a.direction, a.child) < std::tie(b.key, b.tree, b.direction, b.child);
    });
    incoming_ = &incoming;
    for (const Step& step : steps) {
      postReceives(step.key);
      if (step.direction == kUp) {
        up(step.tree, step.slice);
      } else {
        down(step.tree, step.slice);
      }
    }
    if (nextIncoming_ != incoming.size()) throwInternal("tree pipeline finished with receives never posted");
    const bool rootOfBoth = spec_.trees.tree(0).parent < 0 && spec_.trees.tree(1).parent < 0;
    // A broadcast root's own copy overlaps its sends, which read from send.
    if (!spec_.up && rootOfBoth && spec_.send != spec_.recv) io_.copy(spec_.recv, spec_.send, spec_.count * es_);
    io_.waitAll();
  }

 private:
  int childTree(int j) const { return j >= childBase_[1] ? 1 : 0; }

  // Slice s of tree t's half, in elements of the whole buffer.
  Range slice(int t, size_t s) const {
    Range part = splitEven(half_[t].len, slices_[t], s);
    return Range{half_[t].begin + part.begin, part.len};
  }

  char* landing(int child, size_t s) {
    const int index = static_cast<int>(s % static_cast<size_t>(window_));
    if (resultSlots_) return io_.slot(SlotPool::kLanding, child * window_ + index);
    return io_.slot(child == 0 ? SlotPool::kLanding : SlotPool::kResults, index);
  }

  // Posts, in order, the receives whose keys are below key + kLookahead and that have a free landing slot. Every
  // receive a step with this key waits for is then posted: its landing slot was freed by a step with a smaller key.
  void postReceives(long long key) {
    const std::vector<Incoming>& list = *incoming_;
    while (nextIncoming_ < list.size()) {
      const Incoming& in = list[nextIncoming_];
      if (in.key >= key + kLookahead) break;
      Range r = slice(in.tree, in.slice);
      if (in.direction == kUp) {
        if (in.slice >= childConsumed_[in.child] + static_cast<size_t>(window_)) break;
        childReq_[in.child][in.slice] = io_.irecv(childRank_[in.child], landing(in.child, in.slice), r.len * es_);
      } else {
        const int parent = spec_.trees.tree(in.tree).parent;
        parentReq_[in.tree][in.slice] = io_.irecv(parent, spec_.recv + r.begin * es_, r.len * es_);
      }
      ++nextIncoming_;
    }
  }

  // The ordering above guarantees that a step's receives are posted before it waits; this checks it.
  void awaitReceive(const Request& r) {
    if (!r.conn) throwInternal(errorContext(io_.rank()) + ": tree step waits on a receive never posted");
    io_.wait(r);
  }

  // Reduces this rank's slice with its children's and hands it to the parent (or keeps it, at the root).
  void up(int t, size_t s) {
    const TreeNode& node = spec_.trees.tree(t);
    const Range r = slice(t, s);
    const size_t bytes = r.len * es_;
    const char* mine = spec_.send + r.begin * es_;
    if (node.numChildren == 0) {
      if (node.parent >= 0) {
        io_.isend(node.parent, mine, bytes);
      } else if (spec_.recv + r.begin * es_ != mine) {
        io_.copy(spec_.recv + r.begin * es_, mine, bytes);  // a root alone: its slice is the result
      }
      return;
    }
    const bool isRoot = node.parent < 0;
    char* out;
    size_t result = resultSend_.size();  // the result slot used, if any
    if (isRoot || spec_.partialsInRecv) {
      out = spec_.recv + r.begin * es_;
    } else {
      result = s % resultSend_.size();
      if (resultBusy_[result]) io_.wait(resultSend_[result]);
      resultBusy_[result] = false;
      out = io_.slot(SlotPool::kResults, static_cast<int>(result));
    }
    for (int c = 0; c < node.numChildren; ++c) {
      const int j = childBase_[t] + c;
      awaitReceive(childReq_[j][s]);
      io_.reducer().reduce(out, landing(j, s), c == 0 ? mine : out, r.len, spec_.type, spec_.reduction);
      ++childConsumed_[j];
    }
    if (isRoot) {
      if (spec_.reduction == chorusAvg) io_.reducer().finishAverage(out, r.len, spec_.type, io_.size());
      return;
    }
    Request q = io_.isend(node.parent, out, bytes);
    if (result < resultSend_.size()) {
      resultSend_[result] = q;
      resultBusy_[result] = true;
    }
  }

  // Takes the finished slice from the parent (or from the root's own data) and hands it to the children.
  void down(int t, size_t s) {
    const TreeNode& node = spec_.trees.tree(t);
    const Range r = slice(t, s);
    const char* src;
    if (node.parent < 0) {
      src = (spec_.up ? spec_.recv : spec_.send) + r.begin * es_;
    } else {
      awaitReceive(parentReq_[t][s]);
      src = spec_.recv + r.begin * es_;
    }
    for (int c = 0; c < node.numChildren; ++c) io_.isend(node.child[c], src, r.len * es_);
  }

  PeerIO& io_;
  const TreePipelineSpec& spec_;
  const size_t es_;
  Range half_[2];
  size_t slices_[2] = {0, 0};
  int childBase_[2] = {0, 0};
  std::vector<int> childRank_;
  bool resultSlots_ = false;
  int window_ = 1;
  std::vector<std::vector<Request>> childReq_;
  std::vector<size_t> childConsumed_;
  std::vector<Request> parentReq_[2];
  std::vector<Request> resultSend_;
  std::vector<bool> resultBusy_;
  const std::vector<Incoming>* incoming_ = nullptr;
  size_t nextIncoming_ = 0;
};

}  // namespace

void runTreePipeline(PeerIO& io, const TreePipelineSpec& spec) { TreeRun(io, spec).run(); }

}  // namespace chorus
