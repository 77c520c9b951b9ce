#include "src/api/window_table.h"

namespace chorus::api {

void WindowTable::add(chorusWindow* win) { windows_[win->id] = win; }

void WindowTable::remove(chorusWindow* win) { windows_.erase(win->id); }

chorusWindow* WindowTable::find(uint64_t id) const {
  auto it = windows_.find(id);
  return it == windows_.end() ? nullptr : it->second;
}

uint64_t WindowTable::arrived(int peer, uint32_t sigIdx, uint32_t ctx) const {
  auto it = signals_.find({peer, sigIdx, ctx});
  return it == signals_.end() ? 0 : it->second;
}

}  // namespace chorus::api
