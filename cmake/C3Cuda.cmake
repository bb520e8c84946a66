# The collector needs only the CUDA toolkit's headers (CUPTI activity layouts, NVTX, nccl.h): CUPTI
# itself is loaded with dlopen at run time and NCCL is interposed by symbol, so nothing here links
# against libcupti or libnccl. nvcc is needed only for the programs under tests/gpu.
find_package(CUDAToolkit QUIET)
set(C3_CUDA_HEADERS_FOUND OFF)
if(CUDAToolkit_FOUND)
  find_path(C3_CUPTI_INCLUDE_DIR cupti_activity.h
    HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_TARGET_DIR}/extras/CUPTI/include)
  find_path(C3_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include /usr/local/include)
  find_path(C3_NVTX_INCLUDE_DIR nvtx3/nvToolsExt.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  if(C3_CUPTI_INCLUDE_DIR AND C3_NCCL_INCLUDE_DIR AND C3_NVTX_INCLUDE_DIR)
    set(C3_CUDA_HEADERS_FOUND ON)
  endif()
endif()

if(NOT C3_CUDA_HEADERS_FOUND)
  message(FATAL_ERROR "c3scope needs the CUDA toolkit headers (cupti_activity.h, nccl.h, nvtx3/): "
                      "install the CUDA toolkit (scripts/setup says how) or set CUDAToolkit_ROOT")
endif()

# C3_WITH_CUDA decides whether CUDA code (nvcc) is compiled: the GPU validation programs.
set(C3_CUDA_ENABLED OFF)
if(C3_WITH_CUDA STREQUAL "ON" OR C3_WITH_CUDA STREQUAL "AUTO")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS "${CUDAToolkit_BIN_DIR}/nvcc")
    set(CMAKE_CUDA_COMPILER "${CUDAToolkit_BIN_DIR}/nvcc")
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Before enable_language, which otherwise picks nvcc's default (sm_75 with nvcc 13): Hopper
    # native code plus its PTX, which any newer GPU can JIT.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    set(C3_CUDA_ENABLED ON)
    set(CMAKE_CUDA_STANDARD 17)
  elseif(C3_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "C3_WITH_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
message(STATUS "c3scope: CUDA headers in ${C3_CUPTI_INCLUDE_DIR}; CUDA code compiled: ${C3_CUDA_ENABLED}")

add_library(c3_cuda_headers INTERFACE)
target_include_directories(c3_cuda_headers SYSTEM INTERFACE
  ${C3_CUPTI_INCLUDE_DIR} ${C3_NCCL_INCLUDE_DIR} ${C3_NVTX_INCLUDE_DIR})
