// ContextKind names (context_kind.h).
#include "dsl/context_kind.h"

namespace visa {

const char* ContextName(ContextKind kind) {
  switch (kind) {
    case ContextKind::kMain: return "main";
    case ContextKind::kSub: return "sub";
    case ContextKind::kTdma: return "tdma";
    case ContextKind::kPdma: return "pdma";
  }
  return "unknown";
}

bool IsContextKind(ContextKind kind) { return kind == ContextKind::kMain || kind == ContextKind::kSub; }

}  // namespace visa
