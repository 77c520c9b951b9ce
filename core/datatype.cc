#include "core/datatype.h"

namespace chorus {

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
