/* Test hooks of the fake NCCL (libnccl.so.2 under build/tests/doubles/nccl). The NCCL API itself
 * is the real nccl.h; the double launches its kernels through the fake GPU (c3fake/gpu.h). */
#ifndef C3FAKE_NCCL_H
#define C3FAKE_NCCL_H

#include "c3fake/gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kernels the fake NCCL has launched so far in this process (one per op outside a group, one
 * per stream at the outermost ncclGroupEnd). */
C3FAKE_API int c3fake_nccl_launch_count(void);

#ifdef __cplusplus
}
#endif

#endif /* C3FAKE_NCCL_H */
