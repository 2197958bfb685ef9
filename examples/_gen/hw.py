"""Hardware / software profiles of the simulated nodes."""

B200 = dict(
    name="b200",
    system="NVIDIA DGXB200-8/DGXB200-8, BIOS 1.3.4 10/22/2025",
    cpu="INTEL(R) XEON(R) PLATINUM 8570 (family: 0x6, model: 0xcf, stepping: 0x2)",
    ncpus=224,
    gpu_model="NVIDIA B200",
    gpu_devid="10de:2901",
    gpu_pci=["0000:1b:00", "0000:43:00", "0000:52:00", "0000:61:00",
             "0000:9d:00", "0000:c3:00", "0000:d1:00", "0000:df:00"],
    gpu_mem_gib=178.35,
    driver="570.133.20",
    driver_date="Fri Feb 28 01:04:53 UTC 2026",
    cuda_drv=12080,
    hca_pci=["0000:1a:00.0", "0000:3c:00.0", "0000:4d:00.0", "0000:5e:00.0",
             "0000:9c:00.0", "0000:bc:00.0", "0000:cc:00.0", "0000:dc:00.0"],
    hca_names=["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"],
    ib_if=["ibp26s0", "ibp60s0", "ibp77s0", "ibp94s0", "ibp156s0", "ibp188s0", "ibp204s0", "ibp220s0"],
    eth_pci=["0000:2a:00.0", "0000:2a:00.1"],
    eth_if=["enp42s0f0np0", "enp42s0f1np1"],
    eth_names=["mlx5_1", "mlx5_2"],
    hca_fw="28.43.2026",
    nvme_pci="0000:e4:00.0",
    kernel="6.8.0-60-generic",
    kernel_build="#63-Ubuntu SMP PREEMPT_DYNAMIC Tue Apr 15 19:04:15 UTC 2025",
    torch="2.7.0+cu128",
    nccl="2.26.2",
    nccl_cuda="cuda12.8",
    python="3.12",
)

H100 = dict(
    name="h100",
    system="NVIDIA DGXH100/DGXH100, BIOS 1.6.7 08/12/2025",
    cpu="Intel(R) Xeon(R) Platinum 8480C (family: 0x6, model: 0x8f, stepping: 0x8)",
    ncpus=224,
    gpu_model="NVIDIA H100 80GB HBM3",
    gpu_devid="10de:2330",
    gpu_pci=["0000:18:00", "0000:2a:00", "0000:3a:00", "0000:5d:00",
             "0000:9a:00", "0000:ab:00", "0000:ba:00", "0000:db:00"],
    gpu_mem_gib=79.15,
    driver="550.127.05",
    driver_date="Tue Oct  8 03:20:01 UTC 2024",
    cuda_drv=12040,
    hca_pci=["0000:17:00.0", "0000:29:00.0", "0000:39:00.0", "0000:5c:00.0",
             "0000:99:00.0", "0000:aa:00.0", "0000:b9:00.0", "0000:da:00.0"],
    hca_names=["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"],
    ib_if=["ibp23s0", "ibp41s0", "ibp57s0", "ibp92s0", "ibp153s0", "ibp170s0", "ibp185s0", "ibp218s0"],
    eth_pci=["0000:c0:00.0", "0000:c0:00.1"],
    eth_if=["enp192s0f0np0", "enp192s0f1np1"],
    eth_names=["mlx5_1", "mlx5_2"],
    hca_fw="28.41.1000",
    nvme_pci="0000:e3:00.0",
    kernel="5.15.0-131-generic",
    kernel_build="#141-Ubuntu SMP Fri Jan 10 21:18:28 UTC 2025",
    torch="2.5.1+cu124",
    nccl="2.21.5",
    nccl_cuda="cuda12.4",
    python="3.10",
)


def node_ip(net, idx):
    """Addresses: IPoIB 10.10.2.x (NCCL OOB/bootstrap), management 10.20.0.x."""
    return {"ib": f"10.10.2.{10 + idx}", "mgmt": f"10.20.0.{30 + idx}"}[net]


def busid(pci):
    """'0000:1b:00' -> NCCL busId '1b000'."""
    return pci.split(":")[1] + "000"
