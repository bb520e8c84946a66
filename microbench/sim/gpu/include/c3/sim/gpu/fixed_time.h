/* The fixed-time driver of the simulated GPU (libcupti.so.13 under build/lib/c3sim): the
 * "driver" side of its CUPTI facade for tests, which give every piece of GPU work an explicit
 * duration (the simulated node, c3/sim/gpu/node.h, is the other driver, timed by the model).
 * Its C functions keep the c3fake_ prefix. Test programs call them to create GPU work; the
 * library reports that work through the real CUPTI activity API (cupti_activity.h layouts of
 * CUDA 13) to whatever CUPTI client is loaded in the process (normally the collector).
 *
 * Model (see tests/doubles/README.md):
 *  - Devices 0..N-1 (env C3FAKE_DEVICES, default 1, max 8), one context per device, created on
 *    first use. Context id = device + 1. The null (legacy default) stream of device d has
 *    stream id 5 + d; created streams get ids 13, 14, ... (unique in the process).
 *  - A stream handle is an opaque pointer that doubles as a CUstream (cuStreamGetCtx,
 *    cuptiGetStreamIdEx). NULL means the legacy default stream of the calling thread's current
 *    device (c3fake_set_device; device 0 unless changed).
 *  - Every launch/copy/set/sync call is one CUDA API call: it gets a fresh correlation id,
 *    takes about 1 us of real time, and produces an API record plus a GPU activity record,
 *    each only while its activity kind is enabled.
 *  - GPU timing: start = max(API entry + 1000 ns, end of the previous work on the same stream),
 *    end = start + duration. Streams are independent (no implicit legacy-stream syncs).
 *  - All timestamps come from c3fake_now_ns(): CLOCK_REALTIME in ns, or the CUPTI timestamp
 *    callback when one is registered.
 *  - Calls with an invalid stream or device do nothing and return 0 (NULL).
 * Every function is thread-safe and prints nothing. Any call other than c3fake_now_ns,
 * c3fake_device_count and c3fake_set_device/c3fake_get_device runs c3fake_cuInit first (as the
 * CUDA runtime does). */
#ifndef C3_SIM_GPU_FIXED_TIME_H
#define C3_SIM_GPU_FIXED_TIME_H

#include <stdint.h>

#if defined(__GNUC__)
#define C3FAKE_API __attribute__((visibility("default")))
#else
#define C3FAKE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Like cuInit: the first call loads $CUDA_INJECTION64_PATH (if set) and calls its
 * InitializeInjection(), then reports the devices (CUPTI_ACTIVITY_KIND_DEVICE). Returns 0. */
C3FAKE_API int c3fake_cuInit(void); /* NOLINT(readability-identifier-naming): like cuInit */

/* Number of fake devices (C3FAKE_DEVICES, read once). */
C3FAKE_API int c3fake_device_count(void);

/* Current device of the calling thread (what cuCtxGetDevice reports); default 0. Invalid
 * devices are ignored. */
C3FAKE_API void c3fake_set_device(int device);
C3FAKE_API int c3fake_get_device(void);

/* cudaStreamCreateWithPriority: one runtime API call; CUpti_ActivityStream record. Returns
 * NULL for an invalid device. Streams live until the process ends. */
C3FAKE_API void* c3fake_stream_create(int device, int priority, int non_blocking);

/* The legacy default stream of a device, as an explicit handle (what NULL means on a thread
 * whose current device is `device`). */
C3FAKE_API void* c3fake_default_stream(int device);

/* CUPTI stream id of a handle (NULL: current device's legacy default stream); 0 if invalid. */
C3FAKE_API uint32_t c3fake_stream_id(void* stream);

/* cudaLaunchKernel: runtime API record (cbid cudaLaunchKernel_v7000) and a kernel record
 * (CUpti_ActivityKernel10). Returns the correlation id. `name` is copied (interned). */
C3FAKE_API uint32_t c3fake_launch_kernel(void* stream, const char* name, unsigned gx, unsigned gy,
                                         unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                         int regs_per_thread, int static_smem, int dynamic_smem,
                                         uint64_t duration_ns);

/* cuLaunchKernel: same, but a driver API record (cbid CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel). */
C3FAKE_API uint32_t c3fake_launch_kernel_driver(void* stream, const char* name, unsigned gx,
                                                unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                                unsigned bz, int regs_per_thread, int static_smem,
                                                int dynamic_smem, uint64_t duration_ns);

/* cudaMemcpyAsync (copy_kind is a CUpti_ActivityMemcpyKind, 1..10): CUpti_ActivityMemcpy6
 * (kind MEMCPY). For CUPTI_ACTIVITY_MEMCPY_KIND_PTOP (10): cudaMemcpyPeerAsync and
 * CUpti_ActivityMemcpyPtoP4 (kind MEMCPY2) between src_device and dst_device. The other kinds
 * ignore src_device/dst_device (the copy runs on the stream's device). */
C3FAKE_API uint32_t c3fake_memcpy(void* stream, int copy_kind, uint64_t bytes, int src_device,
                                  int dst_device, uint64_t duration_ns);

/* cudaMemsetAsync: CUpti_ActivityMemset4. */
C3FAKE_API uint32_t c3fake_memset(void* stream, uint64_t bytes, uint32_t value,
                                  uint64_t duration_ns);

/* cudaStreamSynchronize: sleeps (real time) until the stream's last work ends;
 * CUpti_ActivitySynchronization2 of type STREAM_SYNCHRONIZE. */
C3FAKE_API void c3fake_stream_synchronize(void* stream);

/* cudaDeviceSynchronize: waits for every stream of the device; CONTEXT_SYNCHRONIZE record with
 * streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE. */
C3FAKE_API void c3fake_context_synchronize(int device);

/* The fake clock, in ns: what every timestamp is made from. */
C3FAKE_API uint64_t c3fake_now_ns(void);

#ifdef __cplusplus
}
#endif

#endif /* C3_SIM_GPU_FIXED_TIME_H */
