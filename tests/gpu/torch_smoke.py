"""PyTorch + NCCL job for scripts/gpu-validate: checks the collector inside a framework that brings
its own CUPTI and loads NCCL privately (RTLD_LOCAL), the common case in practice.

usage: python3 torch_smoke.py   (run under `c3scope record`)
"""
import os

import torch
import torch.distributed as dist

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("nccl", rank=0, world_size=1)
torch.cuda.set_device(0)
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
g = torch.randn(64 << 20, device="cuda")
comm = torch.cuda.Stream(priority=-1)
# On one rank NCCL runs a kernel only for a reduction that needs one: a pre-multiplied sum.
premul = dist._make_nccl_premul_sum(0.5)
for step in range(5):
    torch.cuda.nvtx.range_push(f"step {step}")
    b = a @ a
    with torch.cuda.stream(comm):
        dist.all_reduce(g, op=premul)
    c = b @ a
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
dist.destroy_process_group()
print("torch smoke ok", float(c.float().sum()) != 0.0)
