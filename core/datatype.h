// Facts about the public datatypes and ops, for use inside Chorus.
#pragma once

#include <cstddef>

#include "chorus/chorus.h"

namespace chorus {

// Bytes per element; 0 when out of range. Inline: every call asks it several times.
inline size_t typeSize(chorusDataType_t t) {
  static_assert(chorusNumTypes == 12, "typeSize: a new type needs its size in kSizes");
  constexpr unsigned char kSizes[chorusNumTypes] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8, 1, 1};
  return static_cast<unsigned>(t) < chorusNumTypes ? kSizes[t] : 0;
}
// "float32", "sum", ...; "unknown" when out of range.
const char* typeName(chorusDataType_t t);
const char* opName(chorusRedOp_t op);
inline bool validType(int t) { return t >= 0 && t < chorusNumTypes; }
inline bool validOp(int op) { return op >= 0 && op < chorusNumOps; }
inline bool isBitwiseOp(int op) { return op == chorusBand || op == chorusBor || op == chorusBxor; }
inline bool isIntegerType(int t) { return validType(t) && t <= chorusUint64; }
// Whether `op` reduces `type`: every op reduces every type, except that bitwise ops take integers only.
inline bool opSupportsType(int op, int t) { return validOp(op) && validType(t) && (!isBitwiseOp(op) || isIntegerType(t)); }

}  // namespace chorus
