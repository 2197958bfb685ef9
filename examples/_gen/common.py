"""Shared building blocks for the example bundles (stdlib only, deterministic).

Every helper takes an explicit random.Random so that each log file is reproducible on
its own. Times are timezone-aware UTC datetimes throughout.
"""

import json
import os
import random
from datetime import datetime, timedelta, timezone

UTC = timezone.utc
MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DAY = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def T(s):
    """'2026-03-14T01:00:02.250' -> aware UTC datetime."""
    if "." in s:
        return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=UTC)
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)


def sec(x):
    return timedelta(seconds=x)


# ----------------------------------------------------------------------------- timestamps
def ts_syslog(t):            # "Mar  4 01:02:03"
    return f"{MON[t.month - 1]} {t.day:>2} {t:%H:%M:%S}"


def ts_dmesg_t(t):           # "[Sat Mar 14 02:03:17 2026]"
    return f"[{DAY[t.weekday()]} {MON[t.month - 1]} {t.day:>2} {t:%H:%M:%S} {t.year}]"


def ts_pylog(t):             # "2026-03-14 02:03:17,402"
    return f"{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d}"


def ts_glog(t, level):       # torchrun agent: "W0314 01:00:05.184000"
    return f"{level}{t:%m%d %H:%M:%S}.{t.microsecond // 1000:03d}000"


def c10_date(t):            # c10/util/Logging.cpp: (tm_mon + 1) * 100 + tm_mday, no zero padding
    return str((t.month) * 100 + t.day)


def ts_c10d(t, level, rng):  # c10d: "E314 02:03:17.914225121" in March, "E1130 ..." in November (ns)
    return f"{level}{c10_date(t)} {t:%H:%M:%S}.{t.microsecond:06d}{rng.randrange(1000):03d}"


def ts_slurm(t):             # "[2026-03-14T02:03:34.512]"
    return f"[{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond // 1000:03d}]"


def ts_fm(t):                # Fabric Manager: "[Mar 11 2026 09:15:01]"
    return f"[{MON[t.month - 1]} {t.day:02d} {t.year} {t:%H:%M:%S}]"


def ts_nccl(t):              # NCCL >= 2.26 WARN prefix: "[2026-03-14 02:03:25]"
    return f"[{t:%Y-%m-%d %H:%M:%S}]"


def ts_elastic(t):           # ChildFailedError block: "2026-03-14_02:03:33"
    return f"{t:%Y-%m-%d_%H:%M:%S}"


def rfc3339(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


# ----------------------------------------------------------------------------- log buffers
class Log:
    """Collects (time, seq, line); rendered in time order, insertion order on ties.

    A text containing newlines becomes several lines sharing one time, which keeps
    multi-line blocks (tracebacks, C++ exception messages) contiguous.
    """

    def __init__(self):
        self.items = []
        self.seq = 0

    def add(self, t, text):
        for line in text.split("\n"):
            self.items.append((t, self.seq, line))
            self.seq += 1

    def __len__(self):
        return len(self.items)

    def render(self):
        self.items.sort(key=lambda x: (x[0], x[1]))
        return "".join(line + "\n" for _, _, line in self.items)


class KernelLog(Log):
    """Kernel ring buffer rendered either as syslog (kern.log) or as `dmesg -T`."""

    def __init__(self, host, boot, style):
        super().__init__()
        assert style in ("syslog", "dmesg_t")
        self.host, self.boot, self.style = host, boot, style

    def uptime(self, t):
        d = t - self.boot
        return f"[{d.days * 86400 + d.seconds:5d}.{d.microseconds:06d}]"

    def k(self, t, msg):
        if self.style == "syslog":
            self.add(t, f"{ts_syslog(t)} {self.host} kernel: {self.uptime(t)} {msg}")
        else:
            self.add(t, f"{ts_dmesg_t(t)} {msg}")

    def svc(self, t, ident, msg, early=False):
        """A non-kernel syslog line; in dmesg output only systemd's early boot lines appear."""
        if self.style == "syslog":
            self.add(t, f"{ts_syslog(t)} {self.host} {ident}: {msg}")
        elif early and ident.startswith("systemd[1]"):
            self.add(t, f"{ts_dmesg_t(t)} {ident}: {msg}")


def write_bundle(root, context, files, readme):
    """files: {relative path: text or bytes}. Removes nothing outside root."""
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "context.json"), "w") as f:
        json.dump(context, f, indent=2)
        f.write("\n")
    for rel, text in sorted(files.items()):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb" if isinstance(text, bytes) else "w") as f:  # bytes: a binary file (a Flight Recorder dump)
            f.write(text)
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write(readme)


def hexid(rng, n):
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def gpu_uuid(rng):
    return f"GPU-{hexid(rng, 8)}-{hexid(rng, 4)}-{hexid(rng, 4)}-{hexid(rng, 4)}-{hexid(rng, 12)}"


def rng_for(*parts):
    return random.Random("|".join(str(p) for p in parts))
