#include "src/comm/window_table.h"

namespace chorus {

Window* WindowTable::add(std::unique_ptr<Window> win) {
  Window* w = win.get();
  windows_[w->id] = std::move(win);
  return w;
}

Window* WindowTable::find(uint64_t id) const {
  auto it = windows_.find(id);
  return it == windows_.end() ? nullptr : it->second.get();
}

uint64_t WindowTable::arrived(int peer, uint32_t sigIdx, uint32_t ctx) const {
  auto it = signals_.find({peer, sigIdx, ctx});
  return it == signals_.end() ? 0 : it->second;
}

}  // namespace chorus
