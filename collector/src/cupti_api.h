// The small interface through which the collector uses CUPTI. CUPTI is never linked: it is
// found at run time (see load_cupti) so that one process never holds two CUPTI copies (PyTorch
// brings its own), and so tests and the simulated node can hand in a CUPTI of their own that
// speaks the real record layouts.
#pragma once

#include <cupti.h>

#include <string>

#include "config.h"

namespace c3::collector {

struct CuptiApi {
  void* handle = nullptr;
  std::string path;    // file the functions came from
  std::string origin;  // how it was found: "already loaded", "C3SCOPE_CUPTI_LIB", ...
  uint32_t version = 0;

  // Required.
  decltype(&cuptiGetVersion) GetVersion = nullptr;
  decltype(&cuptiGetResultString) GetResultString = nullptr;
  decltype(&cuptiSubscribe) Subscribe = nullptr;
  decltype(&cuptiUnsubscribe) Unsubscribe = nullptr;
  decltype(&cuptiEnableCallback) EnableCallback = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) ActivityRegisterCallbacks = nullptr;
  decltype(&cuptiActivityEnable) ActivityEnable = nullptr;
  decltype(&cuptiActivityDisable) ActivityDisable = nullptr;
  decltype(&cuptiActivityFlushAll) ActivityFlushAll = nullptr;
  decltype(&cuptiActivityGetNextRecord) ActivityGetNextRecord = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) ActivityGetNumDroppedRecords = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) ActivityPushExternalCorrelationId = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) ActivityPopExternalCorrelationId = nullptr;
  decltype(&cuptiGetTimestamp) GetTimestamp = nullptr;
  // Optional: newer CUPTI only; nullptr when the loaded CUPTI lacks them.
  decltype(&cuptiActivityEnableDriverApi) ActivityEnableDriverApi = nullptr;
  decltype(&cuptiActivityEnableRuntimeApi) ActivityEnableRuntimeApi = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) ActivityRegisterTimestampCallback = nullptr;
  decltype(&cuptiActivityEnableLatencyTimestamps) ActivityEnableLatencyTimestamps = nullptr;
  decltype(&cuptiGetStreamIdEx) GetStreamIdEx = nullptr;
  decltype(&cuptiGetCallbackName) GetCallbackName = nullptr;
  // Not CUPTI: a simulated GPU's virtual clock (clock.h), when its library offers one.
  int64_t (*TraceClock)() = nullptr;
  const char* (*TraceClockName)() = nullptr;

  std::string result_string(CUptiResult r) const;
};

struct CuptiLoadResult {
  bool ok = false;
  CuptiApi api;
  std::string error;  // one line, when !ok
};

// Finds CUPTI, in this order: a libcupti already loaded in the process; C3SCOPE_CUPTI_LIB;
// $CUDA_HOME/{lib64,extras/CUPTI/lib64}; the dynamic linker's search (libcupti.so.13, .12,
// libcupti.so); /usr/local/cuda; Python's nvidia/cuda_cupti (and nvidia/cu13) packages next to
// any loaded site-packages library.
CuptiLoadResult load_cupti(const Config& config);

}  // namespace c3::collector
