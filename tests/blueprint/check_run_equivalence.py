#!/usr/bin/env python3
"""One attempt, one verdict: `culprit run` over a bundle gives `culprit diagnose`'s.

For every bundle of examples/ and examples/real/, and for variants that
exercise what used to be lost between the two (issue 33): a node known by an
alias whose logs sit under the alias, logs under an FQDN folder, a file
refused (a link out of the bundle, a FIFO), an ignored file, an
observations.jsonl, the verdict `culprit run` stores through static
discovery must equal the one `culprit diagnose` prints, byte for byte as
JSON, both in-process and through a real `culprit serve`. The engine is
$CULPRIT_ENGINE (ctest runs the script once per engine).

    check_run_equivalence.py CULPRIT SOURCE_DIR
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def fail(msg):
    print("check_run_equivalence: FAIL:", msg)
    sys.exit(1)


def bundles_under(d):
    return sorted(os.path.join(d, n) for n in os.listdir(d) if os.path.isfile(os.path.join(d, n, "context.json")))


def make_variants(examples, out):
    """Bundles built from the examples, each with one of the shapes a real
    carrier hands over. Returns their directories."""
    made = []

    def copy(src, name):
        dst = os.path.join(out, name)
        shutil.copytree(os.path.join(examples, src), dst, symlinks=True)
        made.append(dst)
        return dst

    def context(d):
        with open(os.path.join(d, "context.json")) as f:
            return json.load(f)

    def write_context(d, c):
        with open(os.path.join(d, "context.json"), "w") as f:
            json.dump(c, f, indent=2)

    # The case: node-02 known as gpu-box-7, its logs under that name.
    d = copy("nvlink-xid149", "alias-folder")
    c = context(d)
    c["nodes"] = [{"name": n, "aliases": ["gpu-box-7"]} if n == "node-02" else n for n in c["nodes"]]
    write_context(d, c)
    os.rename(os.path.join(d, "logs/node-02"), os.path.join(d, "logs/gpu-box-7"))

    # Logs under the nodes' FQDNs.
    d = copy("xid48-dbe", "fqdn-folders")
    for n in context(d)["nodes"]:
        p = os.path.join(d, "logs", n)
        if os.path.isdir(p):
            os.rename(p, p + ".cluster.example")

    # A link out of the bundle, a FIFO where a log should be, an ignored file.
    d = copy("ib-link-down", "refused-and-ignored")
    node = context(d)["nodes"][0]
    os.symlink("/etc/hostname", os.path.join(d, "logs", node, "secret.log"))
    os.mkfifo(os.path.join(d, "logs", node, "pipe.log"))
    with open(os.path.join(d, "NOTES.txt"), "w") as f:
        f.write("not evidence\n")

    # observations.jsonl next to the logs: the kernel's XID line given as an
    # observation instead of a kern.log (the form a remote collector uses).
    d = copy("xid48-dbe", "observations")
    c = context(d)
    moved = 0
    with open(os.path.join(d, "observations.jsonl"), "w") as out_f:
        for n in c["nodes"]:
            k = os.path.join(d, "logs", n, "kernel.log")
            if not os.path.isfile(k):
                continue
            with open(k) as f:
                for line in f:
                    out_f.write(json.dumps({"host": n, "source": "kernel", "text": line.rstrip("\n")}) + "\n")
                    moved += 1
            os.remove(k)
    if moved == 0:
        fail("the observations variant found no kernel.log to turn into observations")
    return made


def diagnose(culprit, bundle, env):
    r = subprocess.run([culprit, "diagnose", bundle, "--format", "json"], capture_output=True, text=True, env=env,
                       timeout=300)
    if r.returncode not in (0, 1):
        fail(f"culprit diagnose {bundle} exited {r.returncode}: {r.stderr[-500:]}")
    return json.loads(r.stdout)


def run(culprit, config, work, args, env, label):
    r = subprocess.run([culprit, "run", "--config", config, "--once", "--format", "jsonl",
                        "--store", f"sqlite:{work}/{label}.db"] + args,
                       capture_output=True, text=True, env=env, timeout=1200)
    # Exit 1 is "some attempt could not be attributed": compared below.
    if r.returncode not in (0, 1):
        fail(f"culprit run ({label}) exited {r.returncode}: {r.stderr[-800:]}")
    out = {}
    for line in r.stdout.splitlines():
        j = json.loads(line)
        out[j["attempt"]["key"].rsplit("@", 1)[1]] = j["verdict"]
    return out, r.stderr


def start_serve(culprit, work, env):
    port_file = os.path.join(work, "port")
    log = open(os.path.join(work, "serve.log"), "w")
    p = subprocess.Popen([culprit, "serve", "--listen", "127.0.0.1:0", "--port-file", port_file, "--no-access-log"],
                         stdout=log, stderr=log, env=env)
    for _ in range(600):
        if os.path.exists(port_file) and open(port_file).read().strip():
            return p, f"http://127.0.0.1:{open(port_file).read().strip()}"
        if p.poll() is not None:
            fail(f"culprit serve exited {p.returncode}: {open(os.path.join(work, 'serve.log')).read()[-500:]}")
        time.sleep(0.1)
    p.kill()
    fail("culprit serve did not write its port within 60 s")


def main():
    culprit, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    env = dict(os.environ)
    work = tempfile.mkdtemp(prefix="culprit-equiv.")
    serve = None
    try:
        examples = os.path.join(root, "examples")
        variants = os.path.join(work, "variants")
        os.mkdir(variants)
        made = make_variants(examples, variants)
        dirs = bundles_under(examples) + bundles_under(os.path.join(examples, "real")) + made
        names = [os.path.basename(d) for d in dirs]
        if len(set(names)) != len(names):
            fail("two bundles share a directory name; the run's keys would not tell them apart")
        config = os.path.join(work, "static.yaml")
        with open(config, "w") as f:
            f.write("cluster: equivalence\ndiscovery:\n  static:\n    bundles:\n")
            for d in dirs:
                f.write(f"      - {json.dumps(d + '/')}\n")

        want = {os.path.basename(d): diagnose(culprit, d, env) for d in dirs}
        # The variants must show the shapes they were made for, or the test
        # proves nothing about them.
        v = want["alias-folder"]
        if v["status"] != "attributed" or "node-02" not in v.get("culprit_nodes", []):
            fail(f"diagnose does not attribute the alias variant to node-02: {v['status']} {v.get('culprit_nodes')}")
        cov = want["refused-and-ignored"]["coverage"]
        if not any("secret.log" in p for p in cov["ignored_files"]) or "NOTES.txt" not in cov["ignored_files"]:
            fail(f"the refused/ignored variant's coverage does not list them: {cov['ignored_files']}")

        problems = []
        local, _ = run(culprit, config, work, [], env, "in-process")
        serve, url = start_serve(culprit, work, env)
        remote, _ = run(culprit, config, work, ["--service", url], env, "service")
        for label, got in (("in-process", local), ("service", remote)):
            if sorted(got) != sorted(want):
                problems.append(f"{label}: verdicts for {sorted(set(got) ^ set(want))} missing or extra")
            for name in sorted(set(got) & set(want)):
                a = json.dumps(got[name], sort_keys=True)
                b = json.dumps(want[name], sort_keys=True)
                if a != b:
                    keys = sorted(k for k in set(got[name]) | set(want[name]) if got[name].get(k) != want[name].get(k))
                    problems.append(f"{label}: {name}: differs from culprit diagnose in {keys}")
        for p in problems:
            print("  PROBLEM:", p)
        if problems:
            fail(f"{len(problems)} verdicts differ")
        print(f"check_run_equivalence: {len(dirs)} bundles ({len(made)} variants): culprit run in-process and "
              f"through culprit serve give culprit diagnose's verdict, byte for byte "
              f"(engine {env.get('CULPRIT_ENGINE', 'default')})")
    finally:
        if serve is not None:
            serve.send_signal(signal.SIGTERM)
            try:
                serve.wait(timeout=30)
            except subprocess.TimeoutExpired:
                serve.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
