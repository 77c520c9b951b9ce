#include "transports/tcp/stripe_cuts.h"

#include <algorithm>

#include "core/error.h"

namespace chorus {

namespace {
constexpr size_t kPage = 4096;

void cutPages(size_t bytes, uint64_t from, uint64_t to, uint64_t total, size_t* begin, size_t* end) {
  const uint64_t pages = (bytes + kPage - 1) / kPage;
  *begin = std::min<uint64_t>(bytes, pages * from / total * kPage);
  *end = std::min<uint64_t>(bytes, pages * to / total * kPage);
}
}  // namespace

StripeCuts::StripeCuts(const std::vector<uint32_t>& weights) {
  if (weights.empty()) throwInternal("StripeCuts: no sockets");
  cumulative_.push_back(0);
  for (uint32_t w : weights) cumulative_.push_back(cumulative_.back() + w);
  if (cumulative_.back() == 0) throwInternal("StripeCuts: every weight is 0");
}

void StripeCuts::cut(size_t bytes, size_t i, size_t* begin, size_t* end) const {
  if (bytes < kStripeMin || sockets() <= 1) {
    *begin = 0;
    *end = i == 0 ? bytes : 0;
    return;
  }
  cutPages(bytes, cumulative_[i], cumulative_[i + 1], cumulative_.back(), begin, end);
}

void StripeCuts::evenCut(size_t bytes, size_t sockets, size_t i, size_t* begin, size_t* end) {
  if (bytes < kStripeMin || sockets <= 1) {
    *begin = 0;
    *end = i == 0 ? bytes : 0;
    return;
  }
  cutPages(bytes, i, i + 1, sockets, begin, end);
}

}  // namespace chorus
