"""Global linking of a video's tracklets into identities, as a minimum-cost flow, with an optional known number of
animals (a per-video post-processor beside GBI and AFLink)."""
from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, fields

import numpy as np
from mmengine.logging import print_log

from vastmat.datasets.animal_counts import AnimalCount, parse_count, read_animal_counts
from vastmat.registry import TASK_UTILS

from .tracklets import LinkCosts, Tracklets, build_tracklets, candidate_pairs, link_costs, max_concurrent

SOLVERS = ('highs', 'networkx')


@dataclass
class LinkReport:
    """What linking did to one video: tracklets in, identities out, links made, the count it was held to
    (``num_animals``/``max_animals``, None when not given), the count estimated from the tracklets, and what the
    count forced out (tracklets and their detections left without an identity: not in the output)."""

    video: str
    tracklets: int
    identities: int
    links: int
    num_animals: int | None
    max_animals: int | None
    estimated_num_animals: int
    forced_out_tracklets: int
    forced_out_detections: int
    seconds: float


def solve_flow_highs(tracklets: int, src: np.ndarray, dst: np.ndarray, link_cost: np.ndarray,
                     cover_cost: np.ndarray, max_paths: int | None, cover_all: bool) -> tuple[np.ndarray, np.ndarray]:
    """The min-cost flow as a linear programme for SciPy's HiGHS.

    Variables: ``cover_i`` (tracklet i is on a path) and ``link_e`` (a path goes ``src_e -> dst_e``). Each tracklet
    has at most one link in and one out, and only when covered; paths = covers - links <= ``max_paths``. The flow's
    entry and exit costs are folded into ``cover_cost`` and ``link_cost`` (a link saves one entry and one exit).
    The constraints are a flow's (a network matrix), so every vertex of the polytope is integral and the dual
    simplex (``linprog(method='highs-ds')``) ends on one; the solution is checked, and solved as an integer
    programme (``milp``, slower: its presolve) should it ever come back fractional. Returns the boolean ``cover``
    and ``link`` vectors."""
    from scipy.optimize import Bounds, LinearConstraint, linprog, milp
    from scipy.sparse import coo_matrix, vstack
    n, m = tracklets, len(src)
    edges, node = np.arange(m), np.arange(n)
    # row i: links into i - cover_i <= 0; row n + i: links out of i - cover_i <= 0
    rows = np.concatenate([dst, n + src, node, n + node])
    cols = np.concatenate([n + edges, n + edges, node, node])
    values = np.concatenate([np.ones(2 * m), -np.ones(2 * n)])
    matrix = coo_matrix((values, (rows, cols)), shape=(2 * n, n + m))
    upper = np.zeros(2 * n)
    if max_paths is not None:
        matrix = vstack([matrix, coo_matrix(np.concatenate([np.ones(n), -np.ones(m)])[None])])
        upper = np.append(upper, max_paths)
    matrix = matrix.tocsr()
    cost = np.concatenate([cover_cost, link_cost])
    bounds = np.stack([np.concatenate([np.full(n, float(cover_all)), np.zeros(m)]), np.ones(n + m)], 1)
    result = linprog(cost, A_ub=matrix, b_ub=upper, bounds=bounds, method='highs-ds')
    x = result.x
    if x is None or np.abs(x - np.round(x)).max(initial=0) > 1e-6:
        result = milp(cost, integrality=np.ones(n + m), bounds=Bounds(bounds[:, 0], bounds[:, 1]),
                      constraints=LinearConstraint(matrix, -np.inf, upper))
        x = result.x
    if x is None:
        raise RuntimeError(f'GlobalLinker: HiGHS found no solution ({result.message})')
    x = np.round(x).astype(bool)
    return x[:n], x[n:]


def solve_flow_networkx(tracklets: int, src: np.ndarray, dst: np.ndarray, link_cost: np.ndarray,
                        cover_cost: np.ndarray, max_paths: int | None, cover_all: bool,
                        scale: float = 1e4) -> tuple[np.ndarray, np.ndarray]:
    """The same flow with networkx's network simplex (integer costs: scaled by ``scale`` and rounded). A path is
    source -> in_i -> out_i -> (in_j -> out_j ...) -> sink; ``cover_all`` gives covering a large reward instead of a
    lower bound. Used to check the HiGHS solution and measure the two (tools/benchmark/global_linking.py)."""
    import networkx as nx
    n = tracklets
    paths = n if max_paths is None else min(max_paths, n)
    big = (np.abs(link_cost).sum() + np.abs(cover_cost).sum() + 1) if cover_all else 0
    graph = nx.DiGraph()
    graph.add_node('s', demand=-paths)
    graph.add_node('t', demand=paths)
    graph.add_edge('s', 't', weight=0, capacity=paths)
    for i in range(n):
        graph.add_edge('s', ('in', i), weight=0, capacity=1)
        graph.add_edge(('in', i), ('out', i), weight=int(round((cover_cost[i] - big) * scale)), capacity=1)
        graph.add_edge(('out', i), 't', weight=0, capacity=1)
    for s, d, c in zip(src.tolist(), dst.tolist(), link_cost.tolist()):
        graph.add_edge(('out', s), ('in', d), weight=int(round(c * scale)), capacity=1)
    flow = nx.network_simplex(graph)[1]
    cover = np.array([flow[('in', i)][('out', i)] == 1 for i in range(n)], bool)
    link = np.array([flow[('out', s)][('in', d)] == 1 for s, d in zip(src.tolist(), dst.tolist())], bool)
    return cover, link


@TASK_UTILS.register_module()
class GlobalLinker:
    """Links a whole video's tracklets into identities at once (``rows -> rows``), after any tracker.

    A minimum-cost flow over the tracklets (Zhang, Li and Nevatia, CVPR 2008, with tracklets for detections): each
    identity costs ``new_identity_cost`` (its entry and exit), a link ``i -> j`` costs :class:`LinkCosts` of motion,
    size, gap and, where the tracker reports them, appearance; a link is made when the whole video's cost falls.
    Without a count, every tracklet keeps an identity (nothing is dropped) and ``estimated_num_animals`` (the most
    tracklets of ``count_min_length`` rows or more in one frame) is reported. With a count:

    - ``num_animals=N`` (animals stay in view): at most N identities; links may span any gap (each tracklet's
      ``next_starts`` next-starting tracklets are candidates as well as those within ``max_gap``);
    - ``max_animals=M`` (animals come and go): at most M identities, links within ``max_gap``.

    Under a count, covering a tracklet earns ``coverage_reward`` per detection times its mean score, so the flow
    keeps the most (and surest) detections; tracklets it cannot fit get no identity and are counted in the report
    (:attr:`reports`, one :class:`LinkReport` a video) and logged, never dropped silently. A chain of tracklets never
    holds two in one frame, so no identity appears twice in a frame. Identities are renumbered 1, 2, ... by first
    frame.

    Args:
        num_animals, max_animals: one count for every video, ``{video: count}``, or None.
        animal_counts: a table file of per-video counts (:mod:`vastmat.datasets.animal_counts`); a video it names
            overrides ``num_animals``/``max_animals``.
        new_identity_cost: the cost of one more identity (its entry plus exit).
        coverage_reward: under a count, the reward per covered detection (times the tracklet's mean score).
        window: rows at a tracklet's head and tail for its velocity and appearance.
        next_starts: with ``num_animals=N``, candidates beyond ``max_gap`` per tracklet (``2 N`` at least).
        count_min_length: tracklets shorter than this do not count towards ``estimated_num_animals``.
        solver: ``'highs'`` (``scipy.optimize.milp``, the default: exact, fastest measured) or ``'networkx'``.
        The remaining keyword arguments are the fields of :class:`LinkCosts`.
    """

    # TrackingByDetection.finish_video passes the video's name and, where the tracker reports them, its features
    takes_video_context = True
    # tools/tune.py --space linking: the settings searched (the counts are the user's, not tuned)
    search_space = dict(
        new_identity_cost=('float', 1.0, 30.0, 'log'), max_gap=('int', 5, 80),
        motion_sigma=('float', 0.1, 2.0, 'log'), motion_growth=('float', 0.01, 0.5, 'log'),
        motion_gate=('float', 1.0, 10.0), extrapolate_frames=('int', 0, 20), size_weight=('float', 0.0, 5.0),
        gap_weight=('float', 0.0, 0.2), window=('int', 1, 10))

    def __init__(self, num_animals: int | dict | None = None, max_animals: int | dict | None = None,
                 animal_counts: str | None = None, new_identity_cost: float = 2.0, coverage_reward: float = 10.0,
                 window: int = 3, next_starts: int = 10, count_min_length: int = 5, solver: str = 'highs',
                 **link_cost_options: float) -> None:
        unknown = sorted(set(link_cost_options) - {f.name for f in fields(LinkCosts)})
        if unknown:
            raise TypeError(f'GlobalLinker: unknown option(s) {unknown}; link cost options are '
                            f'{[f.name for f in fields(LinkCosts)]}')
        if solver not in SOLVERS:
            raise ValueError(f'GlobalLinker: solver must be one of {SOLVERS}, got {solver!r}')
        self.costs = LinkCosts(**link_cost_options)
        if self.costs.max_gap < 1:
            raise ValueError(f'GlobalLinker: max_gap must be 1 or more, got {self.costs.max_gap}')
        self.default_count = AnimalCount(*(self._single(value, name) for value, name in
                                           ((num_animals, 'num_animals'), (max_animals, 'max_animals'))))
        self.video_counts: dict[str, AnimalCount] = {}
        for value, name in ((num_animals, 'num_animals'), (max_animals, 'max_animals')):
            if isinstance(value, dict):
                for video, count in value.items():
                    old = self.video_counts.get(video, AnimalCount())
                    parsed = parse_count(count, f'GlobalLinker {name}[{video!r}]')
                    self.video_counts[video] = AnimalCount(**{**asdict(old), name: parsed})
        if animal_counts:
            self.video_counts.update(read_animal_counts(animal_counts))
        self.new_identity_cost, self.coverage_reward = float(new_identity_cost), float(coverage_reward)
        self.window, self.next_starts, self.count_min_length = int(window), int(next_starts), int(count_min_length)
        self.solver = solver
        self.reports: dict[str, LinkReport] = {}

    @staticmethod
    def _single(value: int | dict | None, name: str) -> int | None:
        return None if isinstance(value, dict) else parse_count(value, f'GlobalLinker {name}')

    def count_of(self, video: str) -> AnimalCount:
        """The counts that hold for ``video``: its own where given, else the ones given for every video."""
        return self.video_counts.get(video, self.default_count)

    def link(self, tracklets: Tracklets, count: AnimalCount) -> tuple[np.ndarray, np.ndarray]:
        """The flow's solution: which tracklets are covered, and the chosen links ``(src, dst)``."""
        n = len(tracklets)
        known = count.num_animals is not None
        # a known number of animals: each tracklet's next-starting ones are candidates too, however late (2 N of
        # them at least, so that every animal's next tracklet can be among them)
        next_starts = max(self.next_starts, 2 * count.num_animals) if known else 0
        src, dst = candidate_pairs(tracklets, self.costs.max_gap, next_starts)
        cost, gated = link_costs(tracklets, src, dst, self.costs)
        counts = [c for c in (count.num_animals, count.max_animals) if c is not None]
        max_paths = min(counts) if counts else None
        keep = gated if max_paths is not None else gated & (cost < self.new_identity_cost)  # others never pay
        src, dst, cost = src[keep], dst[keep], cost[keep]
        # under a count, a tracklet on a path of its own earns coverage_reward per detection times its mean score
        # (negative cost): it is left out only when the count leaves no room for it
        cover_cost = (np.full(n, self.new_identity_cost) if max_paths is None
                      else -self.coverage_reward * tracklets.length * tracklets.mean_score)
        solve = solve_flow_highs if self.solver == 'highs' else solve_flow_networkx
        cover, chosen = solve(n, src, dst, cost - self.new_identity_cost, cover_cost, max_paths, max_paths is None)
        return cover, np.stack([src[chosen], dst[chosen]], 1)

    def __call__(self, rows: np.ndarray, video_name: str = '', features: np.ndarray | None = None) -> np.ndarray:
        """The video's rows with linked identities (rows forced out by a count removed and reported)."""
        start = time.perf_counter()
        rows = np.asarray(rows, np.float64).reshape(-1, 7)
        count = self.count_of(video_name)
        tracklets = build_tracklets(rows, features, self.window, where=f'GlobalLinker {video_name or "video"}')
        n = len(tracklets)
        if n:
            cover, links = self.link(tracklets, count)
        else:
            cover, links = np.zeros(0, bool), np.zeros((0, 2), np.int64)
        successor = np.full(n, -1)
        successor[links[:, 0]] = links[:, 1]
        has_predecessor = np.zeros(n, bool)
        has_predecessor[links[:, 1]] = True
        heads = np.flatnonzero(cover & ~has_predecessor)
        heads = heads[np.lexsort((tracklets.ids[heads], tracklets.start[heads]))]
        out = []
        for identity, head in enumerate(heads.tolist(), start=1):
            member = head
            while member >= 0:
                chunk = rows[tracklets.rows_of(member)].copy()
                chunk[:, 1] = identity
                out.append(chunk)
                member = int(successor[member])
        out = np.concatenate(out) if out else np.zeros((0, 7))
        out = out[np.lexsort((out[:, 1], out[:, 0]))]
        dropped = ~cover
        report = LinkReport(video_name, n, len(heads), len(links), count.num_animals, count.max_animals,
                            max_concurrent(tracklets, self.count_min_length) if n else 0, int(dropped.sum()),
                            int(tracklets.length[dropped].sum()), time.perf_counter() - start)
        self.reports[video_name] = report
        if report.forced_out_detections:
            limit = count.num_animals if count.num_animals is not None else count.max_animals
            print_log(f'{video_name or "video"}: GlobalLinker kept {report.identities} identities (at most {limit}); '
                      f'{report.forced_out_tracklets} tracklet(s), {report.forced_out_detections} detection(s) '
                      'left without an identity', 'current', level=logging.WARNING)
        return out
