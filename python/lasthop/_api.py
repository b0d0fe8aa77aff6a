"""The Python API: thin wrappers over ``lasthop._lasthop`` (the Rust crates) that turn their
typed columns into pandas DataFrames."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import (
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
    overload,
)

import numpy as np
import pandas as pd

from . import _lasthop

PathLike = Union[str, "os.PathLike[str]"]

# String columns that stay strings (one value per connection or packet); every other string
# column is a category.
_FREE_TEXT = {"client", "server", "flow_key", "conn_key"}


@dataclass(frozen=True)
class Check:
    """What ``lasthop check`` says of a spec."""

    kind: str
    """``link``, ``scenario`` or ``experiment``."""
    description: str
    """What the spec describes, as ``lasthop check`` prints it."""
    warnings: List[str] = field(default_factory=list)
    """Settings that do nothing (``docs/modes.md``)."""

    def __str__(self) -> str:
        return self.description


def check(path: PathLike) -> Check:
    """Loads a link spec, a scenario or an experiment (told by its keys) and says what it
    describes. Raises :class:`lasthop.SpecError` (with ``key``, ``file`` and ``message``: the
    value and what is allowed) when a key is wrong."""
    kind, description, warnings = _lasthop.check(os.fspath(path))
    return Check(kind, description, list(warnings))


def sim(
    scenario: PathLike,
    out: PathLike,
    seed: Optional[int] = None,
    replication: Optional[int] = None,
    overrides: Optional[Mapping[str, Any]] = None,
) -> "Results":
    """One simulated replication of ``scenario`` into ``out`` (``lasthop sim``), returned
    loaded. ``overrides`` sets keys of the scenario by path, as an experiment's matrix does:
    ``{"link": "../links/seed000-r1.toml", "flows[0].bytes": 10000}`` (``link`` relative to the
    scenario's folder)."""
    d = _lasthop.sim(
        os.fspath(scenario),
        os.fspath(out),
        seed,
        replication,
        dict(overrides) if overrides else None,
    )
    return load(d)


ProgressCallback = Callable[[int, int], Any]


def _progress_bar() -> Tuple[Callable[[int, int], None], Callable[[], None]]:
    """A progress bar that draws itself as a widget in notebooks and as text elsewhere
    (``tqdm.auto``; plain text when the notebook has no ipywidgets): its update function,
    ``(done, pending)``, and its close."""
    try:
        from tqdm.auto import tqdm

        bar = tqdm(total=0, unit="run", desc="lasthop run")
    except ImportError:  # a notebook without ipywidgets
        from tqdm.std import tqdm

        bar = tqdm(total=0, unit="run", desc="lasthop run")

    def update(done: int, pending: int) -> None:
        if bar.total != pending:
            bar.total = pending
            bar.refresh()
        if done > bar.n:
            bar.update(done - bar.n)

    return update, bar.close


def run(
    experiment: Optional[PathLike] = None,
    out: Optional[PathLike] = None,
    jobs: Optional[int] = None,
    shard: Optional[str] = None,
    progress: Union[bool, ProgressCallback] = False,
    exe: Optional[PathLike] = None,
) -> Path:
    """Runs an experiment (``lasthop run``): every replication of every point of its matrix,
    resumable (finished runs in ``out`` are kept); writes ``summary.csv``, ``summary.json`` and
    ``report.html``. Without ``experiment``, the embedded quick start. ``shard="K/N"`` runs only
    shard K of N (no summary). Returns the results directory (default ``results/<name>``).

    A simulated experiment runs in parallel on ``jobs`` threads (default: all cores). An
    emulated one (``mode = "emu"``) runs as ``lasthop run`` runs it, one run at a time, and
    needs what the emulator needs (root, ``/dev/net/tun``, iproute2: raises
    :class:`lasthop.LasthopError` before any run otherwise) and the ``lasthop`` binary, whose
    workload programs the emulated hosts run: ``exe``, else ``$LASTHOP_BIN``, else ``lasthop``
    on ``PATH``.

    ``progress=True`` shows a progress bar (a widget in a notebook, ``tqdm.auto``);
    ``progress=f`` calls ``f(done, pending)`` instead: once with ``done = 0``, then after each
    run (``pending`` counts the runs this call runs, not the finished ones it keeps). An
    exception ``f`` raises is raised when the experiment ends (its finished runs stay)."""
    close: Optional[Callable[[], None]] = None
    if progress is True:
        hook: Optional[ProgressCallback]
        hook, close = _progress_bar()
    elif callable(progress):
        hook = progress
    elif progress is False or progress is None:
        hook = None
    else:
        raise TypeError(f"progress: {progress!r}: allowed True, False or a function (done, pending)")
    try:
        d, _total, _kept, _ran, _failed = _lasthop.run(
            None if experiment is None else os.fspath(experiment),
            None if out is None else os.fspath(out),
            jobs,
            shard,
            False,
            hook,
            None if exe is None else os.fspath(exe),
        )
    finally:
        if close is not None:
            close()
    return Path(d)


def _frame(cols: List[Tuple[str, str, Any, Any]]) -> pd.DataFrame:
    data: Dict[str, Any] = {}
    for name, kind, values, mask in cols:
        if kind == "f8":
            data[name] = np.frombuffer(values, dtype="<f8")
        elif kind == "i8":
            v = np.frombuffer(values, dtype="<i8")
            if mask is None:
                data[name] = v
            else:
                m = np.frombuffer(mask, dtype=np.uint8) == 0
                data[name] = pd.arrays.IntegerArray(v.copy(), m)
        elif kind == "b1":
            data[name] = np.frombuffer(values, dtype=np.uint8).astype(bool)
        else:
            s = pd.Series(values, dtype="string" if name in _FREE_TEXT else "category")
            data[name] = s.array
    return pd.DataFrame(data)


def analyze(
    pcap: PathLike,
    pcap2: Optional[PathLike] = None,
    events: Optional[PathLike] = None,
) -> pd.DataFrame:
    """``lasthop analyze PCAP [PCAP2] [--events EVENTS]``: the capture's TCP connections, the
    columns of ``connections.csv``. With ``pcap2`` the two captures of one run are merged
    (``pcap`` must be the TCP client's); with ``events`` (a run's ``events.csv``) the link's
    drops by cause are joined."""
    return _frame(
        _lasthop.analyze(
            os.fspath(pcap),
            None if pcap2 is None else os.fspath(pcap2),
            None if events is None else os.fspath(events),
        )
    )


class _Tables:
    """The table attributes of :class:`Results` and :class:`ResultsSet`, each its
    ``table(name)``."""

    def table(self, name: str) -> pd.DataFrame:  # pragma: no cover - overridden
        raise NotImplementedError

    def _summary(self) -> pd.DataFrame:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def connections(self) -> pd.DataFrame:
        """``connections.csv``: one row per TCP connection (``docs/analysis.md``)."""
        return self.table("connections")

    @property
    def udp_flows(self) -> pd.DataFrame:
        """``udp_flows.csv``: one row per UDP flow."""
        return self.table("udp_flows")

    @property
    def ping_flows(self) -> pd.DataFrame:
        """``ping_flows.csv``: one row per latency-probe flow (``kind = "ping"``): probes
        sent and answered, round-trip min/mean/p50/p90/p99/max in ms."""
        return self.table("ping_flows")

    @property
    def pings(self) -> pd.DataFrame:
        """``pings.csv``: one row per probe, its round trip in ms (empty: lost)."""
        return self.table("pings")

    @property
    def pages(self) -> pd.DataFrame:
        """``pages.csv``: one row per web page (seed 002)."""
        return self.table("pages")

    @property
    def page_objects(self) -> pd.DataFrame:
        """``page_objects.csv``: one row per object of a page."""
        return self.table("page_objects")

    @property
    def streams(self) -> pd.DataFrame:
        """``streams.csv``: seed 003's per-stream figures."""
        return self.table("streams")

    @property
    def latency(self) -> pd.DataFrame:
        """``latency.csv``: seed 003's ACK latencies."""
        return self.table("latency")

    @property
    def link(self) -> pd.DataFrame:
        """``link.csv``: the link's counters and meter, one row per direction."""
        return self.table("link")

    @property
    def events(self) -> pd.DataFrame:
        """``events.csv`` of the runs that kept it (``docs/events.md``): big, read on demand."""
        return self.table("events")

    @property
    def tcp_trace(self) -> pd.DataFrame:
        """``tcp_trace.csv`` of the runs that kept it (cwnd, ssthresh, RTO over time)."""
        return self.table("tcp_trace")

    @property
    def summary(self) -> pd.DataFrame:
        """``summary.csv``: the summaries across replications (empty for one run)."""
        return self._summary()


class Results(_Tables):
    """A results directory of ``lasthop run`` (or one run's directory of ``lasthop sim``).
    Each table attribute reads its file of every finished run when first asked (in parallel,
    by the Rust typed readers) and keeps the DataFrame; ``events`` and ``tcp_trace`` are big
    and read only when asked."""

    def __init__(self, path: PathLike):
        self.path = Path(path)
        info = _lasthop.info(os.fspath(self.path))
        self._cache: Dict[str, pd.DataFrame] = {}
        if info is None:
            self.name = self.path.name
            self.mode = "sim"
            self.replications = 1
            self.dimensions: List[str] = []
            self.points: List[Tuple[str, List[str]]] = [(self.path.name, [])]
        else:
            self.name, self.mode, self.replications, dims, points = info
            self.dimensions = list(dims)
            self.points = [(p, list(c)) for p, c in points]

    def __repr__(self) -> str:
        return (
            f"<lasthop.Results {self.name!r}: {len(self.points)} points x "
            f"{self.replications} replications, dimensions {self.dimensions}>"
        )

    def table(self, name: str) -> pd.DataFrame:
        """Any run table by name (``lasthop.TABLES``): ``point``, the dimensions, ``replication``
        and the file's columns, one row per row of every finished run's file."""
        if name not in self._cache:
            cols = _lasthop.load_table(os.fspath(self.path), name)
            df = _frame(cols)
            codes = df.pop("_point").to_numpy()
            names = [p for p, _ in self.points]
            front = {"point": pd.Categorical.from_codes(codes, categories=names)}
            for i, d in enumerate(self.dimensions):
                values = [c[i] for _, c in self.points]
                cats = list(dict.fromkeys(values))
                idx = np.array([cats.index(v) for v in values], dtype=np.int64)
                front[d] = pd.Categorical.from_codes(
                    idx[codes] if len(codes) else codes, categories=cats
                )
            front_df = pd.DataFrame(front, index=df.index)
            # A file column named as a dimension (pages.csv's `workload`): dropped when it
            # says the same, else kept as `<name>_file`.
            for d in self.dimensions:
                if d in df.columns:
                    same = df[d].astype(str).to_numpy() == front_df[d].astype(str).to_numpy()
                    if same.all():
                        df = df.drop(columns=[d])
                    else:
                        df = df.rename(columns={d: f"{d}_file"})
            df = pd.concat([front_df, df], axis=1)
            self._cache[name] = df
        return self._cache[name]

    def _summary(self) -> pd.DataFrame:
        if "summary" not in self._cache:
            p = self.path / "summary.csv"
            df = pd.read_csv(p) if p.exists() else pd.DataFrame()
            for c in df.columns:
                if df[c].dtype == object:
                    df[c] = df[c].astype("category")
            self._cache["summary"] = df
        return self._cache["summary"]


class ResultsSet(_Tables):
    """Several results directories read as one: each table is theirs concatenated, a
    ``results`` column (categorical, in the order given) first saying which directory a row
    comes from; ``point`` and the matrix dimensions are categoricals over all of them (a
    dimension a directory does not have is empty in its rows)."""

    def __init__(self, paths: Sequence[PathLike]):
        self.members = [Results(p) for p in paths]
        names = [r.path.name for r in self.members]
        if len(set(names)) < len(names):
            names = [str(r.path) for r in self.members]
        if len(set(names)) < len(names):
            raise ValueError(f"the same results directory twice: {names}")
        self.names: List[str] = names
        self._cache: Dict[str, pd.DataFrame] = {}

    def __repr__(self) -> str:
        return f"<lasthop.ResultsSet of {len(self.members)}: {self.names}>"

    def __getitem__(self, name: str) -> Results:
        return self.members[self.names.index(name)]

    def __len__(self) -> int:
        return len(self.members)

    @property
    def dimensions(self) -> List[str]:
        """The matrix dimensions of any of the directories, in first-seen order."""
        return list(dict.fromkeys(d for r in self.members for d in r.dimensions))

    def _concat(self, frames: List[pd.DataFrame]) -> pd.DataFrame:
        # Categorical columns over every directory's categories (first-seen order): pandas
        # would turn categoricals of different categories into objects.
        cats: Dict[str, List[Any]] = {}
        for f in frames:
            for c in f.columns:
                if isinstance(f[c].dtype, pd.CategoricalDtype):
                    seen = cats.setdefault(c, [])
                    seen.extend(v for v in f[c].cat.categories if v not in seen)
        parts = []
        for name, f in zip(self.names, frames):
            f = f.copy()
            for c, cs in cats.items():
                if c in f.columns:
                    f[c] = f[c].astype(pd.CategoricalDtype(cs))
            f.insert(0, "results", name)
            parts.append(f)
        df = pd.concat(parts, ignore_index=True)
        df["results"] = pd.Categorical(df["results"], categories=self.names)
        for c, cs in cats.items():
            df[c] = df[c].astype(pd.CategoricalDtype(cs))
        return df

    def table(self, name: str) -> pd.DataFrame:
        """Any run table by name (``lasthop.TABLES``) of every directory, concatenated, with
        ``results`` first."""
        if name not in self._cache:
            self._cache[name] = self._concat([r.table(name) for r in self.members])
        return self._cache[name]

    def _summary(self) -> pd.DataFrame:
        if "summary" not in self._cache:
            self._cache["summary"] = self._concat([r.summary for r in self.members])
        return self._cache["summary"]


@overload
def load(results_dir: PathLike) -> Results: ...


@overload
def load(results_dir: Sequence[PathLike]) -> ResultsSet: ...


def load(results_dir: Union[PathLike, Sequence[PathLike]]) -> Union[Results, ResultsSet]:
    """A results directory (``lasthop run``) or a run's directory (``lasthop sim``): an object
    whose table attributes (``connections``, ``udp_flows``, ``pages``, ``streams``,
    ``latency``, ``link``, ``events``, ``summary``, ...) are pandas DataFrames, read on first
    use. A list of directories: a :class:`ResultsSet`, whose tables are the directories'
    concatenated with a ``results`` column (each directory's name, or its path when two
    share a name)."""
    if isinstance(results_dir, (list, tuple)):
        return ResultsSet(results_dir)
    return Results(results_dir)
