// Which RDMA devices and ports a job may use: NCCL_IB_HCA's syntax (core/name_list.h, plus :port), so that the
// settings people already have work.
//   "mlx5"            devices whose name starts with mlx5
//   "mlx5_0:1,mlx5_1" device mlx5_0 port 1, and every port of devices starting with mlx5_1
//   "=mlx5_0"         exactly mlx5_0 (not mlx5_01)
//   "^mlx5_1"         every device but those starting with mlx5_1 ("^=" excludes exact names)
#pragma once

#include <string>
#include <vector>

#include "core/name_list.h"

namespace chorus {

class HcaFilter {
 public:
  // Empty: everything passes.
  explicit HcaFilter(const std::string& spec);
  bool allows(const std::string& device, int port) const;

 private:
  struct Entry {
    std::string name;
    int port;  // -1: any
  };
  NameList list_;               // the syntax: ^, =, the items as written
  std::vector<Entry> entries_;  // the items split into device and port
};

}  // namespace chorus
