// nvtxEventAttributes_t -> NvtxAttributes (nvtx_injection.cpp), on its own so that the fuzz
// harness (fuzz/nvtx_fuzz.cpp) can feed it any struct without going through an NVTX instance.
#pragma once

#include "nvtx_tracker.h"

struct nvtxEventAttributes_v2;  // nvtxEventAttributes_t (nvtx3/nvToolsExt.h)

namespace c3::collector::nvtx {

// Reads only the fields the struct's `size` declares (older callers pass shorter structs);
// unknown payload and message types are left out. Null gives no attributes.
NvtxAttributes decode_attributes(const nvtxEventAttributes_v2* a);

}  // namespace c3::collector::nvtx
