// A first-in first-out queue over one power-of-two array that doubles when full. Push and pop are a few
// instructions and allocate nothing once the array has grown to the deepest queue seen; std::deque allocates and
// frees a node every few hundred bytes of traffic and costs ~50 instructions a push and pop, which a
// sub-microsecond shared-memory call feels.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

namespace chorus {

template <class T>
class RingQueue {
 public:
  bool empty() const { return head_ == tail_; }
  size_t size() const { return tail_ - head_; }
  T& front() { return items_[head_ & mask_]; }
  // The i-th oldest element, front() being the 0th.
  T& operator[](size_t i) { return items_[(head_ + i) & mask_]; }

  void push_back(T v) {
    if (size() == items_.size()) grow();
    items_[tail_++ & mask_] = std::move(v);
  }
  void pop_front() {
    if constexpr (!std::is_trivially_destructible_v<T>) items_[head_ & mask_] = T();  // release what it holds
    ++head_;
  }
  void clear() {
    while (!empty()) pop_front();
    head_ = tail_ = 0;
  }

 private:
  void grow() {
    std::vector<T> bigger(items_.empty() ? 8 : 2 * items_.size());
    const size_t n = size();
    for (size_t i = 0; i < n; ++i) bigger[i] = std::move((*this)[i]);
    items_.swap(bigger);
    mask_ = items_.size() - 1;
    head_ = 0;
    tail_ = n;
  }

  std::vector<T> items_;
  size_t head_ = 0, tail_ = 0;  // positions ever pushed / popped, masked to index
  size_t mask_ = 0;
};

}  // namespace chorus
