#include "src/comm/autotune_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/error.h"
#include "core/logging.h"

namespace chorus {

void loadAutotuneFile(CallPlanner& planner, const CommConfig& config, StoreClient& store,
                      const std::string& keyPrefix, int rank, Deadline deadline) {
  if (!planner.tuning() || config.autotuneFile.empty()) return;
  const std::string key = keyPrefix + "autotune/table";
  std::string text;
  if (rank == 0) {
    if (std::ifstream f(config.autotuneFile); f) {
      std::stringstream s;
      s << f.rdbuf();
      text = s.str();
    }
    store.set(key, bytesOf(text), deadline);
  } else {
    const Bytes b = store.get(key, deadline);
    text.assign(b.begin(), b.end());
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  try {
    planner.loadTuned(text);
  } catch (const Error& e) {
    throw Error(chorusInvalidArgument, errorContext(rank, "init") + ": CHORUS_AUTOTUNE_FILE=" +
                                           config.autotuneFile + " (rank 0's): " + e.what());
  }
  if (!text.empty()) CHORUS_INFO(rank, "autotune: table loaded from " << config.autotuneFile << ": " << text);
}

void writeAutotuneFile(const CallPlanner* planner, const CommConfig& config, int rank) noexcept {
  if (!planner || !planner->tuning() || rank != 0 || config.autotuneFile.empty()) return;
  try {
    const std::string rules = planner->tunedRules();
    if (rules.empty()) return;
    // Whole or not at all: a reader never sees half a table.
    const std::string temporary = config.autotuneFile + ".tmp";
    {
      std::ofstream f(temporary, std::ios::trunc);
      f << rules << "\n";
      if (!f.flush()) throw std::runtime_error("cannot write " + temporary + ": " + std::strerror(errno));
    }
    if (std::rename(temporary.c_str(), config.autotuneFile.c_str()) != 0) {
      throw std::runtime_error("cannot rename " + temporary + " to " + config.autotuneFile + ": " +
                               std::strerror(errno));
    }
    CHORUS_INFO(rank, "autotune: table written to " << config.autotuneFile);
  } catch (const std::exception& e) {
    CHORUS_WARN(rank, "autotune: CHORUS_AUTOTUNE_FILE not written: " << e.what());
  }
}

}  // namespace chorus
