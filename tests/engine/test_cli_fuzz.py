"""The command line fuzzed: generated bad inputs to tools/test.py, tools/train.py and tools/analysis/sweep.py (their
``main(argv)`` in this process, under run_cli) each end in exit status 2 and exactly one stderr line ``error: ...``
naming the offending key, text or file, and the well-formed ones run. Then the one value language underneath
(vastmat.utils.options) and the config-option checks (vastmat.engine.cli) on their own.

Bad values come from a fixed list (unbalanced brackets and quotes, NaN and infinity, calls, empty items, unicode) and
from values of the wrong kind for keys taken from the configs themselves (a string or a list where the config has a
number, ...) and for the arguments a config leaves None or unset (of another kind than the constructor's annotation
or default); bad keys are real keys with one part mutated; values the component itself refuses (REFUSED). tools/demo/
track_video.py takes the same options. ``random.Random(0)`` picks them: the same cases every run.
"""
import inspect
import os
import os.path as osp
import random
import types
import typing

import pytest
from mmengine.config import Config

from helpers.common import DEBUG_YOLOX, REPO, SHARED_DATA, tool

from vastmat.engine.cli import run_cli
from vastmat.engine.config_options import ConfigKeyError, apply_cfg_options, check_cfg_options
from vastmat.engine import config_check
from vastmat.utils.errors import UserInputError
from vastmat.utils.options import OptionError, format_value, parse_assignment, parse_option, parse_value, \
    split_top_level

BYTETRACK = osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets.py')
AT10 = osp.join(SHARED_DATA, 'AnimalTrack-10fps-sim')
needs_at10 = pytest.mark.skipif(not osp.isdir(AT10), reason=f'{AT10} not found (../shared/data beside the clone)')
SWEEP = 'tools/analysis/sweep.py'
MISSING = '/nonexistent/vastmat-fuzz'

# text that no key accepts: malformed, or no literal of any kind a config holds
MALFORMED = ['[1,2', '(0.5', "dict(type='CDA'", '{1: 2', '0.5]', "'abc", '"x', '', ' ', "float('nan')", 'foo(1)',
             'dict(1)', 'dict(**a)', '[1,,2]', '1,,2', ',', 'dict(a=1))', "[dict(type='X'],"]
# values of the right kind that the component refuses, or that fit no argument where the config has None (issue 28)
REFUSED = ['test_evaluator.preset=nope', 'model.tracker.aspect_ratio_thresh=abc',
           'model.tracker.matcher=dict(type=CDA, alpha=abc)', 'test_dataloader.dataset.videos=[1,2]',
           "model.tracker.matcher=[dict(type='CDA')]", 'model.tracker.matcher=dict(type=CDA, alpha=2)',
           'model.tracker.track_thresh=None', 'model.tracker.matcher.plus_one=None']
# per kind of the config's value: values of another kind (None is allowed everywhere but for a bool)
WRONG = {
    'number': ['abc', 'nan', 'NaN', 'inf', '-inf', '1e999', "'0.5'", 'True', '[0.5]', '0.5,0.6', 'dict(a=1)', 'é',
               '０.５', '😀', 'αβγ'],
    'bool': ['1', '0', 'yes', 'abc', '[True]', 'dict()', 'None', '0.5', 'true,false'],
    'str': ['7', '[a]', "dict(type='IoU')", 'True', '1e3', 'a,b'],
    'list': ['abc', '1', 'True', 'dict(a=1)', '😀'],
    'dict': ['abc', '1', '[1,2]', "'CDA'", 'True', 'é'],
}


def kind(value):
    if isinstance(value, bool):
        return 'bool'
    if isinstance(value, (int, float)):
        return 'number'
    return {str: 'str', list: 'list', tuple: 'list', dict: 'dict'}.get(type(value))


def config_keys(config: str) -> dict[str, list[tuple[str, object]]]:
    """The dotted keys of a config by the kind of their value (type names: only as strings)."""
    found: dict[str, list] = {}

    def walk(node, prefix):
        for k, v in node.items():
            key = f'{prefix}.{k}' if prefix else k
            if kind(v) and not (k == 'type' and kind(v) != 'str'):
                found.setdefault(kind(v), []).append((key, v))
            if isinstance(v, dict):
                walk(v, key)

    walk(Config.fromfile(config).to_dict(), '')
    return found


def mutated_key(rng: random.Random, key: str, cfg: dict) -> str | None:
    """``key`` with one part, not the last, misspelt (so no component can take it as a new argument); None when the
    misspelling names an existing key after all."""
    parts = key.split('.')
    i = rng.randrange(len(parts) - 1)
    part = parts[i]
    parts[i] = rng.choice([part[:-1], part + 'x', part + 'é', '', part.upper() if part.lower() == part else 'X',
                           '99' if part.isdigit() else part + '_'])
    node = cfg
    for p in parts[:i + 1]:
        if isinstance(node, dict) and p in node:
            node = node[p]
        elif isinstance(node, list) and p.isdigit() and int(p) < len(node):
            node = node[int(p)]
        else:
            return '.'.join(parts)
    return None


def bad_option_cases(rng: random.Random, config: str, count: int) -> list[tuple[str, str]]:
    """``count`` (option text, text the error must name) pairs: malformed and wrong-kind values, mutated keys."""
    keys = config_keys(config)
    cfg = Config.fromfile(config).to_dict()
    all_keys = [key for pairs in keys.values() for key, _ in pairs if '.' in key]
    cases = []
    for text in MALFORMED:  # each malformed value once, on a random key
        key = rng.choice(all_keys)
        cases.append((f'{key}={text}', key))
    cases += [(text, text) for text in ('model.tracker', 'model.tracker.track_thresh', '=0.5', 'a.b:1', '')]
    while len(cases) < count:
        if rng.random() < 0.7:
            kind_ = rng.choice(sorted(keys))
            key, _ = rng.choice(keys[kind_])
            cases.append((f'{key}={rng.choice(WRONG[kind_])}', key))
        elif key := mutated_key(rng, rng.choice(all_keys), cfg):
            cases.append((f'{key}=1', key))
    return cases


SIMPLE_ANNOTATIONS = {frozenset({float}): 'number', frozenset({int}): 'number', frozenset({int, float}): 'number',
                      frozenset({bool}): 'bool', frozenset({str}): 'str'}


def literal(value) -> bool:
    """Whether ``value`` can be written on the command line (a literal of the kinds a config holds)."""
    if isinstance(value, (list, tuple)):
        return all(literal(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and literal(v) for k, v in value.items())
    return value is None or isinstance(value, (bool, int, float, str))


def simple_kind(annotation, default) -> tuple[str, bool] | None:
    """(kind, whether None passes) of a parameter annotated ``float``, ``int | None``, ``bool``, ``str``..., or
    without annotation, of its default (None passes then); None for other annotations."""
    if annotation is None:
        return (kind(default), True) if kind(default) in ('number', 'bool', 'str') else None
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    args = set(typing.get_args(annotation)) if union else {annotation}
    simple = SIMPLE_ANNOTATIONS.get(frozenset(args - {type(None)}))
    return (simple, type(None) in args) if simple else None


def unset_arguments(config: str) -> list[tuple[str, object, object]]:
    """(dotted key, constructor default, annotation) of each argument that a component of ``config`` (a dict whose
    ``type`` names one registered class) leaves None or unset."""
    found = []

    def walk(node, prefix):
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        resolved = config_check.component_class(node.get('type')) if isinstance(node, dict) else None
        if resolved:
            params = inspect.signature(resolved[1].__init__).parameters
            try:
                hints = typing.get_type_hints(resolved[1].__init__)
            except Exception:
                hints = {}
            for name, param in params.items():
                if name != 'self' and param.kind == param.POSITIONAL_OR_KEYWORD and node.get(name) is None \
                        and param.default is not param.empty:
                    found.append((f'{prefix}.{name}', param.default, hints.get(name)))
        for k, v in items:
            walk(v, f'{prefix}.{k}' if prefix else str(k))

    walk(Config.fromfile(config).to_dict(), '')
    return found


def unset_argument_cases(rng: random.Random, config: str, count: int) -> list[tuple[str, str]]:
    """``count`` (option text, key) pairs: a value of another kind than the constructor's annotation or default
    for an argument the config leaves None or unset."""
    pool = [(key, simple) for key, default, annotation in unset_arguments(config)
            if (simple := simple_kind(annotation, default))]
    cases = []
    for key, (kind_, nullable) in rng.sample(pool, min(count, len(pool))):
        values = [v for v in WRONG[kind_] if not (nullable and v == 'None')]
        cases.append((f'{key}={rng.choice(values)}', key))
    return cases


def outcome(capsys, script: str, argv: list) -> tuple[int, str, object]:
    """(exit status, stderr, what main returned) of a tool under run_cli in this process."""
    capsys.readouterr()
    try:
        result, code = run_cli(lambda a: tool(script, *a), [str(a) for a in argv]), 0
    except SystemExit as exc:
        result, code = None, exc.code
    return code, capsys.readouterr().err, result


def check_errors(capsys, script: str, cases: list[tuple[list, str]]) -> None:
    """Every case ends in status 2 and one ``error:`` line naming its text; all failures reported together."""
    failures = []
    for argv, name in cases:
        code, err, _ = outcome(capsys, script, argv)
        lines = err.strip().splitlines()
        if not (code == 2 and len(lines) == 1 and lines[0].startswith('error: ') and name in lines[0]):
            failures.append(f'{argv[-3:]!r}: status {code}, stderr {err.strip()[-500:]!r} (should name {name!r})')
    assert not failures, f'{len(failures)} of {len(cases)} cases:\n' + '\n'.join(failures)


@pytest.fixture
def stub_train(monkeypatch):
    """tools/train.py stops after building its runner and loading what it loads (no training)."""
    from mmengine.runner import Runner
    monkeypatch.setattr(Runner, 'train', lambda self: self.load_or_resume())


def test_test_py_bad_cfg_options(capsys, tmp_path):
    rng = random.Random(0)
    cases = [([BYTETRACK, '--work-dir', tmp_path, '--cfg-options', text], name)
             for text, name in bad_option_cases(rng, BYTETRACK, 70)]
    # unknown component arguments: the model's constructor names them when the runner builds it
    cases += [([BYTETRACK, '--work-dir', tmp_path, '--cfg-options', f'model.tracker.{arg}=1'], arg)
              for arg in ('track_threshold', 'matchthresh', 'alpha')]
    cases += [([BYTETRACK, '--work-dir', tmp_path, '--cfg-options', "model.tracker.matcher=dict(type='CDAX')"], 'CDAX'),
              ([BYTETRACK, '--work-dir', tmp_path, '--cfg-options', 'model.tracker.matcher=dict(alpha=0.5)'],
               'model.tracker.matcher')]
    # values of the right kind that the component refuses, or that fit no argument where the config has None
    cases += [([BYTETRACK, '--work-dir', tmp_path, '--cfg-options', text], text.split('=')[0])
              for text in REFUSED + [t for t, _ in unset_argument_cases(rng, BYTETRACK, 20)]]
    check_errors(capsys, 'tools/test.py', cases)


def test_train_py_bad_cfg_options(capsys, tmp_path, stub_train):
    rng = random.Random(1)
    cases = [([DEBUG_YOLOX, '--work-dir', tmp_path, '--cfg-options', text], name)
             for text, name in bad_option_cases(rng, DEBUG_YOLOX, 50) + unset_argument_cases(rng, DEBUG_YOLOX, 30)]
    check_errors(capsys, 'tools/train.py', cases)


def test_track_video_bad_cfg_options(capsys, tmp_path, demo_root):
    """tools/demo/track_video.py reads --cfg-options as tools/test.py does (its frames and detections: a demo
    video and its ground truth, never read: every case fails before tracking)."""
    video = osp.join(demo_root, 'videos', sorted(os.listdir(osp.join(demo_root, 'videos')))[0])
    base = [osp.join(video, 'img1'), BYTETRACK, '--det-file', osp.join(video, 'gt', 'gt.txt'), '--out',
            tmp_path / 'out.mp4', '--cfg-options']
    rng = random.Random(3)
    cases = [(base + [text], name) for text, name in bad_option_cases(rng, BYTETRACK, 30)]
    cases += [(base + [text], text.split('=')[0]) for text in REFUSED]
    check_errors(capsys, 'tools/demo/track_video.py', cases)


def test_missing_files(capsys, tmp_path, stub_train):
    check_errors(capsys, 'tools/test.py', [
        ([f'{MISSING}/config.py', '--work-dir', tmp_path], MISSING),
        ([BYTETRACK, '--work-dir', tmp_path, '--det-root', MISSING, '--data-root', osp.join(AT10, 'gt')], MISSING),
        ([BYTETRACK, '--work-dir', tmp_path, '--det-root', osp.join(AT10, 'dets'), '--data-root', MISSING], MISSING),
        ([BYTETRACK, '--work-dir', tmp_path, '--det-root', osp.join(AT10, 'dets'), '--data-root',
          osp.join(AT10, 'gt'), '--checkpoint', f'{MISSING}.pth'], MISSING),
    ])
    check_errors(capsys, 'tools/train.py', [
        ([f'{MISSING}/config.py', '--work-dir', tmp_path], MISSING),
        ([DEBUG_YOLOX, '--work-dir', tmp_path, '--resume', f'{MISSING}.pth'], MISSING),
    ])
    check_errors(capsys, SWEEP, [
        ([f'{MISSING}/config.py', '--data-root', osp.join(AT10, 'gt'), '--det-root', osp.join(AT10, 'dets'),
          '--work-dir', tmp_path], MISSING),
        ([BYTETRACK, '--data-root', MISSING, '--det-root', osp.join(AT10, 'dets'), '--work-dir', tmp_path], MISSING),
    ])


@needs_at10
def test_sweep_bad_grids_and_options(capsys, tmp_path):
    rng = random.Random(2)
    base = [BYTETRACK, '--data-root', osp.join(AT10, 'gt'), '--det-root', osp.join(AT10, 'dets'),
            '--work-dir', tmp_path, '--videos', 'chicken_5']
    options = bad_option_cases(rng, BYTETRACK, 40)
    cases = [(base + [rng.choice(['--grid', '--base-options']), text], name) for text, name in options]
    # malformed rows: an axis twice, an axis of a --table preset again, an empty one, a bad --post-processors
    cases += [
        (base + ['--grid', 'model.tracker.match_thresh=0.6,0.8', 'model.tracker.match_thresh=0.7'],
         'model.tracker.match_thresh'),
        (base + ['--table', '20', '--grid', 'model.tracker.matcher.alpha=0,1'], 'model.tracker.matcher.alpha'),
        (base + ['--grid', 'model.tracker.match_thresh=0.6,,0.8'], 'model.tracker.match_thresh'),
        (base + ['--grid', 'model.tracker.match_thresh=0.8,0.8'], 'same settings'),
        (base + ['--grid', "model.tracker.matcher=dict(type='CDA',alpha=0.25),dict(type='CDA',alpha=abc)"],
         'model.tracker.matcher'),
        (base + ['--table', '22', '--post-processors', '[dict(type=AFLink'], '--post-processors'),
        (base + ['--table', '22', '--post-processors', 'AFLink'], '--post-processors'),
        (base[:-1] + ['nope_1'], 'nope_1'),
    ]
    check_errors(capsys, SWEEP, cases)


@needs_at10
def test_well_formed_options_run(capsys, tmp_path):
    """The dict form of the issue, a list of bare words, None: tools/test.py runs and scores (one small video)."""
    base = [BYTETRACK, '--work-dir', tmp_path, '--det-root', osp.join(AT10, 'dets'), '--data-root',
            osp.join(AT10, 'gt'), '--cfg-options', 'test_dataloader.dataset.videos=[chicken_5]']
    for extra in (["model.tracker.matcher=dict(type='CDA', alpha=0.25)"],
                  ['model.tracker.track_thresh=0.5', 'model.tracker.min_box_area=None',
                   'model.tracker.fuse_score=false'],
                  ['model.tracker.matcher=dict(type=CDA,mode=forward,k=0.05,n_ref=10)', 'model.post_processors=[]']):
        code, err, metrics = outcome(capsys, 'tools/test.py', base + extra)
        assert code == 0 and 'error' not in err, (extra, err)
        assert 0 < metrics['vastmat/HOTA'] <= 1, extra


# ------------------------------------------------------------------------------------------ the value language

@pytest.mark.parametrize('text, value', [
    ('0.5', 0.5), ('-3', -3), ('1e-3', 1e-3), ('None', None), ('True', True), ('false', False), ("'a,b'", 'a,b'),
    ('mean', 'mean'), ('data/x/', 'data/x/'), ('Bee-1', 'Bee-1'), ('0.5.1', '0.5.1'), ('nan', 'nan'),
    ('[chicken_5,deer_5]', ['chicken_5', 'deer_5']), ('[Bee-1, a/b.txt]', ['Bee-1', 'a/b.txt']), ('(1,2)', (1, 2)),
    ('[(a,b),(c,d)]', [('a', 'b'), ('c', 'd')]), ("dict(type='CDA', alpha=0.25)", dict(type='CDA', alpha=0.25)),
    ('dict(type=CDA,gate=dict(type=NormDIoUGate,thr=0.1))', dict(type='CDA', gate=dict(type='NormDIoUGate', thr=0.1))),
    ("{'a': [1, dict(b=None)]}", {'a': [1, dict(b=None)]}), ('[]', []), ('dict()', {}),
])
def test_parse_value(text, value):
    assert parse_value(text) == value


@pytest.mark.parametrize('text', [t for t in MALFORMED if t not in ('1,,2', ',')])  # those two: split first
def test_parse_value_refuses_malformed_text(text):
    with pytest.raises(OptionError):
        parse_value(text)


def test_assignments_split_name_the_flag_and_key():
    assert split_top_level("0.5,[1,2],dict(a=1),'x,y'") == ['0.5', '[1,2]', 'dict(a=1)', "'x,y'"]
    assert parse_assignment('m.alpha=0,0.5', '--grid') == ('m.alpha', [0, 0.5])
    assert parse_option('m.videos=a,b', '--cfg-options') == ('m.videos', ['a', 'b'])  # DictAction's list
    assert parse_option('m.videos=[a]', '--cfg-options') == ('m.videos', ['a'])
    assert parse_option('m.x=a=b', '--cfg-options') == ('m.x', 'a=b')
    with pytest.raises(OptionError, match=r"^--grid m\.alpha: '\[0,0\.5': 1 unclosed"):
        parse_assignment('m.alpha=[0,0.5', '--grid')
    with pytest.raises(OptionError, match="^--cfg-options 'm.alpha': expected KEY=VALUE"):
        parse_option('m.alpha', '--cfg-options')
    with pytest.raises(OptionError, match=r'^--base-options m\.alpha: empty value'):
        parse_option('m.alpha=1,', '--base-options')
    assert format_value(dict(type='CDA', mode='fixed', alpha=0.25)) == 'CDA(mode=fixed, alpha=0.25)'
    assert format_value([dict(type='InterpolateTracks', n=1), 0.5]) == '[InterpolateTracks, 0.5]'


def test_config_options_are_checked_and_a_dict_replaces_the_entry():
    cfg = Config.fromfile(BYTETRACK)
    apply_cfg_options(cfg, {'model.tracker.matcher': dict(type='CDA', alpha=0.25), 'model.tracker.matcher.alpha': 0.5,
                            'model.tracker.track_buffer': 10.0, 'model.tracker.min_box_area': None})
    assert cfg.model.tracker.matcher.to_dict() == dict(type='CDA', alpha=0.5)  # IoU's plus_one does not leak in
    assert cfg.model.tracker.track_buffer == 10.0 and cfg.model.tracker.min_box_area is None
    for options, message in [
            ({'model.tracker.track_thresh': 'abc'}, "track_thresh=abc: expected a finite number or None .* 0.6"),
            ({'model.tracker.track_thresh': float('nan')}, 'expected a finite number'),
            ({'model.tracker.fuse_score': 1}, 'expected True or False'),
            ({'model.tracker.matcher': 'CDA'}, 'expected a dict or None'),
            ({'model.tracker.matcher': [dict(type='CDA')]}, 'expected a dict or None'),  # one matcher, not several
            ({'model.tracker.aspect_ratio_thresh': 'abc'}, r'BYTETracker\(aspect_ratio_thresh\) takes float \| No'),
            ({'model.tracker.duplicate_thresh': [1]}, r'BYTETracker\(duplicate_thresh\) takes float'),
            ({'model.tracker.matcher': dict(type='CDA', k='abc')}, r'matcher\.k=abc: CDA\(k\) takes float'),
            ({'test_dataloader.dataset.videos': [1, 2]}, r'videos=\[1, 2\]: VastMATDataset\(videos\) takes'),
            ({'model.tracker.matcher': dict(type='CDA', alpha='high')}, r'matcher\.alpha=high: expected a finite'),
            ({'model.post_processors': 'abc'}, 'expected a list or None'),
            ({'model.tracker.type': 7}, 'expected the name of a registered type'),
            ({'model.tracker.matcher': dict(alpha=0.5)}, r'matcher=\{alpha=0.5\}: expected dict\(type=...')]:
        with pytest.raises(OptionError, match=message):
            check_cfg_options(cfg, options)
    with pytest.raises(ConfigKeyError, match="--grid model.trackr.x: 'trackr' is not a key of model"):
        check_cfg_options(cfg, {'model.trackr.x': 1}, {'model.trackr.x': '--grid'})
    check_cfg_options(cfg, {'model.tracker.new_argument': 'abc', 'randomness': dict(seed=0)})  # checked when built
    check_cfg_options(cfg, {'test_evaluator': [dict(type='VastMATMetric'), dict(type='VastMATMetric')]})  # several
    # a list item of any kind; a dict for a new key (no _delete_ marker left in it)
    plain = apply_cfg_options(Config(dict(a=dict(b=['x', 'y'], c=[dict(d=1)]), m=dict(type='CDA'))),
                              {'a.b.1': 'z', 'a.c.0': dict(e=2), 'm.gate': dict(type='NormDIoUGate')})
    assert plain.to_dict() == dict(a=dict(b=['x', 'z'], c=[dict(e=2)]), m=dict(type='CDA', gate=dict(type='NormDIoUGate')))


def test_touched_components_are_built_and_their_errors_name_the_option(monkeypatch):
    for options, message in [
            ({'test_evaluator.preset': 'nope'}, r"^--cfg-options test_evaluator\.preset=nope: test_evaluator "
             r"\(VastMATMetric\) does not build: VastMATMetric: unknown preset 'nope'"),
            ({'model.tracker.matcher': dict(type='CDA', alpha=2)}, r'matcher=CDA\(alpha=2\): model\.tracker '
             r'\(BYTETracker\) does not build: CDA: need 0 <= alpha'),
            ({'model.tracker.track_thresh': None, 'model.tracker.low_thresh': 0.2},
             r'track_thresh=None, --cfg-options model\.tracker\.low_thresh=0\.2: model\.tracker \(BYTETracker\)'),
            ({'model.tracker.foo': 1}, "unexpected keyword argument 'foo'")]:
        with pytest.raises(UserInputError, match=message):
            apply_cfg_options(Config.fromfile(BYTETRACK), options)
    # the detector (a model with nested models) is not built twice: only the runner builds it
    built = []
    monkeypatch.setattr(config_check, 'build_checked', lambda what, build: built.append(what))
    apply_cfg_options(Config.fromfile(DEBUG_YOLOX), {'model.backbone.deepen_factor': 0.5,
                                                     'model.bbox_head.loss_cls.loss_weight': 2.0})
    assert built == ['--cfg-options model.bbox_head.loss_cls.loss_weight=2: model.bbox_head.loss_cls '
                     '(CrossEntropyLoss)']


def test_custom_imports_option_is_imported_before_the_types_it_registers_are_checked(monkeypatch):
    """--cfg-options custom_imports=... custom_hooks=[...]: in either order, the hook's module is imported first (as
    Config.fromfile imports a config's custom_imports); a malformed or missing import is one error naming the key."""
    monkeypatch.syspath_prepend(osp.join(REPO, 'tests', 'helpers'))
    imports = dict(imports=['rank_weights_hook'], allow_failed_imports=False)
    cfg = apply_cfg_options(Config.fromfile(DEBUG_YOLOX), {'custom_hooks': [dict(type='SaveRankWeightsHook')],
                                                           'custom_imports': imports})
    assert cfg.custom_hooks == [dict(type='SaveRankWeightsHook')] and cfg.custom_imports == imports
    for value, message in ((3, r'custom_imports=3: expected dict\(imports='),
                           (dict(imports=['no_such_module_here']), 'custom_imports: ImportError: Failed to import '
                                                                   'no_such_module_here')):
        with pytest.raises(OptionError, match=message):
            apply_cfg_options(Config.fromfile(DEBUG_YOLOX), {'custom_imports': value})


@pytest.mark.parametrize('config', [BYTETRACK, DEBUG_YOLOX])
def test_a_key_set_to_its_own_value_is_accepted(config):
    """Any key given the value the config has (list items, component dicts, layer configs too) passes the checks."""
    keys = [(key, value) for pairs in config_keys(config).values() for key, value in pairs]
    for key, value in random.Random(5).sample(keys, min(80, len(keys))):
        apply_cfg_options(Config.fromfile(config), {key: value})
    apply_cfg_options(Config.fromfile(config), {'test_dataloader.dataset.pipeline.0': dict(
        Config.fromfile(config).test_dataloader.dataset.pipeline[0])})


@pytest.mark.parametrize('config', [BYTETRACK, DEBUG_YOLOX])
def test_constructor_defaults_are_accepted_where_the_config_has_none(config):
    """Each argument a component's config leaves None or unset takes its constructor's default."""
    cases = [(key, default) for key, default, _ in unset_arguments(config) if literal(default)]
    assert len(cases) > 50
    for key, default in random.Random(4).sample(cases, 50):
        apply_cfg_options(Config.fromfile(config), {key: default})
