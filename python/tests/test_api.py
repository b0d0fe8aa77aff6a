"""The Python API against the Rust crates and the `lasthop` binary (LASTHOP_BIN, which
crates/lasthop/tests/python.rs sets; the comparisons with the binary are skipped without it)."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pandas.api.types as pt
import pytest

import lasthop

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "examples/scenarios/seed000-e0-2tcp.toml"
BIN = os.environ.get("LASTHOP_BIN")


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory):
    out = tmp_path_factory.mktemp("qs") / "quickstart"
    d = lasthop.run(out=out, jobs=2)
    assert d == out
    return lasthop.load(d)


def test_sim_round_trip(tmp_path):
    r = lasthop.sim(SCENARIO, out=tmp_path / "py", seed=3)
    c = r.connections
    assert len(c) == 2
    assert list(c.columns[:3]) == ["point", "replication", "conn"]
    # The file the run wrote, read by pandas, is the DataFrame's own columns.
    raw = pd.read_csv(tmp_path / "py" / "connections.csv")
    for col in raw.columns:
        a, b = c[col], raw[col]
        if pt.is_numeric_dtype(b) and not pt.is_bool_dtype(c[col]):
            np.testing.assert_allclose(a.astype(float), b.astype(float), equal_nan=True)
        elif pt.is_bool_dtype(c[col]):
            assert (a.astype(int) == b).all(), col
        else:
            assert list(a.astype(str)) == list(b.astype(str)), col
    if BIN:
        subprocess.run(
            [BIN, "sim", str(SCENARIO), "--out", str(tmp_path / "cli"), "--seed", "3"],
            check=True,
            capture_output=True,
        )
        for f in ["connections.csv", "link.csv", "events.csv"]:
            assert (tmp_path / "py" / f).read_bytes() == (tmp_path / "cli" / f).read_bytes(), f


def test_sim_overrides(tmp_path):
    base = lasthop.sim(SCENARIO, out=tmp_path / "e0")
    r1 = lasthop.sim(
        SCENARIO, out=tmp_path / "r1", overrides={"link": "../links/seed000-r1.toml"}
    )
    assert base.connections["elapsed_s"].tolist() != r1.connections["elapsed_s"].tolist()


def test_dtypes(quickstart):
    c = quickstart.connections
    assert quickstart.dimensions == ["link"]
    assert len(c) == 2 * 2 * 3
    assert isinstance(c["point"].dtype, pd.CategoricalDtype)
    assert list(c["point"].cat.categories) == ["e0", "r1"]
    assert isinstance(c["link"].dtype, pd.CategoricalDtype)
    assert c["replication"].dtype == np.int64
    assert sorted(c["replication"].unique()) == [0, 1, 2]
    for col in ["start_s", "end_s", "elapsed_s", "throughput_Bps"]:
        assert c[col].dtype == np.float64, col
    for col in ["bytes", "rexmt_pkts", "rtos", "data_pkts"]:
        assert pt.is_integer_dtype(c[col]), col
    assert c["complete"].dtype == bool
    assert isinstance(c["data_dir"].dtype, pd.CategoricalDtype)
    assert (c["bytes"] == 188640).all()
    link = quickstart.link
    assert len(link) == 2 * 2 * 3
    assert set(link["dir"]) == {"down", "up"}
    s = quickstart.summary
    assert len(s) > 0


def test_summary_matches_connections(quickstart):
    # The medians of elapsed time per point, from the DataFrame, against summary.csv's.
    c = quickstart.connections
    per_run = c.groupby(["point", "replication"], observed=True)["elapsed_s"].max()
    assert per_run.groupby(level=0, observed=True).size().tolist() == [3, 3]


def test_events_read_when_asked(quickstart):
    # Only the report run keeps events.csv in the quick start.
    e = quickstart.events
    assert set(e["point"].astype(str)) <= {"r1"}
    assert e["time_ns"].dtype == np.int64
    assert isinstance(e["event"].dtype, pd.CategoricalDtype)


def test_check_kinds():
    assert lasthop.check(SCENARIO).kind == "scenario"
    assert lasthop.check(REPO / "examples/links/seed000-e0.toml").kind == "link"
    c = lasthop.check(REPO / "experiments/quickstart.toml")
    assert c.kind == "experiment"
    assert "e0" in c.description


def test_spec_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[down]\nrate = "fast"\n')
    with pytest.raises(lasthop.SpecError) as e:
        lasthop.check(bad)
    assert e.value.key == "down.rate"
    assert "fast" in e.value.message
    assert isinstance(e.value, ValueError)
    with pytest.raises(lasthop.SpecError) as e:
        lasthop.sim(SCENARIO, out=tmp_path / "x", overrides={"duration": "soon"})
    assert "duration" in e.value.key
    with pytest.raises(lasthop.SpecError) as e:
        lasthop.sim(SCENARIO, out=tmp_path / "x", overrides={"duration": object()})
    (tmp_path / "empty.toml").write_text("")
    with pytest.raises(lasthop.SpecError) as e:
        lasthop.check(tmp_path / "empty.toml")
    assert "empty" in e.value.message
    with pytest.raises(lasthop.LasthopError):
        lasthop.load(tmp_path / "missing")
    with pytest.raises(lasthop.SpecError):
        lasthop.run(REPO / "experiments/quickstart.toml", out=tmp_path / "s", shard="3/2")


def test_analyze(tmp_path):
    r = lasthop.sim(SCENARIO, out=tmp_path / "a")
    pcaps = sorted((tmp_path / "a").glob("*.pcap"))
    assert pcaps
    a = lasthop.analyze(pcaps[0])
    assert len(a) == 2
    assert a["bytes"].dtype == np.int64
    # Both captures and the event log: the run's own connections.csv (without the scenario's
    # names, which the captures alone cannot give).
    d = tmp_path / "a"
    both = lasthop.analyze(d / "fixed.pcap", d / "mobile.pcap", events=d / "events.csv")
    c = r.connections
    for col in ["elapsed_s", "bytes", "rexmt_pkts", "drops_queue", "drops_error", "rtos"]:
        assert both[col].tolist() == c[col].tolist(), col


def test_flow_columns(quickstart):
    c = quickstart.connections
    # Every run names its two transfers by the scenario's flows, and their hosts.
    assert c["flow_index"].tolist() == [0, 1] * 6
    assert list(c["flow_name"].astype(str)) == ["flows[0]", "flows[1]"] * 6
    assert isinstance(c["flow_name"].dtype, pd.CategoricalDtype)
    assert set(c["client_host"].astype(str)) == {"fixed"}
    assert set(c["server_host"].astype(str)) == {"mobile"}


def test_file_column_named_as_a_dimension(tmp_path):
    # link.csv's `dir` column beside a dimension named `dir`: kept as `dir_file`.
    exp = tmp_path / "exp.toml"
    exp.write_text(
        f'name = "dims"\nscenario = "{SCENARIO}"\nmode = "sim"\nreplications = 1\n'
        f'[matrix.dir]\ne0 = {{ link = "{REPO / "examples/links/seed000-e0.toml"}" }}\n'
    )
    r = lasthop.load(lasthop.run(exp, out=tmp_path / "out"))
    link = r.link
    assert link.columns.is_unique
    assert list(link["dir"].astype(str)) == ["e0", "e0"]
    assert list(link["dir_file"].astype(str)) == ["down", "up"]


def test_flow_columns_of_pages_and_streams(tmp_path):
    # pages.csv, page_objects.csv (seed 002's http flow), streams.csv and latency.csv (seed
    # 003's thin flows) name the scenario's flow as connections.csv does.
    web = lasthop.sim(REPO / "examples/scenarios/seed002-optimal-s2s.toml", out=tmp_path / "web")
    p = web.pages
    assert p["flow_index"].tolist() == p["flow"].tolist() == [0]
    assert list(p["flow_name"].astype(str)) == ["flows[0]"]
    assert isinstance(p["flow_name"].dtype, pd.CategoricalDtype)
    assert (list(p["client_host"].astype(str)), list(p["server_host"].astype(str))) == (
        ["mobile"],
        ["fixed"],
    )
    o = web.page_objects
    assert len(o) == 3
    assert (o["flow_index"] == o["flow"]).all()
    assert set(o["flow_name"].astype(str)) == {"flows[0]"}
    # The page's objects are its connections: the same flow in connections.csv.
    assert set(web.connections["flow_name"].astype(str)) == {"flows[0]"}

    thin = lasthop.sim(REPO / "examples/scenarios/seed003-greedy.toml", out=tmp_path / "thin")
    s = thin.streams
    assert pt.is_integer_dtype(s["flow_index"])
    assert not s["flow_index"].isna().any()
    assert set(s["flow_name"].astype(str)) >= {"flows[0]", "flows[2]#0", "flows[2]#1"}
    named = s[s["flow_name"].astype(str) == "flows[2]#0"]
    assert set(named["sender_host"].astype(str)) == {"zsender0"}
    assert set(named["receiver_host"].astype(str)) == {"receiver"}
    # Each latency row carries its stream's flow.
    lat = thin.latency
    of_stream = dict(zip(s["stream"], s["flow_index"]))
    assert len(lat) > 0
    assert (lat["flow_index"] == lat["stream"].map(of_stream)).all()
    assert set(lat["flow_name"].astype(str)) <= set(s["flow_name"].astype(str))
    # The streams' flows are the connections' flows.
    conn_flows = set(thin.connections["flow_index"])
    assert set(s["flow_index"]) <= conn_flows


def _small_experiment(tmp_path, name="small", mode="sim", replications=2):
    exp = tmp_path / f"{name}.toml"
    exp.write_text(
        f'name = "{name}"\nscenario = "{SCENARIO}"\nmode = "{mode}"\n'
        f"replications = {replications}\n"
        f'[matrix.link]\ne0 = {{ link = "{REPO / "examples/links/seed000-e0.toml"}" }}\n'
    )
    return exp


def test_run_progress_callback(tmp_path):
    exp = _small_experiment(tmp_path)
    calls = []
    lasthop.run(exp, out=tmp_path / "out", jobs=2, progress=lambda d, n: calls.append((d, n)))
    # Once before the first run, then after each of the two runs, counting up.
    assert calls[0] == (0, 2)
    assert calls[-1] == (2, 2)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(calls) == 3
    # Run again: every run is kept, none pending.
    again = []
    lasthop.run(exp, out=tmp_path / "out", progress=lambda d, n: again.append((d, n)))
    assert again == [(0, 0)]


def test_run_progress_bar_and_a_raising_callback(tmp_path, capsys):
    exp = _small_experiment(tmp_path)
    d = lasthop.run(exp, out=tmp_path / "bar", jobs=2, progress=True)
    # tqdm's text bar outside a notebook, on stderr.
    assert "2/2" in capsys.readouterr().err
    assert len(lasthop.load(d).connections) == 4

    def boom(done, pending):
        if done == 1:
            raise KeyError("stop")

    with pytest.raises(KeyError):
        lasthop.run(exp, out=tmp_path / "boom", jobs=1, progress=boom)
    # The experiment finished; its runs are kept.
    assert len(lasthop.load(tmp_path / "boom").connections) == 4
    with pytest.raises(TypeError):
        lasthop.run(exp, out=tmp_path / "x", progress="yes")


def test_run_emulated(tmp_path):
    """An emulated experiment runs as `lasthop run` runs it: refused before any run with a
    LasthopError saying why when the emulator cannot run (not root); with root and
    LASTHOP_ROOT_TESTS=1, run (the workload from LASTHOP_BIN)."""
    root = os.geteuid() == 0
    if root and os.environ.get("LASTHOP_ROOT_TESTS") == "1":
        if not BIN:
            pytest.skip("LASTHOP_BIN is not set")
        exp = _small_experiment(tmp_path, "emu", mode="emu", replications=1)
        r = lasthop.load(lasthop.run(exp, out=tmp_path / "emu", exe=BIN))
        assert r.mode == "emu"
        c = r.connections
        # Both flows start at 0 s; rows are in the order of each connection's first packet
        # (docs/analysis.md), which is the kernel's to choose between two SYNs sent at once.
        assert sorted(c["flow_index"].tolist()) == [0, 1]
        assert c["complete"].all()
        return
    if not root:
        exp = _small_experiment(tmp_path, "emu", mode="emu", replications=1)
        with pytest.raises(lasthop.LasthopError, match="needs root"):
            lasthop.run(exp, out=tmp_path / "emu")
        assert not (tmp_path / "emu" / "runs").exists()
        return
    # Root without LASTHOP_ROOT_TESTS: the refusal, as an unprivileged user: this process's
    # effective user nobody for the call (the saved user, root, takes it back).
    import pwd
    import shutil
    import tempfile

    try:
        nobody = pwd.getpwnam("nobody").pw_uid
    except KeyError:
        pytest.skip("no user nobody")
    d = Path(tempfile.mkdtemp(prefix="lasthop-emu-"))
    try:
        d.chmod(0o777)
        exp = _small_experiment(d, "emu", mode="emu", replications=1)
        os.seteuid(nobody)
        try:
            with pytest.raises(lasthop.LasthopError) as e:
                lasthop.run(exp, out=d / "emu")
        finally:
            os.seteuid(0)
        assert str(e.value).startswith("emu: emu mode, point e0: the emulator needs root"), e.value
        assert not (d / "emu" / "runs").exists()
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_load_several_directories(tmp_path, quickstart):
    small = lasthop.run(_small_experiment(tmp_path), out=tmp_path / "small", jobs=2)
    lasthop.sim(SCENARIO, out=tmp_path / "one")
    rs = lasthop.load([quickstart.path, small, tmp_path / "one"])
    assert isinstance(rs, lasthop.ResultsSet)
    assert rs.names == ["quickstart", "small", "one"]
    assert rs.dimensions == ["link"]
    c = rs.connections
    assert list(c.columns[:4]) == ["results", "point", "link", "replication"]
    assert isinstance(c["results"].dtype, pd.CategoricalDtype)
    assert list(c["results"].cat.categories) == ["quickstart", "small", "one"]
    assert c.groupby("results", observed=True).size().tolist() == [12, 4, 2]
    # point and the dimensions: categoricals over every directory's values.
    assert isinstance(c["point"].dtype, pd.CategoricalDtype)
    assert list(c["point"].cat.categories) == ["e0", "r1", "one"]
    assert isinstance(c["link"].dtype, pd.CategoricalDtype)
    assert c.loc[c["results"] == "one", "link"].isna().all()
    # Each directory's rows are its own table's.
    ref = lasthop.load(small).connections
    sub = c[c["results"] == "small"].reset_index(drop=True)[list(ref.columns)]
    for col in ref.columns:
        assert list(sub[col].astype(str)) == list(ref[col].astype(str)), col
    assert c["elapsed_s"].dtype == np.float64
    assert pt.is_integer_dtype(c["bytes"])
    s = rs.summary
    assert s["results"].iloc[0] == "quickstart"
    assert len(s) == len(quickstart.summary) + len(lasthop.load(small).summary)
    assert rs["small"].path == small
    with pytest.raises(ValueError):
        lasthop.load([small, small])


def test_parquet_events_and_trace_load_as_csv(tmp_path):
    # The same run kept as CSV and as Parquet ([outputs] format = "parquet"): lasthop.load
    # gives the same DataFrames.
    text = SCENARIO.read_text()
    pq_scenario = tmp_path / "scenarios" / "pq.toml"
    pq_scenario.parent.mkdir()
    (tmp_path / "links").symlink_to(REPO / "examples/links")
    pq_scenario.write_text(text + '\n[outputs]\nformat = "parquet"\n')
    csv_run = lasthop.sim(SCENARIO, out=tmp_path / "csv", seed=5)
    pq_run = lasthop.sim(pq_scenario, out=tmp_path / "pq", seed=5)
    d = tmp_path / "pq"
    assert (d / "events.parquet").exists() and not (d / "events.csv").exists()
    assert (d / "tcp_trace.parquet").exists() and not (d / "tcp_trace.csv").exists()
    assert (d / "events.parquet").stat().st_size < (tmp_path / "csv" / "events.csv").stat().st_size
    for table in ["events", "tcp_trace"]:
        a, b = csv_run.table(table), pq_run.table(table)
        assert len(a) > 100, table
        pd.testing.assert_frame_equal(
            a.drop(columns=["point"]), b.drop(columns=["point"]), check_exact=True
        )
    # The other tables do not depend on the form.
    pd.testing.assert_frame_equal(
        csv_run.connections.drop(columns=["point"]), pq_run.connections.drop(columns=["point"])
    )
    # A standard Parquet file: pandas (pyarrow) reads the same columns and values.
    raw = pd.read_parquet(d / "events.parquet")
    ref = pd.read_csv(tmp_path / "csv" / "events.csv")
    assert list(raw.columns) == list(ref.columns)
    assert raw["time_ns"].tolist() == ref["time_ns"].tolist()
    assert raw["event"].tolist() == ref["event"].tolist()
    if BIN:
        # The binary's flag, over the scenario's outputs: the same file.
        subprocess.run(
            [BIN, "sim", str(SCENARIO), "--out", str(tmp_path / "cli"), "--seed", "5",
             "--format", "parquet"],
            check=True,
            capture_output=True,
        )
        assert (tmp_path / "cli" / "events.parquet").read_bytes() == (
            d / "events.parquet"
        ).read_bytes()


def test_parquet_in_an_experiment(tmp_path):
    exp = _small_experiment(tmp_path, replications=1)
    exp.write_text(exp.read_text().replace(
        'replications = 1\n',
        'replications = 1\n[outputs]\nevents = "all"\nformat = "parquet"\n',
    ))
    r = lasthop.load(lasthop.run(exp, out=tmp_path / "out"))
    run = tmp_path / "out" / "runs" / "e0" / "0"
    assert (run / "events.parquet").exists() and not (run / "events.csv").exists()
    e = r.events
    assert len(e) > 100 and e["time_ns"].dtype == np.int64
    assert isinstance(e["event"].dtype, pd.CategoricalDtype)
    assert len(r.tcp_trace) > 0
    # The report drew the run's plots from the Parquet files.
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Congestion window and slow-start threshold" in html
    assert "Time-sequence graph, connection 1" in html
    assert "Throughput over time" in html


def test_latency_probes(tmp_path):
    # A ping flow on seed 000's idle e0: 84-byte echoes take 2 x (10.5 + 300) = 621 ms.
    spec = tmp_path / "ping.toml"
    spec.write_text(
        'name = "ping"\nduration = "5s"\n'
        f'link = "{REPO / "examples/links/seed000-e0.toml"}"\n'
        '[hosts.fixed]\nside = "fixed"\n[hosts.mobile]\nside = "mobile"\n'
        '[[flows]]\nkind = "ping"\nfrom = "mobile"\nto = "fixed"\ninterval = "500ms"\nduration = "2s"\n'
    )
    r = lasthop.sim(spec, out=tmp_path / "out")
    f = r.ping_flows
    assert len(f) == 1
    assert f["sent"].iloc[0] == 4 and f["received"].iloc[0] == 4
    assert f["rtt_p99_ms"].iloc[0] == 621.0
    assert f["flow_name"].astype(str).iloc[0] == "flows[0]"
    p = r.pings
    assert list(p["seq"]) == [0, 1, 2, 3]
    assert list(p["rtt_ms"]) == [621.0] * 4
