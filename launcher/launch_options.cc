#include "launcher/launch_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace chorus::launcher {

namespace {

constexpr int kMaxRanks = 4096;

bool parseRanks(const std::string& text, int* ranks) {
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || value < 1 || value > kMaxRanks) return false;
  *ranks = static_cast<int>(value);
  return true;
}

bool parseSeconds(const std::string& text, double* seconds) {
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(value) || value <= 0 || value > 1e8) {
    return false;
  }
  *seconds = value;
  return true;
}

}  // namespace

std::string usageText() {
  return "usage: chorusrun -n N [--hosts H] [--bind-to auto|core|none] [--tag-output] [--timeout SECONDS]\n"
         "                 [--elastic] [--] program [args...]\n"
         "\n"
         "Starts N copies of program on this host, rank r with CHORUS_RANK=r, CHORUS_WORLD_SIZE=N,\n"
         "CHORUS_LOCAL_RANK=r, CHORUS_JOB_ID and CHORUS_STORE naming a rendezvous store served by chorusrun.\n"
         "Every rank gets the same CHORUS_SECRET (kept when already set, else 32 random bytes in hex).\n"
         "\n"
         "  -n N               number of ranks (1.." +
         std::to_string(kMaxRanks) +
         ")\n"
         "  --hosts H          emulate H hosts (1..N): the ranks are split into H contiguous blocks, the first\n"
         "                     N % H one rank larger (5 ranks, 2 hosts: 0-2 and 3-4); a rank of block h gets\n"
         "                     CHORUS_HOST_ID=<host id>#h<h> and CHORUS_LOCAL_RANK = its index in the block\n"
         "  --bind-to core     bind each rank to one core of those chorusrun may use, each emulated host's ranks to\n"
         "                     its share of them (cores / H each), in turn; none leaves them free; auto (the\n"
         "                     default) binds as core when that gives each of 2 or more ranks a core of its own\n"
         "  --tag-output       prefix every line of output with \"[rank] \"\n"
         "  --timeout SECONDS  kill every rank after SECONDS and exit 124\n"
         "  --elastic          a rank killed by a signal is reported as lost and the others go on (they may\n"
         "                     chorusCommShrink); chorusrun exits 0 when every rank not lost exits 0\n"
         "  -h, --help         print this help\n"
         "\n"
         "If a rank exits non-zero or (without --elastic) is killed, the others get SIGTERM, then SIGKILL 2 s later,\n"
         "and chorusrun exits with that rank's code (128 + signal when killed). SIGINT/SIGTERM/SIGHUP are forwarded\n"
         "to the ranks.\n"
         "Processes the ranks leave behind in their process group are killed when the last rank exits.\n";
}

ParsedCommandLine parseCommandLine(int argc, const char* const* argv) {
  ParsedCommandLine parsed;
  LaunchOptions& options = parsed.options;
  bool ranksGiven = false;
  int i = 1;
  // Takes an option's value from "--opt=value", "-nVALUE" or the next argument.
  auto valueOf = [&](std::string_view arg, std::string_view name, std::string* value) {
    if (arg.size() > name.size()) {
      std::string_view rest = arg.substr(name.size());
      if (rest.front() == '=') rest.remove_prefix(1);
      *value = std::string(rest);
      return true;
    }
    if (i + 1 >= argc) return false;
    *value = argv[++i];
    return true;
  };
  for (; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string value;
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      parsed.showHelp = true;
      return parsed;
    }
    if (arg.rfind("-n", 0) == 0 && (arg.size() == 2 || arg[2] == '=' || (arg[2] >= '0' && arg[2] <= '9'))) {
      if (!valueOf(arg, "-n", &value) || !parseRanks(value, &options.ranks)) {
        parsed.error = "-n needs a number of ranks in 1.." + std::to_string(kMaxRanks) + ", got '" + value + "'";
        return parsed;
      }
      ranksGiven = true;
    } else if (arg == "--hosts" || arg.rfind("--hosts=", 0) == 0) {
      if (!valueOf(arg, "--hosts", &value) || !parseRanks(value, &options.hosts)) {
        parsed.error = "--hosts needs a number of hosts in 1.." + std::to_string(kMaxRanks) + ", got '" + value + "'";
        return parsed;
      }
    } else if (arg == "--bind-to" || arg.rfind("--bind-to=", 0) == 0) {
      if (!valueOf(arg, "--bind-to", &value) || (value != "auto" && value != "core" && value != "none")) {
        parsed.error = "--bind-to takes auto, core or none, got '" + value + "'";
        return parsed;
      }
      options.binding = value == "core" ? Binding::kCore : value == "none" ? Binding::kNone : Binding::kAuto;
    } else if (arg == "--tag-output") {
      options.tagOutput = true;
    } else if (arg == "--elastic") {
      options.elastic = true;
    } else if (arg == "--timeout" || arg.rfind("--timeout=", 0) == 0) {
      if (!valueOf(arg, "--timeout", &value) || !parseSeconds(value, &options.timeoutSeconds)) {
        parsed.error = "--timeout needs a positive number of seconds, got '" + value + "'";
        return parsed;
      }
    } else if (arg.size() > 1 && arg.front() == '-') {
      parsed.error = "unknown option '" + std::string(arg) + "'";
      return parsed;
    } else {
      break;
    }
  }
  for (; i < argc; ++i) options.command.emplace_back(argv[i]);
  if (!ranksGiven) {
    parsed.error = "-n N is required";
  } else if (options.hosts > options.ranks) {
    parsed.error = "--hosts " + std::to_string(options.hosts) + " needs at least as many ranks, got -n " +
                   std::to_string(options.ranks);
  } else if (options.command.empty()) {
    parsed.error = "no program to run";
  }
  return parsed;
}

}  // namespace chorus::launcher
