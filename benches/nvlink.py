"""The links between two GPUs of one host, as docs/SCALING.md's cost model
needs them: copies from one device's memory to the other's (one way, and
both ways at once), and NCCL's all-to-all between two processes, one a
device, at the sizes a product's transform would exchange.

    python3 benches/nvlink.py            (on a host with two GPUs; PyTorch)

NVLink multicast stays off (NCCL_NVLS_ENABLE=0): it is not needed for an
all-to-all.
"""
import os
import sys
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

MB = 10**6
# One operand's transform at 10^7 limbs is 604 MB (RESULTS.md, "Transform
# passes"); at P = 2 each device sends the other a quarter of it.
EXCHANGES = [151 * MB, 302 * MB, 604 * MB]
REPS = 10


def timed(f, reps=REPS):
    """Median seconds of f() over reps runs after one warm-up."""
    f()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        f()
        for d in range(torch.cuda.device_count()):
            torch.cuda.synchronize(d)
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


def peer_copies():
    a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda:0")
    b = torch.empty(1 << 30, dtype=torch.uint8, device="cuda:1")
    a2 = torch.empty(1 << 30, dtype=torch.uint8, device="cuda:0")
    b2 = torch.empty(1 << 30, dtype=torch.uint8, device="cuda:1")
    print(f"peer access 0 -> 1: {torch.cuda.can_device_access_peer(0, 1)}, 1 -> 0: {torch.cuda.can_device_access_peer(1, 0)}")
    print("| copy of 1 GiB | ms | GB/s (one direction) |")
    print("|---|---|---|")
    s0 = torch.cuda.Stream(device=0)
    s1 = torch.cuda.Stream(device=1)

    def both():
        with torch.cuda.stream(s0):
            b2.copy_(a, non_blocking=True)
        with torch.cuda.stream(s1):
            a2.copy_(b, non_blocking=True)

    for name, f in [
        ("device 0 -> device 1", lambda: b.copy_(a, non_blocking=True)),
        ("device 1 -> device 0", lambda: a.copy_(b, non_blocking=True)),
        ("both ways at once", both),
    ]:
        t = timed(f)
        print(f"| {name} | {t * 1e3:.2f} | {(1 << 30) / t / 1e9:.1f} |")


def all_to_all(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29517"
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    if rank == 0:
        print(f"\nNCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, all_to_all_single between {world} processes, one a device")
        print("| bytes each device sends the other | ms | GB/s a device sends |")
        print("|---|---|---|")
    for sent in EXCHANGES:
        # Each device keeps one share and sends the others theirs.
        n = sent * world // (world - 1)
        x = torch.empty(n, dtype=torch.uint8, device=f"cuda:{rank}")
        y = torch.empty_like(x)

        def step():
            dist.all_to_all_single(y, x)

        for _ in range(2):
            step()
        torch.cuda.synchronize()
        times = []
        for _ in range(REPS):
            dist.barrier()
            torch.cuda.synchronize()
            start = time.perf_counter()
            step()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        times.sort()
        t = torch.tensor([times[len(times) // 2]], device=f"cuda:{rank}")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        if rank == 0:
            print(f"| {sent / MB:.0f} MB | {t.item() * 1e3:.2f} | {sent / t.item() / 1e9:.1f} |")
    dist.destroy_process_group()


if __name__ == "__main__":
    count = torch.cuda.device_count()
    print(f"{count} devices: {', '.join(torch.cuda.get_device_name(d) for d in range(count))}")
    if count < 2:
        print("fewer than two devices: nothing to measure")
        sys.exit(0)
    peer_copies()
    mp.spawn(all_to_all, args=(2,), nprocs=2, join=True)
