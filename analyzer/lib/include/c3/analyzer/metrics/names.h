// Kernel names as people read them. Traces hold full demangled names such as
// "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float, float, ...)";
// tables and timelines show what Nsight Systems shows by default: the function's own name first,
// its return type, namespaces, parameters and template arguments left out
// ("bn_bw_1C11_kernel_new<...>"), with the full name a hover or a click away.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace c3::analyzer {

// How much of a name to keep.
enum class NameDetail {
  folded,     // "bn_bw_1C11_kernel_new<...>": template arguments folded
  templates,  // "bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>"
};

// The short form of a kernel name (a mangled "_Z..." name is demangled first). Names that are
// not C++ signatures ("sm90_xmma_gemm_...", "Memcpy HtoD") come back unchanged.
std::string short_kernel_name(std::string_view name, NameDetail detail = NameDetail::folded);

// Short names for a set of names shown together: folded where that tells them apart, with their
// template arguments where two different names would read the same folded. out[i] is names[i]'s.
std::vector<std::string> distinct_short_names(const std::vector<std::string>& names);

// Interference signatures as tables show them: "NAME <<<grid, block>>>" with NAME shortened
// (folded unless two different kernels of one launch shape would then read the same);
// communication signatures ("AllReduce 1M..2M") unchanged. out[i] is signatures[i]'s.
std::vector<std::string> short_signatures(const std::vector<std::string>& signatures);

// "text" cut to at most `width` characters (UTF-8 code points), the middle replaced by "...",
// so that both the start (the function) and the end (often what tells it apart) stay.
std::string elide_middle(std::string_view text, size_t width);

}  // namespace c3::analyzer
