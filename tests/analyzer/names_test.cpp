// Kernel names as tables and the timeline show them (names.h): the function's own name first,
// as Nsight Systems shortens them, and names that would read the same told apart.
#include "c3/analyzer/metrics/names.h"

#include <gtest/gtest.h>

namespace c3::analyzer {
namespace {

TEST(Names, ShortKernelNames) {
  // Issue 13: four cuDNN rows read "void cudnn::bn_bw_1C11_kernel_new<float, float, floa".
  EXPECT_EQ(short_kernel_name("void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, "
                              "1>(float, float, float, float, cudnnTensorStruct, float const*)"),
            "bn_bw_1C11_kernel_new<...>");
  EXPECT_EQ(short_kernel_name("void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, "
                              "1>(float, float)",
                              NameDetail::templates),
            "bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>");
  EXPECT_EQ(short_kernel_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<"
                              "4096ul>)"),
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  // A lambda in the template arguments, anonymous namespaces, a templated return type.
  EXPECT_EQ(
      short_kernel_name(
          "void at::native::(anonymous namespace)::elementwise_kernel<128, 2, "
          "at::native::gpu_kernel_impl<at::native::AddFunctor<float> >(at::TensorIteratorBase&"
          ", at::native::AddFunctor<float> const&)::{lambda(int)#1}>(int, "
          "at::native::gpu_kernel_impl<at::native::AddFunctor<float> >(at::"
          "TensorIteratorBase&, at::native::AddFunctor<float> const&)::{lambda(int)#1})"),
      "elementwise_kernel<...>");
  EXPECT_EQ(short_kernel_name("std::enable_if<true, void>::type ns::kernel_k<int>(int)"),
            "kernel_k<...>");
  EXPECT_EQ(short_kernel_name("void (anonymous namespace)::softmax_warp_forward(float*)"),
            "softmax_warp_forward");
  EXPECT_EQ(short_kernel_name("void Functor<int>::operator()(int)"), "operator()");
  EXPECT_EQ(short_kernel_name("bool operator<<int>(int, int)"), "operator<<int>");
  // CUTLASS's generic "Kernel" keeps what tells it apart.
  EXPECT_EQ(
      short_kernel_name("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_"
                        "align4>(cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4::Params)"),
      "Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>");
  // Mangled names are demangled first.
  EXPECT_EQ(short_kernel_name("_Z11axpy_kernelIfEvPT_i"), "axpy_kernel<...>");
  // Not a signature: unchanged.
  for (const char* n : {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                        "Memcpy HtoD (Host -> Device)", "", "(", "a<b(", "<<<>>>", "::"}) {
    EXPECT_EQ(short_kernel_name(n), n) << n;
  }
}

TEST(Names, DistinctShortNames) {
  const std::vector<std::string> names = {
      "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float)",
      "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, false, 1>(float)",
      "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(float)",
      "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(float)"};
  EXPECT_EQ(distinct_short_names(names),
            (std::vector<std::string>{"bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>",
                                      "bn_bw_1C11_kernel_new<float, float, float2, 512, false, 1>",
                                      "bn_fw_tr_1C11_kernel_NCHW<...>",
                                      "bn_fw_tr_1C11_kernel_NCHW<...>"}));
}

TEST(Names, ElideMiddle) {
  EXPECT_EQ(elide_middle("short", 10), "short");
  EXPECT_EQ(elide_middle("bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>", 24),
            "bn_bw_1C11_..., true, 1>");
  EXPECT_EQ(elide_middle("µµµµµµµµµµ", 5), "µ...µ");
  EXPECT_EQ(elide_middle("abcdef", 2), "ab");
  EXPECT_EQ(elide_middle("abcdef", 4), "abcd");
  EXPECT_EQ(elide_middle("abcdef", 5), "a...f");
  EXPECT_EQ(elide_middle("abcdef", 0), "");
  for (size_t w = 0; w < 12; ++w) EXPECT_LE(elide_middle("abcdefghijk", w).size(), w) << w;
}

}  // namespace
}  // namespace c3::analyzer

namespace c3::analyzer {
namespace {

TEST(Names, ShortSignatures) {
  // Folded where the launch shape tells them apart, with template arguments where it does not.
  EXPECT_EQ(
      short_signatures({"void at::vectorized_elementwise_kernel<4, A>(int) <<<1024, 128>>>",
                        "void at::vectorized_elementwise_kernel<4, B>(int) <<<1, 128>>>",
                        "void at::reduce_kernel<512, 1, X>(int) <<<2, 128>>>",
                        "void at::reduce_kernel<512, 1, Y>(int) <<<2, 128>>>", "AllReduce 1M..2M"}),
      (std::vector<std::string>{"vectorized_elementwise_kernel<...> <<<1024, 128>>>",
                                "vectorized_elementwise_kernel<...> <<<1, 128>>>",
                                "reduce_kernel<512, 1, X> <<<2, 128>>>",
                                "reduce_kernel<512, 1, Y> <<<2, 128>>>", "AllReduce 1M..2M"}));
}

}  // namespace
}  // namespace c3::analyzer
