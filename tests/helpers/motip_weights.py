"""Deterministic weights for MOTIP's ID modules that both sides of a golden test apply (the official modules in
scratch, ours here: the same state-dict names), and a recorder of a MOTIP tracker's raw ID logits."""
from __future__ import annotations

import torch


def deterministic_weights(module: torch.nn.Module, rule: str) -> None:
    """Load the rule's weights into ``module`` (the official TrajectoryModeling / IDDecoder or the port's; state-dict
    names and shapes are the same). The i-th state-dict key in sorted order draws ``noise = randn(shape,
    generator=torch.Generator().manual_seed(i))``; keys sharing one tensor (the shared ``embed_to_word_layers``)
    take the value of the first of them in sorted order. LayerNorm weights (1-D ``*norm*.weight``) are ``1 + s *
    noise``, the rest ``s * noise``, with:

    * ``rule='random'``: ``s = 0.05`` (an untrained decoder: arbitrary but deterministic ID decisions);
    * ``rule='tracking'``: ``s = 0.01`` plus a hand-made decoder that tracks by feature similarity (feature_dim =
      id_dim = 256, head_dim 32): ``word_to_embed.weight = noise`` (std 1 word embeddings ``e_j``);
      ``embed_to_word_layers.*.weight = word_to_embed.weight.T / 64 + s * noise``; each ``cross_attn_layers.L``:
      ``in_proj_weight`` adds ``1.4 I`` on the feature block of the query and key rows (``[0:256, 0:256]``,
      ``[512:768, 0:256]``) and ``I`` from the trajectory token's id half to the first 256 value rows
      (``[1024:1280, 256:512]``), ``out_proj.weight`` adds ``2 I`` at ``[256:512, 0:256]`` (the attended id
      embeddings go to the id half); ``rel_pos_embeds[l, d, h]`` adds ``-0.1 d`` (recent frames first). Each of
      the 8 feature heads thus attends to the trajectory tokens whose features are similar and copies their id
      embedding: a detection of a tracked identity reads its label, an unknown one keeps the newborn word.
    """
    if rule not in ('random', 'tracking'):
        raise ValueError(rule)
    scale = 0.05 if rule == 'random' else 0.01
    state = module.state_dict()
    names = sorted(state)

    def noise_of(name: str) -> torch.Tensor:
        g = torch.Generator().manual_seed(names.index(name))
        return torch.randn(state[name].shape, generator=g, dtype=torch.float32)

    values, first_of = {}, {}
    for name in names:
        tensor = state[name]
        noise = noise_of(name)
        value = scale * noise
        if tensor.dim() == 1 and 'norm' in name and name.endswith('weight'):
            value = value + 1.0
        if rule == 'tracking':
            eye = torch.eye(256)
            if name == 'word_to_embed.weight':
                value = noise
            elif name.startswith('embed_to_word_layers.'):
                value = noise_of('word_to_embed.weight').T / 64 + value
            elif name.startswith('cross_attn_layers.') and name.endswith('in_proj_weight'):
                value[0:256, 0:256] += 1.4 * eye
                value[512:768, 0:256] += 1.4 * eye
                value[1024:1280, 256:512] += eye
            elif name.startswith('cross_attn_layers.') and name.endswith('out_proj.weight'):
                value[256:512, 0:256] += 2.0 * eye
            elif name == 'rel_pos_embeds':
                value += -0.1 * torch.arange(tensor.shape[1], dtype=torch.float32)[None, :, None]
        ptr = tensor.data_ptr()
        values[name] = values[first_of[ptr]] if ptr in first_of else value
        first_of.setdefault(ptr, name)
    module.load_state_dict(values, strict=True)


def record_id_logits(tracker) -> list:
    """Wrap ``tracker.id_logits`` so that each call's raw ``(n, K + 1)`` logits are appended to the returned list."""
    recorded = []
    id_logits = tracker.id_logits

    def recording(features):
        out = id_logits(features)
        recorded.append(out[0])
        return out
    tracker.id_logits = recording
    return recorded
