#include "cupti_api.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <vector>

namespace c3::collector {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> loaded_objects() {
  std::vector<std::string> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        if (info->dlpi_name && info->dlpi_name[0]) {
          static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
        }
        return 0;
      },
      &out);
  return out;
}

bool is_cupti_name(const std::string& path) {
  std::string base = fs::path(path).filename().string();
  return base.rfind("libcupti.so", 0) == 0;
}

template <class F>
bool sym(void* handle, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}

bool resolve(void* handle, CuptiApi& a, std::string& missing) {
  bool ok = true;
  auto need = [&](const char* name, auto& fn) {
    if (!sym(handle, name, fn)) {
      ok = false;
      if (missing.empty()) missing = name;
    }
  };
  need("cuptiGetVersion", a.GetVersion);
  need("cuptiGetResultString", a.GetResultString);
  need("cuptiSubscribe", a.Subscribe);
  need("cuptiUnsubscribe", a.Unsubscribe);
  need("cuptiEnableCallback", a.EnableCallback);
  need("cuptiActivityRegisterCallbacks", a.ActivityRegisterCallbacks);
  need("cuptiActivityEnable", a.ActivityEnable);
  need("cuptiActivityDisable", a.ActivityDisable);
  need("cuptiActivityFlushAll", a.ActivityFlushAll);
  need("cuptiActivityGetNextRecord", a.ActivityGetNextRecord);
  need("cuptiActivityGetNumDroppedRecords", a.ActivityGetNumDroppedRecords);
  need("cuptiActivityPushExternalCorrelationId", a.ActivityPushExternalCorrelationId);
  need("cuptiActivityPopExternalCorrelationId", a.ActivityPopExternalCorrelationId);
  need("cuptiGetTimestamp", a.GetTimestamp);
  sym(handle, "cuptiActivityEnableDriverApi", a.ActivityEnableDriverApi);
  sym(handle, "cuptiActivityEnableRuntimeApi", a.ActivityEnableRuntimeApi);
  sym(handle, "cuptiActivityRegisterTimestampCallback", a.ActivityRegisterTimestampCallback);
  sym(handle, "cuptiActivityEnableLatencyTimestamps", a.ActivityEnableLatencyTimestamps);
  sym(handle, "cuptiGetStreamIdEx", a.GetStreamIdEx);
  sym(handle, "cuptiGetCallbackName", a.GetCallbackName);
  sym(handle, "c3scope_trace_clock_ns", a.TraceClock);
  sym(handle, "c3scope_trace_clock_name", a.TraceClockName);
  return ok;
}

void add_cupti_files_in(const fs::path& dir, std::vector<std::string>& out) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  // Prefer the versioned names a runtime install has; sort for a reproducible choice.
  std::set<std::string> found;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (is_cupti_name(e.path().string())) found.insert(e.path().string());
  }
  for (auto it = found.rbegin(); it != found.rend(); ++it) out.push_back(*it);
}

}  // namespace

std::string CuptiApi::result_string(CUptiResult r) const {
  const char* s = nullptr;
  if (GetResultString && GetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

CuptiLoadResult load_cupti(const Config& config) {
  struct Candidate {
    std::string path;
    std::string origin;
    bool noload;
  };
  std::vector<Candidate> candidates;
  for (const auto& obj : loaded_objects()) {
    if (is_cupti_name(obj)) candidates.push_back({obj, "already loaded", true});
  }
  if (!config.cupti_lib.empty())
    candidates.push_back({config.cupti_lib, "C3SCOPE_CUPTI_LIB", false});
  std::vector<std::string> files;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* home = std::getenv(var)) {
      files.clear();
      add_cupti_files_in(fs::path(home) / "lib64", files);
      add_cupti_files_in(fs::path(home) / "extras/CUPTI/lib64", files);
      for (auto& f : files) candidates.push_back({f, var, false});
    }
  }
  for (const char* soname : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
    candidates.push_back({soname, "library search path", false});
  }
  files.clear();
  add_cupti_files_in("/usr/local/cuda/lib64", files);
  add_cupti_files_in("/usr/local/cuda/extras/CUPTI/lib64", files);
  for (auto& f : files) candidates.push_back({f, "/usr/local/cuda", false});
  std::set<std::string> site_dirs;
  for (const auto& obj : loaded_objects()) {
    auto pos = obj.find("/site-packages/");
    if (pos != std::string::npos) site_dirs.insert(obj.substr(0, pos + 15));
  }
  for (const auto& site : site_dirs) {
    files.clear();
    add_cupti_files_in(fs::path(site) / "nvidia/cuda_cupti/lib", files);
    add_cupti_files_in(fs::path(site) / "nvidia/cu13/lib", files);
    for (auto& f : files) candidates.push_back({f, "Python nvidia package", false});
  }

  CuptiLoadResult result;
  std::string last_error = "no CUPTI library found (set C3SCOPE_CUPTI_LIB or CUDA_HOME)";
  for (const auto& c : candidates) {
    int flags = RTLD_NOW | RTLD_LOCAL | (c.noload ? RTLD_NOLOAD : 0);
    void* h = dlopen(c.path.c_str(), flags);
    if (!h) {
      if (c.origin == "C3SCOPE_CUPTI_LIB") {
        const char* e = dlerror();
        last_error = "C3SCOPE_CUPTI_LIB='" + c.path + "' could not be loaded: " + (e ? e : "?");
      }
      continue;
    }
    CuptiApi api;
    std::string missing;
    if (!resolve(h, api, missing)) {
      last_error = "'" + c.path + "' lacks " + missing + " (not a usable CUPTI)";
      dlclose(h);
      continue;
    }
    api.handle = h;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(api.GetVersion), &info) && info.dli_fname) {
      api.path = info.dli_fname;
    } else {
      api.path = c.path;
    }
    api.origin = c.origin;
    api.GetVersion(&api.version);
    result.ok = true;
    result.api = std::move(api);
    return result;
  }
  result.error = last_error;
  return result;
}

}  // namespace c3::collector
