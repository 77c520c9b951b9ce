#include "core/datatype.h"

namespace chorus {

size_t typeSize(chorusDataType_t t) {
  switch (t) {
    case chorusInt8:
    case chorusUint8:
    case chorusFloat8e4m3:
    case chorusFloat8e5m2:
      return 1;
    case chorusFloat16: case chorusBfloat16: return 2;
    case chorusInt32: case chorusUint32: case chorusFloat32: return 4;
    case chorusInt64: case chorusUint64: case chorusFloat64: return 8;
    default: return 0;
  }
}

const char* typeName(chorusDataType_t t) {
  static const char* const names[] = {"int8",    "uint8",    "int32",   "uint32",  "int64",      "uint64",
                                      "float16", "bfloat16", "float32", "float64", "float8e4m3", "float8e5m2"};
  return validType(t) ? names[t] : "unknown";
}

const char* opName(chorusRedOp_t op) {
  static const char* const names[] = {"sum", "prod", "max", "min", "avg", "band", "bor", "bxor"};
  return validOp(op) ? names[op] : "unknown";
}

}  // namespace chorus
