// What a chorusComm_t points at: the C handle around the C++ communicator.
#pragma once

#include <memory>

#include "src/comm/comm_engine.h"

struct chorusComm {
  std::unique_ptr<chorus::CommEngine> impl;
};
