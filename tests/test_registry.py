"""Registries: children of mmdet's, scope 'vastmat', lazy import of their locations, MATCHERS."""
import textwrap

from helpers.common import DEBUG_YOLOX, python


def test_import_is_light_registries_are_importable_and_locations_load_lazily():
    # A fresh process: importing vastmat loads neither torch nor mmdet; nothing of vastmat.engine or mmdet.models is
    # imported until a registry lookup needs it (mmdet's through the parent, whose locations are imported too).
    out = python('-c', textwrap.dedent('''
        import sys
        import vastmat
        assert 'torch' not in sys.modules and 'mmdet' not in sys.modules, 'import vastmat must stay cheap'
        from vastmat.registry import MODELS, MATCHERS, RUNNERS
        print(vastmat.__version__, MODELS.scope, MODELS.parent.scope, MATCHERS.scope, MATCHERS.parent)
        before = ('vastmat.engine' in sys.modules, 'mmdet.models' in sys.modules)
        runner_cls = RUNNERS.get('VastMATRunner')
        yolox = MODELS.get('YOLOX')             # found in the parent (mmdet)
        scoped = MODELS.get('mmdet.YOLOX')      # explicit scope
        print(before, 'vastmat.engine' in sys.modules, runner_cls.__module__, yolox is scoped, yolox.__module__)
    ''')).stdout.strip().splitlines()[-2:]
    assert out[0].split()[1:] == ['vastmat', 'mmdet', 'vastmat', 'None']
    assert out[1] == '(False, False) True vastmat.engine.runner True mmdet.models.detectors.yolox'


def test_children_of_mmdet_registries():
    from mmdet import registry as mmdet_registry

    from vastmat import registry
    for name in ('DATASETS', 'MODELS', 'TASK_UTILS', 'METRICS', 'TRANSFORMS', 'HOOKS', 'DATA_SAMPLERS',
                 'VISUALIZERS', 'RUNNERS', 'LOOPS', 'OPTIM_WRAPPERS', 'PARAM_SCHEDULERS', 'EVALUATOR'):
        ours = getattr(registry, name)
        assert ours.scope == 'vastmat', name
        assert ours.parent is getattr(mmdet_registry, name), name
        assert getattr(mmdet_registry, name)._children['vastmat'] is ours, name


def test_default_scope_builds_mmdet_and_vastmat_components():
    from mmengine.config import Config
    from mmengine.registry import DefaultScope

    from vastmat.registry import MODELS
    cfg = Config.fromfile(DEBUG_YOLOX)
    assert cfg.default_scope == 'vastmat' and cfg.runner_type == 'VastMATRunner'
    scope = DefaultScope.get_instance('test_default_scope', scope_name='vastmat')
    assert scope.scope_name == 'vastmat'
    model = MODELS.build(cfg.model)
    assert type(model).__name__ == 'YOLOX' and model.bbox_head.num_classes == 1


def test_matchers_registry_builds_registered_classes():
    from vastmat.registry import MATCHERS

    @MATCHERS.register_module(force=True)
    class _TestMatcher:
        def __init__(self, thr: float = 0.5):
            self.thr = thr

    built = MATCHERS.build(dict(type='_TestMatcher', thr=0.1))
    assert isinstance(built, _TestMatcher) and built.thr == 0.1
    MATCHERS._module_dict.pop('_TestMatcher')


def test_no_vastmat_component_shadows_an_mmdet_one():
    """A VastMAT name equal to an mmdet name would hide mmdet's component in the vastmat scope (mmdet's own
    ByteTrack configs built VastMAT's ByteTracker, with another interface, before it was renamed BYTETracker)."""
    from vastmat.registry import ALL_REGISTRIES
    shadowed = []
    for name, registry in ALL_REGISTRIES.items():
        if registry.parent is None:
            continue
        registry.import_from_location()
        parent = registry.parent.module_dict
        shadowed += [f'{name}.{key}' for key, cls in registry.module_dict.items()
                     if key in parent and parent[key] is not cls]
    assert shadowed == []


def test_mmdet_bytetrack_tracker_is_reachable_in_the_vastmat_scope():
    from mmdet.models.trackers import ByteTracker as MMDetByteTracker

    from vastmat.models.trackers import BYTETracker
    from vastmat.registry import MODELS
    assert MODELS.get('ByteTracker') is MMDetByteTracker and MODELS.get('BYTETracker') is BYTETracker
