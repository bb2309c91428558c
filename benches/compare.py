#!/usr/bin/env python3
"""Side-by-side benchmark: stock pgbench vs pgbench-rs on the same throwaway server.

Runs each workload with both clients alternately (A B A B ..., several pairs) and
reports medians and pair-by-pair ratios of:
  tps, latency average, client CPU per transaction (user+sys of the client process
  over its transactions), client CPU / server CPU (the server does the same work per
  transaction for both clients, so this ratio cancels the host's speed drift),
  client peak RSS, and (separately, with callgrind) client instructions per
  transaction on the SELECT 1 workload.
It also splits the client's CPU into user and kernel time with its context switches
per transaction, and gives the bound any client waiting for each result meets: the
client/server CPU ratio pgbench-rs would reach with no user-space work at all, and the
tps a cheaper client wins from its CPU alone where the server is the bottleneck. For
`-i` it times what the server alone needs (COPY from files in one or two sessions,
vacuum, primary key), the bound for any initialising client.

Usage: benches/compare.sh [--pairs N] [--seconds S] [--scale N] [--only NAME,...]
Writes benches/results/<date>-<host>.md (and prints it).
"""

import argparse
import datetime
import os
import platform
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

SCRAM_USER = "bench_scram"
SCRAM_PASSWORD = "bench-scram-password"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def bindir():
    for d in [os.environ.get("PG_BINDIR", "")]:
        if d and os.path.exists(os.path.join(d, "initdb")):
            return d
    out = sh(["pg_config", "--bindir"]).stdout.strip()
    return out


class Cluster:
    """A throwaway cluster tuned for benchmarking (no fsync, no synchronous commit)."""

    def __init__(self, bin_dir):
        self.bin = bin_dir
        self.dir = tempfile.mkdtemp(prefix="pgbench-rs-bench-")
        self.data = os.path.join(self.dir, "data")
        self.port = 40000 + os.getpid() % 20000
        self.root = os.geteuid() == 0
        if self.root:
            shutil.chown(self.dir, "postgres", "postgres")
        self.run_as(["initdb", "-A", "trust", "-U", "postgres", "--no-sync", "-D", self.data])
        # TCP on loopback with TLS (a self-made certificate) and a SCRAM role, for the
        # connection-storm workloads (-C); everything else uses the Unix socket.
        key, cert = os.path.join(self.data, "server.key"), os.path.join(self.data, "server.crt")
        sh(["openssl", "req", "-new", "-x509", "-days", "2", "-nodes", "-subj", "/CN=localhost",
            "-newkey", "rsa:2048", "-keyout", key, "-out", cert])
        os.chmod(key, 0o600)
        if self.root:
            for f in (key, cert):
                shutil.chown(f, "postgres", "postgres")
        hba = os.path.join(self.data, "pg_hba.conf")
        rules = open(hba).read()
        with open(hba, "w") as f:
            f.write(f"host all {SCRAM_USER} 127.0.0.1/32 scram-sha-256\n" + rules)
        conf = f"""
listen_addresses = '127.0.0.1'
unix_socket_directories = '{self.dir}'
port = {self.port}
max_connections = 1100
shared_buffers = 512MB
fsync = off
synchronous_commit = off
full_page_writes = off
checkpoint_timeout = 30min
max_wal_size = 8GB
autovacuum = off
ssl = on
password_encryption = 'scram-sha-256'
"""
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(conf)
        self.run_as(["pg_ctl", "-D", self.data, "-w", "-l", os.path.join(self.dir, "log"), "start"])
        self.postmaster = int(open(os.path.join(self.data, "postmaster.pid")).readline())
        self.psql(f"create role {SCRAM_USER} login superuser password '{SCRAM_PASSWORD}'", db="postgres")
        self.bouncer = None

    def env_tcp(self, tls, db="bench"):
        """Over TCP as the SCRAM role, with or without TLS."""
        e = self.env(db)
        e.update(PGHOST="127.0.0.1", PGUSER=SCRAM_USER, PGPASSWORD=SCRAM_PASSWORD,
                 PGSSLMODE="require" if tls else "disable")
        return e

    def start_bouncer(self):
        """pgbouncer (Debian's package) in transaction pooling mode in front of the
        server; its clients connect over loopback TCP without a password."""
        exe = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        if not os.path.exists(exe):
            return False
        self.bouncer_port = self.port + 2
        ini = os.path.join(self.dir, "pgbouncer.ini")
        with open(ini, "w") as f:
            f.write(f"""[databases]
bench = host={self.dir} port={self.port} user=postgres dbname=bench
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {self.bouncer_port}
unix_socket_dir =
auth_type = any
pool_mode = transaction
max_client_conn = 2500
default_pool_size = 16
logfile = {self.dir}/pgbouncer.log
pidfile = {self.dir}/pgbouncer.pid
""")
        # runuser's PAM session resets the open-files limit: raise it again inside.
        argv = ["sh", "-c", f"ulimit -n 8192 && exec {exe} -d {ini}"]
        if self.root:
            shutil.chown(ini, "postgres", "postgres")
            argv = ["runuser", "-u", "postgres", "--"] + argv
        sh(argv)
        time.sleep(0.5)
        self.bouncer = os.path.join(self.dir, "pgbouncer.pid")
        return True

    def env_bouncer(self):
        e = self.env()
        e.update(PGHOST="127.0.0.1", PGPORT=str(self.bouncer_port), PGUSER="postgres",
                 PGSSLMODE="disable")
        return e

    def run_as(self, argv):
        argv = [os.path.join(self.bin, argv[0])] + argv[1:]
        if self.root:
            argv = ["runuser", "-u", "postgres", "--"] + argv
        return sh(argv)

    def env(self, db="bench"):
        e = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        e.update(PGHOST=self.dir, PGPORT=str(self.port), PGUSER="postgres", PGDATABASE=db)
        return e

    def psql(self, sql, db="bench"):
        return sh([os.path.join(self.bin, "psql"), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
                   "-c", sql], env=self.env(db)).stdout

    def cpu_seconds(self):
        """CPU time of the whole server: every process, plus what the postmaster
        reaped from exited backends."""
        hz = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                stat = open(f"/proc/{pid}/stat").read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            ppid = int(fields[1])
            if int(pid) == self.postmaster:
                total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
            elif ppid == self.postmaster:
                total += int(fields[11]) + int(fields[12])
        return total / hz

    def stop(self):
        if self.bouncer and os.path.exists(self.bouncer):
            try:
                os.kill(int(open(self.bouncer).read().strip()), 15)
            except (OSError, ValueError):
                pass
        try:
            self.run_as(["pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop"])
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def run_client(argv, env):
    """Runs a client under GNU time (a small process, so its fork does not inflate the
    child's peak RSS as a Python fork would); returns output, exit status, user and
    system CPU seconds, context switches, peak RSS (KiB) and wall seconds."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        t = time.monotonic()
        p = subprocess.run(["/usr/bin/time", "-o", tf.name, "-f", "%U %S %M %w %c"] + argv,
                           env=env, capture_output=True, text=True)
        wall = time.monotonic() - t
        fields = tf.read().split()[-5:]
    if len(fields) == 5:
        user, system, rss = float(fields[0]), float(fields[1]), int(fields[2])
        switches = int(fields[3]) + int(fields[4])
    else:
        user, system, rss, switches = 0, 0, 0, 0
    return {"out": p.stdout, "err": p.stderr, "code": p.returncode, "user": user,
            "sys": system, "cpu": user + system, "switches": switches, "rss": rss, "wall": wall}


def init_server_alone(cl, sessions, scale):
    """Wall seconds the server alone needs for the work of `-i -s scale` over
    `sessions` connections: the accounts rows COPYed from files the server reads itself
    (so no client generates or sends anything), then vacuum analyze and the primary key
    as pgbench makes them. One session truncates and COPYs with FREEZE in one
    transaction, as pgbench does; several sessions cannot (only the truncating
    transaction may freeze). No client can initialise faster on this machine."""
    rows = 100000 * scale
    files = []
    for k in range(sessions):
        first, last = k * rows // sessions + 1, (k + 1) * rows // sessions
        path = os.path.join(cl.dir, f"accounts.{sessions}.{k}")
        if not os.path.exists(path):
            cl.psql(f"copy (select a, (a - 1) / 100000 + 1, 0, '' from generate_series({first}, {last}) a) to '{path}'")
        files.append(path)
    cl.psql("alter table pgbench_accounts drop constraint if exists pgbench_accounts_pkey")
    cl.psql("truncate pgbench_accounts")
    cl.psql("checkpoint")
    psql = [os.path.join(cl.bin, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1"]
    t = time.monotonic()
    if sessions == 1:
        sh(psql + ["-c", "begin", "-c", "truncate pgbench_accounts",
                   "-c", f"copy pgbench_accounts from '{files[0]}' with (freeze on)", "-c", "commit"],
           env=cl.env())
    else:
        loaders = [subprocess.Popen(psql + ["-c", f"copy pgbench_accounts from '{f}'"], env=cl.env())
                   for f in files]
        if any(p.wait() != 0 for p in loaders):
            raise RuntimeError("server-side COPY failed")
    cl.psql("vacuum analyze pgbench_accounts")
    cl.psql("alter table pgbench_accounts add primary key (aid)")
    return time.monotonic() - t


def parse_report(out):
    def grab(pattern):
        m = re.search(pattern, out)
        return float(m.group(1)) if m else None
    return {
        "tps": grab(r"tps = ([0-9.]+)"),
        "lat": grab(r"latency average = ([0-9.]+) ms"),
        "lag": grab(r"rate limit schedule lag: avg ([0-9.]+)"),
        "tx": grab(r"number of transactions actually processed: ([0-9]+)"),
    }


def workloads(seconds, only):
    select1 = os.path.join(tempfile.gettempdir(), "pgbench-rs-select1.sql")
    with open(select1, "w") as f:
        f.write("SELECT 1;\n")
    ins = os.path.join(EXAMPLES, "index-inserts-only.sql")
    T = ["-T", str(seconds)]
    # The third field says where the clients connect: the Unix socket (default; with
    # PGBENCH_RS_IO=epoll: socket-epoll), TCP with SCRAM without or with TLS, or
    # pgbouncer.
    all_w = [
        ("index-inserts -c 8", ["-n", "-c", "8", "-j", "8", "-f", ins] + T),
        ("index-inserts -c 256 -j 256", ["-n", "-c", "256", "-j", "256", "-f", ins] + T),
        ("select-only simple", ["-n", "-S", "-c", "8", "-j", "8"] + T),
        ("select-only prepared", ["-n", "-S", "-M", "prepared", "-c", "8", "-j", "8"] + T),
        ("tpcb-like prepared", ["-n", "-M", "prepared", "-c", "8", "-j", "8"] + T),
        ("SELECT 1 -c 2", ["-n", "-c", "2", "-j", "2", "-f", select1] + T),
        ("SELECT 1 -c 32", ["-n", "-c", "32", "-j", "32", "-f", select1] + T),
        ("select-only -R 2000", ["-n", "-S", "-R", "2000", "-c", "8", "-j", "8"] + T),
        # More clients than threads, as users run pgbench (issues #15, #16): peak RSS.
        ("select-only -c 1000 -j 10", ["-n", "-S", "-c", "1000", "-j", "10"] + T),
        ("select-only -c 1000 -j 1000", ["-n", "-S", "-c", "1000", "-j", "1000"] + T),
        ("tpcb-like -c 32 -j 2", ["-n", "-c", "32", "-j", "2"] + T),
        ("SELECT 1 -c 32 -j 2", ["-n", "-c", "32", "-j", "2", "-f", select1] + T),
        ("select-only -c 256 -j 8", ["-n", "-S", "-c", "256", "-j", "8"] + T),
        # The same two with pgbench-rs on its epoll driver instead of io_uring (issue #16):
        # stock is the same program either way, so the two rows' ratios compare drivers.
        ("SELECT 1 -c 32 -j 2, epoll", ["-n", "-c", "32", "-j", "2", "-f", select1] + T, "socket-epoll"),
        ("select-only -c 256 -j 8, epoll", ["-n", "-S", "-c", "256", "-j", "8"] + T, "socket-epoll"),
        # Connection storms (issue #16): a new connection per transaction.
        ("-C SCRAM", ["-n", "-S", "-C", "-c", "4", "-j", "4"] + T, "scram"),
        ("-C SCRAM TLS", ["-n", "-S", "-C", "-c", "4", "-j", "4"] + T, "scram-tls"),
        ("pgbouncer -c 2000 -j 8", ["-n", "-S", "-M", "simple", "-c", "2000", "-j", "8"] + T, "bouncer"),
    ]
    all_w = [w if len(w) == 3 else w + ("socket",) for w in all_w]
    return [w for w in all_w if not only or any(o in w[0] for o in only)]


def instructions_per_tx(binary, env, mode, n1=2000, n2=12000):
    """Client instructions per SELECT 1 transaction, with callgrind, pinned to CPU 0."""
    select1 = os.path.join(tempfile.gettempdir(), "pgbench-rs-select1.sql")
    counts = []
    for n in (n1, n2):
        out = tempfile.mktemp(prefix="cg-")
        res = subprocess.run(["taskset", "-c", "0", "valgrind", "--tool=callgrind",
                              f"--callgrind-out-file={out}", binary, "-n", "-M", mode,
                              "-t", str(n), "-f", select1], env=env, capture_output=True, text=True)
        m = re.search(r"Collected : (\d+)", res.stderr)
        os.unlink(out) if os.path.exists(out) else None
        if not m:
            return None
        counts.append(int(m.group(1)))
    return (counts[1] - counts[0]) / (n2 - n1)


def med(per, who, key):
    """Median of one figure over a client's runs of a workload."""
    return median([r[key] for r in per[who]])


def both(per, key, digits):
    """Stock's and our median of one figure, formatted."""
    return [fmt(med(per, "stock", key), digits), fmt(med(per, "ours", key), digits)]


def pair_ratio(per, num, den):
    """Median over the A/B pairs of ours[num] / stock[den]."""
    return median([a[num] / b[den] for a, b in zip(per["ours"], per["stock"]) if a[num] and b[den]])


def tps_bound(per):
    """Median over the A/B pairs of (1 + c_stock) / (1 + c_ours), c = client CPU / server
    CPU: the tps ours/stock that the client's CPU alone accounts for where client and
    server share busy cores (what the client leaves, the server gets), with the server's
    own CPU per transaction unchanged."""
    return median([(1 + b["cpu_ratio"]) / (1 + a["cpu_ratio"])
                   for a, b in zip(per["ours"], per["stock"])
                   if a["cpu_ratio"] is not None and b["cpu_ratio"] is not None])


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, d=1):
    return "n/a" if x is None else f"{x:.{d}f}"


def machine():
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{cpu}, {os.cpu_count()} CPUs, {mem:.0f} GiB, Linux {platform.release()}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--only", default="")
    ap.add_argument("--ours", default=os.path.join(ROOT, "target", "release", "pgbench-rs"))
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--no-init", action="store_true")
    args = ap.parse_args()
    only = [o for o in args.only.split(",") if o]
    # 2,000 clients need 2,000 sockets (stock pgbench checks its limit before it starts).
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    bd = bindir()
    stock = os.path.join(bd, "pgbench")
    ours = args.ours
    version = sh([stock, "--version"]).stdout.strip()
    cl = Cluster(bd)
    try:
        sh([os.path.join(bd, "createdb"), "bench"], env=cl.env("postgres"))
        env = cl.env()
        rows = []
        if not args.no_init:
            # -i -s 50, wall time, alternating; the last one leaves tables for the runs.
            init = {"stock": [], "ours": [], "ours -j 2": []}
            for _ in range(args.pairs):
                for name, argv in (("stock", [stock]), ("ours", [ours]), ("ours -j 2", [ours, "-j", "2"])):
                    r = run_client(argv + ["-i", "-q", "-s", "50"], env)
                    init[name].append(r["wall"])
            for sessions, name in ((1, "server alone, 1 session"), (2, "server alone, 2 sessions")):
                init[name] = [init_server_alone(cl, sessions, 50) for _ in range(args.pairs)]
            rows.append(("-i -s 50 (wall s)", init))
        sh([stock, "-i", "-q", "-s", str(args.scale)], env=env)
        cl.psql(open(os.path.join(EXAMPLES, "index-inserts-only.setup.sql")).read())
        results = []
        for name, argv, where in workloads(args.seconds, only):
            if where == "bouncer" and cl.bouncer is None and not cl.start_bouncer():
                print(f"{name}: skipped, pgbouncer is not installed", file=sys.stderr)
                continue
            wenv = {"socket": env, "socket-epoll": dict(env, PGBENCH_RS_IO="epoll"),
                    "scram": cl.env_tcp(False), "scram-tls": cl.env_tcp(True),
                    "bouncer": cl.env_bouncer() if cl.bouncer else env}[where]
            per = {"stock": [], "ours": []}
            for i in range(args.pairs):
                order = (("stock", stock), ("ours", ours)) if i % 2 == 0 else (("ours", ours), ("stock", stock))
                for who, binary in order:
                    # Every run starts from the same state: the insert workloads grow
                    # pgbench_history, and later runs would pay for bigger indexes.
                    cl.psql("truncate pgbench_history")
                    cl.psql("checkpoint")
                    s0 = cl.cpu_seconds()
                    r = run_client([binary] + argv, wenv)
                    time.sleep(0.3)  # let exiting backends be reaped
                    server = cl.cpu_seconds() - s0
                    rep = parse_report(r["out"])
                    if r["code"] != 0 or rep["tps"] is None:
                        print(f"{name}: {who} failed:\n{r['err'][-2000:]}", file=sys.stderr)
                        continue
                    tx = rep["tx"] or 1
                    per[who].append({
                        "tps": rep["tps"], "lat": rep["lat"], "lag": rep["lag"],
                        "cpu_tx_us": 1e6 * r["cpu"] / tx,
                        "user_tx_us": 1e6 * r["user"] / tx, "sys_tx_us": 1e6 * r["sys"] / tx,
                        "switches_tx": r["switches"] / tx,
                        "kernel_share": r["sys"] / r["cpu"] if r["cpu"] else None,
                        "cpu_ratio": r["cpu"] / server if server > 0 else None,
                        "sys_ratio": r["sys"] / server if server > 0 else None,
                        "rss_mib": r["rss"] / 1024,
                    })
            results.append((name, per))
        instr = {}
        if not args.no_callgrind and shutil.which("valgrind") and shutil.which("taskset"):
            for mode in ("simple", "prepared"):
                instr[mode] = (instructions_per_tx(stock, env, mode), instructions_per_tx(ours, env, mode))
    finally:
        cl.stop()

    date = datetime.date.today().isoformat()
    host = socket.gethostname()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [f"# pgbench-rs vs stock pgbench, {date}", "",
             f"Machine: {machine()}. Server and clients on the same machine.",
             f"Stock: {version}. pgbench-rs: {commit}. {args.pairs} alternating pairs of {args.seconds} s, scale {args.scale}.",
             "Ratios are pgbench-rs / stock, median of the pair-by-pair ratios.", ""]
    if not args.no_init and rows:
        _, init = rows[0]
        lines += ["## Initialisation (-i -s 50), wall seconds", "",
                  "| client | median s | ratio to stock |", "|---|---|---|"]
        base = median(init["stock"])
        for k, v in init.items():
            m = median(v)
            lines.append(f"| {k} | {fmt(m, 2)} | {fmt(m / base if m and base else None, 2)} |")
        lines += ["", "\"Server alone\" is the bound for any client: the server COPYs the rows from "
                  "files it reads itself, then vacuums and builds the primary key (one session: "
                  f"COPY FREEZE as pgbench). 0.7 of stock's median is {fmt(0.7 * base if base else None, 2)} s.", ""]
    lines += ["## Workloads", "",
              "| workload | tps stock | tps ours | tps ratio | lat ms stock | lat ms ours | client CPU µs/tx stock | ours | ratio | client/server CPU stock | ours | ratio | peak RSS MiB stock | ours | lag ms stock | ours |",
              "|---|" + "---|" * 16]
    for name, per in results:
        lines.append("| " + " | ".join(
            [name] + both(per, "tps", 1) + [fmt(pair_ratio(per, "tps", "tps"), 3)] + both(per, "lat", 3)
            + both(per, "cpu_tx_us", 1) + [fmt(pair_ratio(per, "cpu_tx_us", "cpu_tx_us"), 3)]
            + both(per, "cpu_ratio", 3) + [fmt(pair_ratio(per, "cpu_ratio", "cpu_ratio"), 3)]
            + both(per, "rss_mib", 1) + both(per, "lag", 3)) + " |")
    lines += ["", "## Where the client's CPU goes", "",
              "User and kernel CPU per transaction, context switches per transaction, and the "
              "bound: the client/server CPU ratio to stock that pgbench-rs would reach with its "
              "kernel time as measured and no user-space work at all. tps bound: the tps ours/stock "
              "the client's CPU alone accounts for on cores it shares with a busy server, "
              "(1 + c stock) / (1 + c ours) with c the client/server CPU ratio, the server's CPU "
              "per transaction unchanged (1.05 needs c stock ≥ 0.05 even for a client that costs "
              "nothing); tps above it come from the server spending less per transaction.", "",
              "| workload | user µs/tx stock | ours | kernel µs/tx stock | ours | kernel share stock | ours | switches/tx stock | ours | bound | tps bound |",
              "|---|" + "---|" * 10]
    for name, per in results:
        lines.append("| " + " | ".join(
            [name] + both(per, "user_tx_us", 2) + both(per, "sys_tx_us", 2) + both(per, "kernel_share", 2)
            + both(per, "switches_tx", 2) + [fmt(pair_ratio(per, "sys_ratio", "cpu_ratio"), 3)]
            + [fmt(tps_bound(per), 3)]) + " |")
    if instr:
        lines += ["", "## Client instructions per SELECT 1 transaction (callgrind, pinned to CPU 0)", "",
                  "| mode | stock | ours | ratio |", "|---|---|---|---|"]
        for mode, (s, o) in instr.items():
            lines.append(f"| {mode} | {fmt(s, 0)} | {fmt(o, 0)} | {fmt(o / s if s and o else None, 3)} |")
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.join(ROOT, "benches", "results"), exist_ok=True)
    path = os.path.join(ROOT, "benches", "results", f"{date}-{host}.md")
    with open(path, "w") as f:
        f.write(text)
    print(text)
    print(f"written to {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
