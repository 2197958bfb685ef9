"""Kernel log content: boot sequence, benign background noise, and hardware events."""

from .common import KernelLog, sec, gpu_uuid
from .hw import node_ip


def boot(kl, hw, idx, rng, acpi_bug=True):
    """~200-260 lines of a DGX-like boot, at uptime 0..~75 s after kl.boot."""
    b = kl.boot

    def k(off, msg):
        kl.k(b + sec(off), msg)

    def s(off, ident, msg, early=False):
        kl.svc(b + sec(off), ident, msg, early)

    kv = hw["kernel"]
    k(0, f"Linux version {kv} (buildd@lcy02-amd64-071) (x86_64-linux-gnu-gcc-13 (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0, "
         f"GNU ld (GNU Binutils for Ubuntu) 2.42) {hw['kernel_build']}")
    k(0, f"Command line: BOOT_IMAGE=/boot/vmlinuz-{kv} root=UUID=4f1c2b7e-9d0a-4a6e-8e55-0c1f7d2a9b31 ro "
         "console=tty0 console=ttyS1,115200n8 intel_iommu=on iommu=pt transparent_hugepage=madvise "
         "init_on_alloc=0 systemd.unified_cgroup_hierarchy=1")
    k(0, "KERNEL supported cpus:")
    k(0, "  Intel GenuineIntel")
    k(0, "  AMD AuthenticAMD")
    k(0, "BIOS-provided physical RAM map:")
    e820 = [("0x0000000000000000-0x000000000009ffff", "usable"),
            ("0x00000000000a0000-0x00000000000fffff", "reserved"),
            ("0x0000000000100000-0x000000005c3fefff", "usable"),
            ("0x000000005c3ff000-0x0000000061dfefff", "reserved"),
            ("0x0000000061dff000-0x0000000069cfefff", "ACPI NVS"),
            ("0x0000000069cff000-0x0000000069dfefff", "ACPI data"),
            ("0x0000000069dff000-0x000000006fffffff", "usable"),
            ("0x0000000080000000-0x000000008fffffff", "reserved"),
            ("0x00000000fe010000-0x00000000fe010fff", "reserved"),
            ("0x0000000100000000-0x000000407fffffff", "usable")]
    for rngs, kind in e820:
        k(0, f"BIOS-e820: [mem {rngs}] {kind}")
    k(0, "NX (Execute Disable) protection: active")
    k(0, "APIC: Static calls initialized")
    k(0, "efi: EFI v2.8 by American Megatrends")
    k(0, "SMBIOS 3.6.0 present.")
    k(0, f"DMI: {hw['system']}")
    k(0, "tsc: Detected 2100.000 MHz processor")
    k(0, "ACPI: Early table checksum verification disabled")
    for tbl, addr in [("RSDP", "0x0000000069D1E014 000024 (v02 ALASKA)"),
                      ("XSDT", "0x0000000069D1D728 0001A4 (v01 ALASKA A M I    01072009 AMI  01000013)"),
                      ("FACP", "0x0000000069D14000 000114 (v06 ALASKA A M I    01072009 INTL 20200717)"),
                      ("DSDT", "0x0000000069B7A000 0593E4 (v02 ALASKA A M I    01072009 INTL 20200717)"),
                      ("SSDT", "0x0000000069D1A000 00065C (v02 ALASKA A M I    00000000 INTL 20200717)"),
                      ("MCFG", "0x0000000069D19000 00003C (v01 ALASKA A M I    01072009 MSFT 00000097)"),
                      ("SRAT", "0x0000000069D0F000 0027B0 (v03 ALASKA A M I    00000001 INTL 20200717)"),
                      ("DMAR", "0x0000000069D0D000 000300 (v01 ALASKA A M I    00000001 INTL 20200717)")]:
        k(0, f"ACPI: {tbl} {addr}")
    k(0, "NUMA: Initialized distance table, cnt=2")
    k(0, "Zone ranges:")
    k(0, "  DMA      [mem 0x0000000000001000-0x0000000000ffffff]")
    k(0, "  DMA32    [mem 0x0000000001000000-0x00000000ffffffff]")
    k(0, "  Normal   [mem 0x0000000100000000-0x000000407fffffff]")
    k(0.000012, f"percpu: Embedded 86 pages/cpu s221184 r8192 d114688 u524288")
    k(0.112480, "Memory: 2113554248K/2147009764K available (20480K kernel code, 4398K rwdata, 14660K rodata, "
                "4996K init, 17928K bss, 33455516K reserved, 0K cma-reserved)")
    k(0.160231, "Dynamic Preempt: voluntary")
    k(0.185502, f"smpboot: CPU0: {hw['cpu']}")
    k(0.302117, "x86: Booting SMP configuration:")
    k(0.412580, f"smp: Brought up 2 nodes, {hw['ncpus']} CPUs")
    k(0.412583, "smpboot: Max logical packages: 2")
    k(0.412590, f"smpboot: Total of {hw['ncpus']} processors activated (941568.00 BogoMIPS)")
    k(0.601108, "devtmpfs: initialized")
    k(0.702311, "ACPI: Interpreter enabled")
    k(0.702340, "ACPI: PM: (supports S0 S5)")
    k(0.702343, "ACPI: Using IOAPIC for interrupt routing")
    k(0.702410, "PCI: Using host bridge windows from ACPI; if necessary, use \"pci=nocrs\" and report a bug")
    if acpi_bug:
        # Classic benign firmware noise at boot (error-looking, not a cause).
        k(0.812907, "ACPI BIOS Error (bug): Could not resolve symbol [\\_SB.PC06.BR6A.SL2B], AE_NOT_FOUND (20230628/dswload2-162)")
        k(0.812931, "ACPI Error: AE_NOT_FOUND, During name lookup/catalog (20230628/psobject-220)")
        k(0.812940, "ACPI: Skipping parse of AML opcode: Scope (0x0010)")
    k(0.902201, "ACPI: PCI Root Bridge [PC00] (domain 0000 [bus 00-14])")
    off = 0.95
    for i, pci in enumerate(hw["gpu_pci"]):
        off += 0.0021
        k(off, f"pci {pci}.0: [{hw['gpu_devid']}] type 00 class 0x030200 PCIe Endpoint")
        k(off + 0.0001, f"pci {pci}.0: BAR 0 [mem 0x{0x22000000000 + i * 0x4000000000:x}-0x{0x22000000000 + i * 0x4000000000 + 0xffffff:x} 64bit pref]")
    for pci in hw["hca_pci"]:
        off += 0.0017
        k(off, f"pci {pci}: [15b3:1021] type 00 class 0x020700 PCIe Endpoint")
        k(off + 0.0001, f"pci {pci}: 504.112 Gb/s available PCIe bandwidth (32.0 GT/s PCIe x16 link)")
    for pci in hw["eth_pci"]:
        off += 0.0015
        k(off, f"pci {pci}: [15b3:101d] type 00 class 0x020000 PCIe Endpoint")
    k(1.402011, "iommu: Default domain type: Passthrough (set via kernel command line)")
    k(1.510220, "SCSI subsystem initialized")
    k(1.730118, "NetLabel: Initializing")
    k(2.104411, "clocksource: Switched to clocksource tsc-early")
    k(2.933905, "Freeing unused decrypted memory: 2028K")
    k(3.110032, "Write protecting the kernel read-only data: 36864k")
    k(3.402218, "Run /init as init process")
    k(4.112075, f"nvme nvme0: pci function {hw['nvme_pci']}")
    k(4.240913, "nvme nvme0: 64/0/0 default/read/poll queues")
    k(4.251880, " nvme0n1: p1 p2")
    k(5.602177, "EXT4-fs (nvme0n1p2): mounted filesystem 4f1c2b7e-9d0a-4a6e-8e55-0c1f7d2a9b31 ro with ordered data mode. Quota mode: none.")
    s(6.01, "systemd[1]", "systemd 255.4-1ubuntu8.6 running in system mode (+PAM +AUDIT +SELINUX +APPARMOR +IMA +SMACK +SECCOMP +GCRYPT -GNUTLS +OPENSSL +ACL +BLKID +CURL +ELFUTILS +FIDO2 +IDN2 -IDN +IPTC +KMOD +LIBCRYPTSETUP +LIBFDISK +PCRE2 -PWQUALITY +P11KIT +QRENCODE +TPM2 +BZIP2 +LZ4 +XZ +ZLIB +ZSTD -BPF_FRAMEWORK -XKBCOMMON +UTMP +SYSVINIT default-hierarchy=unified)", True)
    s(6.02, "systemd[1]", "Detected architecture x86-64.", True)
    s(6.03, "systemd[1]", f"Hostname set to <{kl.host}>.", True)
    k(7.118532, "EXT4-fs (nvme0n1p2): re-mounted 4f1c2b7e-9d0a-4a6e-8e55-0c1f7d2a9b31 r/w. Quota mode: none.")
    s(7.50, "systemd[1]", "Started systemd-journald.service - Journal Service.", True)
    k(8.40211, "ipmi_si IPI0001:00: IPMI kcs interface initialized")
    k(8.90422, "mlx5_core: Mellanox Core driver")
    off = 9.1
    for pci in hw["hca_pci"] + hw["eth_pci"]:
        k(off, f"mlx5_core {pci}: firmware version: {hw['hca_fw']}")
        k(off + 0.0004, f"mlx5_core {pci}: 504.112 Gb/s available PCIe bandwidth (32.0 GT/s PCIe x16 link)")
        k(off + 0.31, f"mlx5_core {pci}: Rate limit: 127 rates are supported, range: 0Mbps to 195312Mbps")
        k(off + 0.33, f"mlx5_core {pci}: Port module event: module {hw['hca_pci'].index(pci) if pci in hw['hca_pci'] else 0}, Cable plugged")
        off += 0.41
    for pci, ifn in zip(hw["hca_pci"], hw["ib_if"]):
        k(off, f"mlx5_core {pci} {ifn}: renamed from ib{hw['hca_pci'].index(pci)}")
        off += 0.003
    for pci, ifn in zip(hw["eth_pci"], hw["eth_if"]):
        k(off, f"mlx5_core {pci}: MLX5E: StrdRq(1) RqSz(8) StrdSz(2048) RxCqeCmprss(0 basic)")
        k(off + 0.004, f"mlx5_core {pci} {ifn}: renamed from eth{hw['eth_pci'].index(pci)}")
        off += 0.01
    k(13.20233, "nvidia: loading out-of-tree module taints kernel.")
    k(13.20234, "nvidia: module license 'NVIDIA' taints kernel.")
    k(13.20234, "Disabling lock debugging due to kernel taint")
    k(13.21872, "nvidia: module verification failed: signature and/or required key missing - tainting kernel")
    k(13.25101, "nvidia-nvlink: Nvlink Core is being initialized, major device number 234")
    off = 13.26
    for pci in hw["gpu_pci"]:
        k(off, f"nvidia {pci}.0: enabling device (0000 -> 0002)")
        off += 0.0093
    k(13.61844, f"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {hw['driver']}  {hw['driver_date']}")
    k(13.70212, f"nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  {hw['driver']}  {hw['driver_date']}")
    off = 13.75
    for pci in hw["gpu_pci"]:
        gid = pci.split(":")[1]
        k(off, f"[drm] [nvidia-drm] [GPU ID 0x0000{gid}00] Loading driver")
        off += 0.21
    k(off + 0.1, "nvidia_uvm: module uses symbols nvUvmInterfaceDisableAccessCntr from proprietary module nvidia, inheriting taint.")
    k(off + 0.2, "nvidia-uvm: Loaded the UVM driver, major device number 510.")
    s(16.4, "systemd[1]", "Starting nvidia-persistenced.service - NVIDIA Persistence Daemon...")
    s(16.6, "nvidia-persistenced[3121]", "Verbose syslog connection opened")
    s(16.6, "nvidia-persistenced[3121]", "Started (3121)")
    for i, pci in enumerate(hw["gpu_pci"]):
        s(17.9 + i * 0.35, "nvidia-persistenced[3121]", f"device {pci}.0 - registered")
    s(20.9, "nvidia-persistenced[3121]", "Local RPC services initialized")
    s(21.0, "systemd[1]", "Started nvidia-persistenced.service - NVIDIA Persistence Daemon.")
    s(21.4, "systemd[1]", "Starting nvidia-fabricmanager.service - NVIDIA fabric manager service...")
    s(33.8, "systemd[1]", "Started nvidia-fabricmanager.service - NVIDIA fabric manager service.")
    # Links come up.
    off = 27.0 + rng.random()
    for pci, name, ifn in zip(hw["hca_pci"], hw["hca_names"], hw["ib_if"]):
        k(off, f"mlx5_core {pci} {name}: Port: 1 Link INIT")
        k(off + 0.8 + rng.random() * 0.3, f"mlx5_core {pci} {name}: Port: 1 Link ACTIVE")
        k(off + 1.2 + rng.random() * 0.2, f"IPv6: ADDRCONF(NETDEV_CHANGE): {ifn}: link becomes ready")
        off += 0.07 + rng.random() * 0.05
    for pci, ifn, name in zip(hw["eth_pci"], hw["eth_if"], hw["eth_names"]):
        k(off, f"mlx5_core {pci} {ifn}: Link up")
        k(off + 0.001, f"mlx5_core {pci} {name}: Port: 1 Link ACTIVE")
        k(off + 0.02, f"bond0: (slave {ifn}): Enslaving as a backup interface with an up link")
        off += 0.2
    k(off + 0.1, "bond0: (slave %s): link status definitely up, 200000 Mbps full duplex" % hw["eth_if"][0])
    k(off + 0.1, "bond0: active interface up!")
    k(off + 0.2, "IPv6: ADDRCONF(NETDEV_CHANGE): bond0: link becomes ready")
    s(36.0, "systemd[1]", "Reached target network-online.target - Network is Online.")
    k(38.2044, "Lustre: Lustre: Build Version: 2.15.5")
    k(38.4122, f"LNet: Added LNI {node_ip('ib', idx)}@o2ib [8/256/0/180]")
    k(41.0021, "Lustre: Mounted lustre-client")
    s(41.2, "systemd[1]", "Mounted lustre.mount - /lustre.")
    s(42.0, "systemd[1]", "Started munge.service - MUNGE authentication service.")
    s(42.4, "systemd[1]", "Started slurmd.service - Slurm node daemon.")
    s(43.1, "systemd[1]", "Started ssh.service - OpenBSD Secure Shell server.")
    s(43.9, "systemd[1]", "Reached target multi-user.target - Multi-User System.")
    k(61.2201, "loop0: detected capacity change from 0 to 8")
    for n in range(3):
        k(62.0 + n * 0.2, f'audit: type=1400 audit({int((b + sec(62 + n * 0.2)).timestamp())}.{rng.randrange(1000):03d}:{4 + n}): '
                          f'apparmor="STATUS" operation="profile_load" profile="unconfined" name="{["lsb_release", "nvidia_modprobe", "man_filter"][n]}" '
                          f'pid={1700 + n * 3} comm="apparmor_parser"')


# Background noise: (weight, kind, generator). kind 'k' = kernel ring, 's' = syslog service.
def _noise_pool(hw, rng):
    def perf(t):
        a = rng.randrange(2501, 9000)
        return ("k", f"perf: interrupt took too long ({a} > {a - rng.randrange(1, 40)}), lowering kernel.perf_event_max_sample_rate to {rng.choice([79750, 63750, 50750, 39750])}")

    def audit(t):
        return ("k", f'audit: type=1400 audit({t.timestamp():.3f}:{rng.randrange(100, 999)}): apparmor="STATUS" operation="profile_replace" '
                     f'info="same as current profile, skipping" profile="unconfined" name="{rng.choice(["snap.lxd.activate", "rsyslogd", "man_filter"])}" '
                     f'pid={rng.randrange(100000, 400000)} comm="apparmor_parser"')

    def usb(t):
        return ("k", f"usb 1-1.{rng.randrange(1, 5)}: USB disconnect, device number {rng.randrange(3, 12)}")

    def cron(t):
        return ("s", f"CRON[{rng.randrange(100000, 900000)}]", "(root) CMD (/usr/local/sbin/node-healthcheck --quiet >/dev/null 2>&1)")

    def apt(t):
        return ("s", "systemd[1]", rng.choice(["Starting apt-daily.service - Daily apt download activities...",
                                               "apt-daily.service: Deactivated successfully.",
                                               "Starting systemd-tmpfiles-clean.service - Cleanup of Temporary Directories...",
                                               "systemd-tmpfiles-clean.service: Deactivated successfully.",
                                               "Starting sysstat-collect.service - system activity accounting tool...",
                                               "sysstat-collect.service: Deactivated successfully."]))

    def chrony(t):
        return ("s", "chronyd[1502]", rng.choice(["Selected source 10.20.0.2 (ntp1.cluster.local)",
                                                  "Source 10.20.0.3 replaced with 10.20.0.4 (ntp3.cluster.local)",
                                                  "System clock wrong by -0.000214 seconds"]))

    def logind(t):
        n = rng.randrange(100, 900)
        return ("s", "systemd-logind[1411]", rng.choice([f"New session {n} of user root.", f"Session {n} logged out. Waiting for processes to exit.",
                                                          f"Removed session {n}."]))

    def dcgm(t):
        return ("s", "nv-hostengine[2890]", "DCGM field-watch refresh completed (64 GPU fields, 8 entities)")

    return [(5, perf), (8, audit), (2, usb), (20, cron), (18, apt), (10, chrony), (14, logind), (6, dcgm)]


def _kernel_pool(rng):
    def kaudit(t):
        return f"kauditd_printk_skb: {rng.randrange(3, 40)} callbacks suppressed"

    def overlay(t):
        return ("overlayfs: fs on '/tmp/enroot-data/user-1043/pyxis_%d.0' does not support file handles, "
                "falling back to xino=off." % rng.randrange(30000, 60000))

    def lustre(t):
        ost, ip = rng.randrange(0, 48), rng.randrange(2, 30)
        return (f"Lustre: lustre-OST{ost:04x}-osc-ff1d4c7b29e18000: Connection restored to 10.10.3.{ip}@o2ib "
                f"(at 10.10.3.{ip}@o2ib)")

    def argv(t):
        return "process 'python3' launched '/dev/fd/3' with NULL argv: empty string added"

    def ipmi(t):
        return "ipmi_si IPI0001:00: IPMI message handler: BMC returned 0xd5, flag 0x00"

    return [(10, kaudit), (6, overlay), (4, lustre), (2, argv), (3, ipmi)]


def background(kl, hw, rng, start, end, mean_gap_s=1500, kernel_gap_s=1300):
    """Random benign lines between start and end: service/syslog noise and kernel-ring noise."""
    pool = _noise_pool(hw, rng)
    weights = [w for w, _ in pool]
    t = start
    while True:
        t = t + sec(rng.expovariate(1.0 / mean_gap_s))
        if t >= end:
            break
        item = rng.choices(pool, weights)[0][1](t)
        if item[0] == "k":
            kl.k(t, item[1])
        else:
            kl.svc(t, item[1], item[2])
    kpool = _kernel_pool(rng)
    kweights = [w for w, _ in kpool]
    t = start
    while True:
        t = t + sec(rng.expovariate(1.0 / kernel_gap_s))
        if t >= end:
            break
        kl.k(t, rng.choices(kpool, kweights)[0][1](t))


# ------------------------------------------------------------------------ benign distractors
def corrected_mce(kl, t, rng):
    kl.k(t, "mce: [Hardware Error]: Machine check events logged")
    kl.k(t + sec(0.000031), "EDAC skx MC2: HANDLING MCE MEMORY ERROR")
    kl.k(t + sec(0.000044), "EDAC skx MC2: CPU 56: Machine Check Event: 0x0 Bank 15: 0x8c00004000010091")
    kl.k(t + sec(0.000051), "EDAC MC2: 1 CE memory read error on CPU_SrcID#1_MC#2_Chan#0_DIMM#0 (channel:0 slot:0 page:0x5c2e31 "
                            "offset:0x0 grain:32 syndrome:0x0 - err_code:0x0000:0x0091  SystemAddress:0x5c2e31c40 ProcessorSocketId:0x1 "
                            "MemoryControllerId:0x2 ChannelAddress:0x1e0b8c40 ChannelId:0x0 RankAddress:0xf05c40 PhysicalRankId:0x0 "
                            "DimmSlotId:0x0 Row:0x3c17 Column:0x308 Bank:0x1 BankGroup:0x2 ChipSelect:0x0 ChipId:0x0)")


def corrected_aer(kl, t, port="0000:80:01.1", dev="0000:82:00.0"):
    kl.k(t, f"pcieport {port}: AER: Correctable error message received from {dev}")
    kl.k(t + sec(0.000007), f"pcieport {port}: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)")
    kl.k(t + sec(0.000009), f"pcieport {port}:   device [8086:352a] error status/mask=00000001/00002000")
    kl.k(t + sec(0.000011), f"pcieport {port}:    [ 0] RxErr                  (First)")


def nfs_blip(kl, t, secs=41):
    kl.k(t, "nfs: server home01 not responding, still trying")
    kl.k(t + sec(secs), "nfs: server home01 OK")


def bond_flap(kl, hw, t, secs=4.2):
    """Front-end Ethernet (bond0, not used by NCCL) flaps and recovers."""
    ifn, pci, name = hw["eth_if"][0], hw["eth_pci"][0], hw["eth_names"][0]
    kl.k(t, f"mlx5_core {pci} {ifn}: Link down")
    kl.k(t + sec(0.006), f"mlx5_core {pci} {name}: Port: 1 Link DOWN")
    kl.k(t + sec(0.011), f"bond0: (slave {ifn}): link status definitely down, disabling slave")
    kl.k(t + sec(0.012), f"bond0: (slave {hw['eth_if'][1]}): making interface the new active one")
    kl.k(t + sec(secs), f"mlx5_core {pci} {ifn}: Link up")
    kl.k(t + sec(secs + 0.0016), f"mlx5_core {pci} {name}: Port: 1 Link ACTIVE")
    kl.k(t + sec(secs + 0.09), f"bond0: (slave {ifn}): link status definitely up, 200000 Mbps full duplex")


def syn_flood(kl, t, port=29500):
    kl.k(t, f"TCP: request_sock_TCP: Possible SYN flooding on port {port}. Sending cookies.  Check SNMP counters.")


def old_xid13(kl, t, pci, pid):
    """A user-code XID from someone else's job long before the window."""
    kl.k(t, f"NVRM: Xid (PCI:{pci}): 13, pid={pid}, name=python, Graphics SM Warp Exception on (GPC 3, TPC 1, SM 0): Out Of Range Address")
    kl.k(t + sec(0.000011), f"NVRM: Xid (PCI:{pci}): 13, pid={pid}, name=python, Graphics Exception: ESR 0x51e730=0x20a000e 0x51e734=0x0 0x51e728=0xc81eb60 0x51e72c=0x1174")
    kl.k(t + sec(0.0031), f"NVRM: Xid (PCI:{pci}): 43, pid={pid}, name=python, Ch 00000010")


def job_epilogue_noise(kl, t, rng):
    kl.svc(t, "systemd[1]", "Started session-c12.scope - Session c12 of User slurm.")
    kl.svc(t + sec(0.8), "systemd[1]", "session-c12.scope: Deactivated successfully.")


def gpu_uuid_line(rng):
    return gpu_uuid(rng)
