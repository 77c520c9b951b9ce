// What a chorusComm_t points at: the C handle around the C++ communicator.
#pragma once

#include <memory>

#include "src/api/window_table.h"
#include "src/comm/comm_engine.h"

struct chorusComm {
  std::unique_ptr<chorus::CommEngine> impl;
  // The windows registered on this communicator and the signals counted for it (window_table.h).
  chorus::api::WindowTable windows;
};
