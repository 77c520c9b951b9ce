// chorus-topo's command line.
#pragma once

#include <string>

#include "perf/chorus_topo/cluster_prediction.h"

namespace chorus::topo {

struct TopoOptions {
  int ranks = 0;         // --ranks: world size (0: one rank per core of the host)
  int hosts = 1;         // --hosts: emulated hosts, each like this one
  std::string file;      // --file: topology file to load instead of detecting ("" : CHORUS_TOPO_FILE or detect)
  std::string dumpPath;  // --dump: write the host's topology JSON here
  bool json = false;     // --json: print the host's topology JSON (with --predict: the predictions) and nothing else
  std::string predictPath;  // --predict: cluster file whose predictions to print instead of this host
  PredictRequest predict;   // --ranks (one world size), --collective, --sizes with --predict
  bool showHelp = false;
  std::string error;  // non-empty: the command line is wrong, and this says how
};

// Parses argv (no positional arguments).
TopoOptions parseTopoOptions(int argc, const char* const* argv);
// What --help prints.
std::string topoUsage();

}  // namespace chorus::topo
