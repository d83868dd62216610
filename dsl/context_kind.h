// ContextKind: the execution contexts of a chip's `Context`, one enum under the manual's names.
//
// The Tensor Unit runs pipelines in its main and sub contexts (the sub context also runs memset and
// register-file loads); the DMA engine runs moves in its TDMA (tensor DMA) and PDMA (PCIe DMA)
// contexts (manual, "Context", "DMA Engine"). Pipelines, DMA ops, sequencer plans and the CLI all
// name a context by this enum, so a rule about contexts is written against one set of names.
#pragma once

namespace visa {

enum class ContextKind { kMain, kSub, kTdma, kPdma };

// "main", "sub", "tdma", "pdma": the names `ctx.main`, `ctx.sub`, `ctx.tdma`, `ctx.pdma` use.
const char* ContextName(ContextKind kind);

// Main and sub: the contexts whose ops are Tensor Unit pipelines.
bool IsContextKind(ContextKind kind);

}  // namespace visa
