// Environment knobs: each declared once in params.def with its default and description.
#pragma once

#include <string>
#include <vector>

namespace chorus::params {

struct Knob {
  const char* name;
  const char* defaultValue;
  const char* description;
};

// Every knob, in declaration order.
const std::vector<Knob>& all();

// One string getter per knob: the environment's value, or the default when unset or empty.
#define CHORUS_PARAM(getter, name, def, desc) std::string getter();
#include "core/params.def"
#undef CHORUS_PARAM

// True when the knob is set (non-empty) in the environment.
bool isSet(const char* name);
// Parses a knob as an integer in [lo, hi]; throws chorusInvalidArgument naming the knob otherwise.
long long asInt(const char* name, const std::string& value, long long lo, long long hi);
// Parses a knob as a number of seconds >= 0; throws chorusInvalidArgument naming the knob otherwise.
double asSeconds(const char* name, const std::string& value);
// Parses sizes like 512, 64K, 4M, 1G; throws chorusInvalidArgument naming the knob otherwise.
long long asBytes(const char* name, const std::string& value, long long lo, long long hi);
// Logs every knob that is set, at INFO, once per process.
void logSetKnobs(int rank);

}  // namespace chorus::params
