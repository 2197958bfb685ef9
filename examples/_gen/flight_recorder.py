"""PyTorch Flight Recorder dumps, byte for byte as PyTorch writes them.

The layout is FlightRecorder::dump_dict (torch/csrc/distributed/c10d/FlightRecorderDetail.hpp,
version "2.4"); the bytes are those of torch::jit::Pickler with tag_aggregates off, as
pickle_str (TraceUtils.h) calls it: PROTO 2; a dict as EMPTY_DICT MARK key value ... SETITEMS;
a list as EMPTY_LIST MARK item ... APPENDS; a string as BINUNICODE followed by BINPUT the first
time and BINGET after (memoized by value); integers as BININT1 / BININT2 / BININT / LONG1 by
range; floats as big-endian BINFLOAT; tuples of 2 as TUPLE2; booleans as NEWTRUE / NEWFALSE.
(torch/csrc/jit/serialization/pickler.cpp.) Python's own pickle of the same value, and the JSON
form of dump_json, are written by `python_pickle` and `dump_json`.
"""

import json
import pickle
import struct


class _TorchPickler:
    def __init__(self):
        self.out = bytearray()
        self.memo = {}
        self.next_memo = 0

    def _put(self):
        if self.next_memo <= 0xFF:
            self.out += b"q" + bytes([self.next_memo])
        else:
            self.out += b"r" + struct.pack("<I", self.next_memo)
        self.next_memo += 1
        return self.next_memo - 1

    def _get(self, i):
        self.out += (b"h" + bytes([i])) if i <= 0xFF else (b"j" + struct.pack("<I", i))

    def push(self, v):
        if v is None:
            self.out += b"N"
        elif v is True or v is False:
            self.out += b"\x88" if v else b"\x89"
        elif isinstance(v, int):
            if 0 <= v <= 0xFF:
                self.out += b"K" + bytes([v])
            elif 0 <= v <= 0xFFFF:
                self.out += b"M" + struct.pack("<H", v)
            elif -2**31 <= v < 2**31:
                self.out += b"J" + struct.pack("<i", v)
            else:
                self.out += b"\x8a\x08" + struct.pack("<q", v)
        elif isinstance(v, float):
            self.out += b"G" + struct.pack(">d", v)
        elif isinstance(v, str):
            if v in self.memo:
                self._get(self.memo[v])
            else:
                b = v.encode()
                self.out += b"X" + struct.pack("<I", len(b)) + b
                self.memo[v] = self._put()
        elif isinstance(v, tuple):
            if len(v) in (1, 2, 3):
                for x in v:
                    self.push(x)
                self.out += bytes([0x84 + len(v)])
            else:
                self.out += b"("
                for x in v:
                    self.push(x)
                self.out += b"t"
        elif isinstance(v, list):
            self.out += b"]("
            for x in v:
                self.push(x)
            self.out += b"e"
        elif isinstance(v, dict):
            self.out += b"}("
            for k, x in v.items():
                self.push(k)
                self.push(x)
            self.out += b"u"
        else:
            raise TypeError(type(v))


def torch_pickle(value):
    p = _TorchPickler()
    p.out += b"\x80\x02"
    p.push(value)
    p.out += b"."
    return bytes(p.out)


def python_pickle(value, protocol=4):
    return pickle.dumps(value, protocol=protocol)


def frame(name, filename, line):
    return {"name": name, "filename": filename, "line": line}


def entry(record_id, pg_id, pg, seq, op, state, sizes, t_ns, frames, p2p_seq=0, is_p2p=False, timeout_ms=600000):
    """One entry of getCollectiveTrace, in its key order. pg = (name, desc)."""
    e = {"frames": frames, "record_id": record_id, "pg_id": pg_id, "process_group": tuple(pg),
         "thread_name": "pt_main_thread", "thread_id": "139872519767872",
         "collective_seq_id": seq, "p2p_seq_id": p2p_seq, "op_id": seq, "profiling_name": op,
         "time_created_ns": t_ns, "input_sizes": [list(sizes)], "input_dtypes": ["Float"],
         "output_sizes": [list(sizes)], "output_dtypes": ["Float"], "state": state,
         "time_discovered_started_ns": t_ns + 40000 if state != "scheduled" else None,
         "time_discovered_completed_ns": t_ns + 900000 if state == "completed" else None,
         "retired": state == "completed", "timeout_ms": timeout_ms, "is_p2p": is_p2p}
    if state == "completed":
        e["duration_ms"] = 0.75
    return e


def dump(groups, status, entries, nccl="2.21.5"):
    """groups: [(name, desc, [ranks])]; status: {pg_id: (enqueued, started, completed)}."""
    return {"version": "2.4",
            "pg_config": {n: {"name": n, "desc": d, "ranks": "[" + ", ".join(str(r) for r in rk) + "]"}
                          for n, d, rk in groups},
            "comm_lib_version": nccl,
            "pg_status": {str(i): {"last_enqueued_collective": a, "last_started_collective": b,
                                   "last_completed_collective": c} for i, (a, b, c) in status.items()},
            "entries": entries}


def dump_json(value):
    """The JSON form (dump_json): no frames, pg_status values as strings, 0 for unknown times."""
    v = json.loads(json.dumps(value, default=list))
    for s in v.get("pg_status", {}).values():
        for k in s:
            s[k] = str(s[k])
    for e in v.get("entries", []):
        e.pop("frames", None)
        for k in ("time_discovered_started_ns", "time_discovered_completed_ns"):
            if e.get(k) is None:
                e[k] = 0
    return json.dumps(v).encode()
