"""NVIDIA Fabric Manager log (benign traffic only)."""

from .common import Log, sec, ts_fm


class FabricManager:
    def __init__(self, rng, tid=2841):
        self.log = Log()
        self.rng = rng
        self.tid = tid

    def line(self, t, level, msg, tid=None):
        self.log.add(t, f"{ts_fm(t)} [{level}] [tid {tid or self.tid}] {msg}")

    def start(self, t, version):
        opts = [f"Fabric Manager version {version} is running with the following configuration options",
                "Logging level = 4", "Logging file name/path = /var/log/fabricmanager.log", "Append to log file = 1",
                "Max Log file size = 1024 (MBs)", "Use Syslog file = 0", "Fabric Manager communication ports = 16000",
                "Fabric Mode = 0", "Fabric Mode Restart = 0", "FM Library communication bind interface = 127.0.0.1",
                "FM Library communication unix domain socket = ", "FM Library communication port number = 6666",
                "Continue to run when facing failures = 0", "Option when facing GPU to NVSwitch NVLink failure = 0",
                "Option when facing NVSwitch to NVSwitch NVLink failure = 0", "Abort CUDA jobs when FM exits = 1",
                "LMDB_LOG: Successfully initialized LMDB", "Connected to 1 node.",
                "Getting fabric node FM version info", "getting NVSwitch device information",
                "detected number of NVSwitches: 2", "getting NVLink device information",
                "NVLink Inband feature is enabled. Hence Fabric Manager is not opening and operating on GPUs directly.",
                "Successfully configured all the available NVSwitches to route GPU NVLink traffic. NVLink Peer-to-Peer "
                "support will be enabled once GPUs are successfully registered with the NVLink fabric."]
        for i, o in enumerate(opts):
            self.line(t + sec(i * 0.4 if i > 15 else 0), "INFO", o)

    def inband(self, t, n=8):
        """GPU registration / multicast team requests when CUDA jobs start."""
        rng = self.rng
        for i in range(n):
            tt = t + sec(i * rng.uniform(0.01, 0.05))
            rid = "%016x" % rng.randrange(1 << 64)
            self.line(tt, "INFO", "Received an inband message:  Message header details: magic Id:adbc request Id:"
                                  f"{rid} status:0 type:2 length:40", tid=self.tid + 14)
            self.line(tt + sec(0.002), "INFO", "Sending inband response message:  Message header details: magic Id:adbc "
                                               f"request Id:{rid} status:0 type:3 length:24", tid=self.tid + 14)
