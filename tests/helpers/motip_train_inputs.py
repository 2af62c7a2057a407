"""The fixed training batch and sizes of MOTIP's one-batch golden test (tests/models/mot/test_motip_golden_train.py),
shared with its driver (tests/fixtures/motip_train_official/make_golden.py), and the digest that keeps large gradients
small in the fixture."""
from __future__ import annotations

import copy
import zlib

import torch

# the narrow model: a 64-d Deformable DETR (2 heads, 4 points, 1 encoder and 2 decoder layers, 8 queries; 64 so
# that the official GroupNorm(32, d) of the input projections has 2 channels a group and their conv bias counts) on
# the official ResNet-50, a 2-layer ID decoder on 64-d features and 32-d ID words (6 heads of 16, K = 8 words),
# clips of T = 3 frames of 96 x 128 px, 2 frames with DETR gradients, DETR passes of 1 frame with checkpointing
SIZES = dict(hidden_dim=64, num_heads=2, num_points=4, enc_layers=1, dec_layers=2, ffn_dim=64, num_queries=8,
             feature_dim=64, id_dim=32, id_layers=2, id_head_dim=16, num_id_vocabulary=8, rel_pe_length=4, num_groups=2,
             num_train_frames=2, num_checkpoint_frames=1, occlusion_prob=0.5, switch_prob=0.5)
HEIGHT, WIDTH = 96, 128
# each frame's ground truth: boxes (x1, y1, x2, y2 pixels) and identities
FRAMES = [
    ([(10., 12., 40., 50.), (60., 20., 100., 70.), (30., 55., 70., 90.)], [3, 7, 12]),
    ([(62., 22., 104., 72.), (12., 10., 44., 52.)], [7, 3]),
    ([(28., 50., 66., 88.), (14., 14., 46., 54.), (70., 18., 110., 66.), (90., 60., 124., 94.)], [12, 3, 7, 20]),
]
PRETRAIN_FRAMES = (0, 2)  # the DETR pre-training case: these frames as a batch of two single-frame clips
IMAGE_SEED = 7  # the uint8 frames
TARGET_SEED = 11  # random.seed / torch.manual_seed before the ID-label draws (official: in the dataset transforms)
FRAME_SEED = 5  # torch.manual_seed before the training step: the frames with DETR gradients (torch.randperm)
WEIGHT_SEED = 0  # tests/helpers/detr_official_weights.py
# its draws in float64, rounded to float32: the same weights on every CPU (the float32 draws depend on the kernels)
WEIGHT_DRAW = 'float64'
ID_WEIGHT_SCALE = 0.05  # id_module_weights: the scale of deterministic_motip_weights' 'random' rule
FULL_GRADIENT_NUMEL = 1024  # gradients / steps of tensors up to this size are stored whole, larger ones as a digest


def id_module_weights(module: torch.nn.Module) -> None:
    """The ID modules' weights on both sides (the official TrajectoryModeling / IDDecoder and ours: the same
    state-dict names and shapes), by the shape of the ``'random'`` rule of
    ``vastmat.benchmarks.simulated_inputs.deterministic_motip_weights`` but with torch's float64 generator (so its
    numbers are this fixture's own; both are the same on every CPU). The i-th state-dict key in sorted order is ``0.05 * randn(shape, generator=torch.Generator()
    .manual_seed(i), dtype=float64)`` (LayerNorm weights, 1-d ``*norm*.weight``, ``1 +`` that), rounded to float32;
    keys sharing one tensor take the value of the first of them in sorted order."""
    state = module.state_dict()
    values, first_of = {}, {}
    for i, name in enumerate(sorted(state)):
        tensor = state[name]
        value = ID_WEIGHT_SCALE * torch.randn(tensor.shape, generator=torch.Generator().manual_seed(i),
                                              dtype=torch.float64)
        if tensor.dim() == 1 and 'norm' in name and name.endswith('weight'):
            value = value + 1.0
        ptr = tensor.data_ptr()
        values[name] = values[first_of[ptr]] if ptr in first_of else value.to(tensor.dtype)
        first_of.setdefault(ptr, name)
    module.load_state_dict(values, strict=True)


def clip_images() -> torch.Tensor:
    """The clip's frames, ``(T, 3, H, W)`` uint8 (RGB)."""
    g = torch.Generator().manual_seed(IMAGE_SEED)
    return torch.randint(0, 256, (len(FRAMES), 3, HEIGHT, WIDTH), generator=g, dtype=torch.uint8)


def normalized(images: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The official training loop's input normalisation (``v2.functional.to_dtype(scale=True)``, then
    ``normalize`` with the ImageNet mean / std), in ``dtype`` (the golden step runs in float64)."""
    from torchvision.transforms import v2
    x = v2.functional.to_dtype(images, dtype=dtype, scale=True)
    return v2.functional.normalize(x, mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])


def digest(name: str, tensor: torch.Tensor) -> torch.Tensor:
    """A float64 fingerprint of a large tensor: its sum, sum of squares, its dot products with two +-1 vectors and
    16 of its entries (positions and signs drawn from a generator seeded by the name's CRC32)."""
    x = tensor.detach().double().flatten()
    g = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    signs = torch.randint(0, 2, (2, x.numel()), generator=g).double() * 2 - 1
    picks = torch.randint(0, x.numel(), (16,), generator=g)
    return torch.cat([torch.stack([x.sum(), (x * x).sum()]), signs @ x, x[picks]])


def record(name: str, tensor: torch.Tensor) -> torch.Tensor:
    """What the fixture stores for one gradient or parameter step (float64, as the run): the tensor itself when
    small, else its :func:`digest`."""
    if tensor.numel() <= FULL_GRADIENT_NUMEL:
        return tensor.detach().double().clone()
    return digest(name, tensor)


def narrow_model_cfg(base) -> dict:
    """The model of the full-size config ``base`` (an mmengine Config) at :data:`SIZES`: ResNet-50 with the
    full-size settings (frozen stem and stage 1, frozen BN), no ImageNet download."""
    s, w = SIZES, SIZES['hidden_dim']
    cfg = copy.deepcopy(base.model)
    attn = dict(embed_dims=w, num_heads=s['num_heads'], num_points=s['num_points'], dropout=0.0, batch_first=True)
    ffn = dict(embed_dims=w, feedforward_channels=s['ffn_dim'], ffn_drop=0.0)
    det = cfg['detector']
    det['num_queries'] = s['num_queries']
    det['backbone']['init_cfg'] = None
    det['neck']['out_channels'] = w
    det['encoder'] = dict(num_layers=s['enc_layers'], layer_cfg=dict(self_attn_cfg=attn, ffn_cfg=ffn))
    det['decoder'] = dict(num_layers=s['dec_layers'], return_intermediate=True, post_norm_cfg=None,
                          layer_cfg=dict(self_attn_cfg=dict(embed_dims=w, num_heads=s['num_heads'], dropout=0.0,
                                                            batch_first=True),
                                         cross_attn_cfg=attn, ffn_cfg=ffn))
    det['positional_encoding']['num_feats'] = w // 2
    det['bbox_head']['embed_dims'] = w
    det['test_cfg'] = dict(max_per_img=s['num_queries'])
    cfg['tracker']['trajectory_modeling'].update(detr_dim=w, feature_dim=s['feature_dim'])
    cfg['tracker']['miss_tolerance'] = s['rel_pe_length']
    cfg['tracker']['id_decoder'].update(feature_dim=s['feature_dim'], id_dim=s['id_dim'],
                                        num_layers=s['id_layers'], head_dim=s['id_head_dim'],
                                        num_id_vocabulary=s['num_id_vocabulary'], rel_pe_length=s['rel_pe_length'])
    if not cfg.get('only_detr'):  # the clip training's draws and passes (the DETR pre-training keeps its config's)
        cfg.update(num_groups=s['num_groups'], num_train_frames=s['num_train_frames'],
                   num_checkpoint_frames=s['num_checkpoint_frames'], occlusion_prob=s['occlusion_prob'],
                   switch_prob=s['switch_prob'])
    return cfg
