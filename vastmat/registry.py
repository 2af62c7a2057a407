"""VastMAT registries: children of MMDetection's, so mmdet components stay reachable (``type='mmdet.YOLOX'`` or,
through the parent, plain ``type='YOLOX'``), plus ``MATCHERS`` for association modules.

Every registry imports its ``locations`` lazily on first use, and the first use of any VastMAT registry also loads
the installed plugins (entry-point group ``vastmat.plugins``, through :data:`FIRST_LOOKUP_CALLBACKS`), so a plugin's
components can be built from a config without ``custom_imports``.
"""
from mmdet.registry import DATA_SAMPLERS as MMDET_DATA_SAMPLERS
from mmdet.registry import DATASETS as MMDET_DATASETS
from mmdet.registry import EVALUATOR as MMDET_EVALUATOR
from mmdet.registry import HOOKS as MMDET_HOOKS
from mmdet.registry import LOG_PROCESSORS as MMDET_LOG_PROCESSORS
from mmdet.registry import LOOPS as MMDET_LOOPS
from mmdet.registry import METRICS as MMDET_METRICS
from mmdet.registry import MODEL_WRAPPERS as MMDET_MODEL_WRAPPERS
from mmdet.registry import MODELS as MMDET_MODELS
from mmdet.registry import OPTIM_WRAPPER_CONSTRUCTORS as MMDET_OPTIM_WRAPPER_CONSTRUCTORS
from mmdet.registry import OPTIM_WRAPPERS as MMDET_OPTIM_WRAPPERS
from mmdet.registry import OPTIMIZERS as MMDET_OPTIMIZERS
from mmdet.registry import PARAM_SCHEDULERS as MMDET_PARAM_SCHEDULERS
from mmdet.registry import RUNNER_CONSTRUCTORS as MMDET_RUNNER_CONSTRUCTORS
from mmdet.registry import RUNNERS as MMDET_RUNNERS
from mmdet.registry import TASK_UTILS as MMDET_TASK_UTILS
from mmdet.registry import TRANSFORMS as MMDET_TRANSFORMS
from mmdet.registry import VISBACKENDS as MMDET_VISBACKENDS
from mmdet.registry import VISUALIZERS as MMDET_VISUALIZERS
from mmdet.registry import WEIGHT_INITIALIZERS as MMDET_WEIGHT_INITIALIZERS
from typing import Any, Callable

from mmengine.registry import Registry

from vastmat.utils.config_index import memoise_package_metafiles

PLUGINS_LOCATION = 'vastmat.plugins'
# configs inheriting an mmdet:: base load without re-reading mmdet's 102 metafiles each time (see the module)
memoise_package_metafiles()


# Called after a registry's first lazy import. ``vastmat.plugins`` (a location of every registry, above this module)
# adds its plugin loader here when it is imported, so this module never imports upward.
FIRST_LOOKUP_CALLBACKS: list[Callable[[], Any]] = []


class VastMATRegistry(Registry):
    """An mmengine ``Registry`` that loads the VastMAT plugins on its first lazy import.

    Every registry lists ``vastmat.plugins`` among its ``locations``; importing it registers the plugin loader in
    :data:`FIRST_LOOKUP_CALLBACKS`, run once the locations are imported. mmengine's ``Registry.get`` only imports the
    ``locations`` of the registry it is called on, not of its parents, so the parent (mmdet) registry's locations are
    imported here too; otherwise ``type='YOLOX'`` would only resolve after something else imported ``mmdet.models``.
    """

    def __init__(self, *args: Any, locations: list[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, locations=[*locations, PLUGINS_LOCATION], **kwargs)

    def import_from_location(self) -> None:
        if self._imported:
            return
        super().import_from_location()
        for callback in FIRST_LOOKUP_CALLBACKS:
            callback()
        parent = self.parent
        while parent is not None:
            parent.import_from_location()
            parent = parent.parent


# Engine
RUNNERS = VastMATRegistry('runner', parent=MMDET_RUNNERS, locations=['vastmat.engine'])
RUNNER_CONSTRUCTORS = VastMATRegistry(
    'runner constructor', parent=MMDET_RUNNER_CONSTRUCTORS, locations=['vastmat.engine'])
LOOPS = VastMATRegistry('loop', parent=MMDET_LOOPS, locations=['vastmat.engine'])
HOOKS = VastMATRegistry('hook', parent=MMDET_HOOKS, locations=['vastmat.engine'])
LOG_PROCESSORS = VastMATRegistry('log_processor', parent=MMDET_LOG_PROCESSORS, locations=['vastmat.engine'])
OPTIMIZERS = VastMATRegistry('optimizer', parent=MMDET_OPTIMIZERS, locations=['vastmat.engine'])
OPTIM_WRAPPERS = VastMATRegistry('optim_wrapper', parent=MMDET_OPTIM_WRAPPERS, locations=['vastmat.engine'])
OPTIM_WRAPPER_CONSTRUCTORS = VastMATRegistry(
    'optimizer wrapper constructor', parent=MMDET_OPTIM_WRAPPER_CONSTRUCTORS, locations=['vastmat.engine'])
PARAM_SCHEDULERS = VastMATRegistry('parameter scheduler', parent=MMDET_PARAM_SCHEDULERS,
                                   locations=['vastmat.engine'])
MODEL_WRAPPERS = VastMATRegistry('model_wrapper', parent=MMDET_MODEL_WRAPPERS, locations=['vastmat.engine'])

# Data
DATASETS = VastMATRegistry('dataset', parent=MMDET_DATASETS, locations=['vastmat.datasets'])
DATA_SAMPLERS = VastMATRegistry('data sampler', parent=MMDET_DATA_SAMPLERS, locations=['vastmat.datasets'])
TRANSFORMS = VastMATRegistry('transform', parent=MMDET_TRANSFORMS, locations=['vastmat.datasets'])

# Models
MODELS = VastMATRegistry('model', parent=MMDET_MODELS, locations=['vastmat.models'])
WEIGHT_INITIALIZERS = VastMATRegistry('weight initializer', parent=MMDET_WEIGHT_INITIALIZERS,
                                      locations=['vastmat.models'])
TASK_UTILS = VastMATRegistry('task util', parent=MMDET_TASK_UTILS, locations=['vastmat.models'])
# Association modules (similarities, gates, assignment solvers): not an mmdet concept, so a root registry.
MATCHERS = VastMATRegistry('matcher', scope='vastmat', locations=['vastmat.models.association'])

# Evaluation
METRICS = VastMATRegistry('metric', parent=MMDET_METRICS, locations=['vastmat.evaluation'])
EVALUATOR = VastMATRegistry('evaluator', parent=MMDET_EVALUATOR, locations=['vastmat.evaluation'])

# Visualisation
# (no VastMAT visualizers of its own yet: mmdet's DetLocalVisualizer / TrackLocalVisualizer are used through the parent)
VISUALIZERS = VastMATRegistry('visualizer', parent=MMDET_VISUALIZERS)
VISBACKENDS = VastMATRegistry('vis_backend', parent=MMDET_VISBACKENDS)

ALL_REGISTRIES = dict(
    RUNNERS=RUNNERS, RUNNER_CONSTRUCTORS=RUNNER_CONSTRUCTORS, LOOPS=LOOPS, HOOKS=HOOKS, LOG_PROCESSORS=LOG_PROCESSORS,
    OPTIMIZERS=OPTIMIZERS, OPTIM_WRAPPERS=OPTIM_WRAPPERS, OPTIM_WRAPPER_CONSTRUCTORS=OPTIM_WRAPPER_CONSTRUCTORS,
    PARAM_SCHEDULERS=PARAM_SCHEDULERS, MODEL_WRAPPERS=MODEL_WRAPPERS, DATASETS=DATASETS, DATA_SAMPLERS=DATA_SAMPLERS,
    TRANSFORMS=TRANSFORMS, MODELS=MODELS, WEIGHT_INITIALIZERS=WEIGHT_INITIALIZERS, TASK_UTILS=TASK_UTILS,
    MATCHERS=MATCHERS, METRICS=METRICS, EVALUATOR=EVALUATOR, VISUALIZERS=VISUALIZERS, VISBACKENDS=VISBACKENDS)
