// chorusrun's command line: `chorusrun -n N [--hosts H] [--bind-to auto|core|none] [--tag-output] [--timeout SECONDS]
// [--elastic] [--] prog args...`.
#pragma once

#include <string>
#include <vector>

namespace chorus::launcher {

// Where the ranks may run (launcher/core_binding.h): kAuto binds as kCore when that gives each of 2 or more ranks a
// core of its own, else leaves them free as kNone.
enum class Binding { kAuto, kCore, kNone };

struct LaunchOptions {
  int ranks = 0;
  int hosts = 0;                     // --hosts: emulate this many hosts (1..ranks); 0 = not given
  Binding binding = Binding::kAuto;  // --bind-to
  bool tagOutput = false;            // prefix every output line with "[rank] "
  double timeoutSeconds = 0;         // > 0: kill every rank after this long; 0: no limit
  bool elastic = false;              // --elastic: a rank killed by a signal is lost, the others go on
  std::vector<std::string> command;  // program and its arguments
};

struct ParsedCommandLine {
  LaunchOptions options;
  bool showHelp = false;
  std::string error;  // non-empty: the command line is wrong, and this says how
};

// Parses argv; options end at the first non-option argument or at "--".
ParsedCommandLine parseCommandLine(int argc, const char* const* argv);
// The text -h prints.
std::string usageText();

}  // namespace chorus::launcher
