# The demo YOLOX's backbone (configs/yolox/yolox_debug_1xb4-2it_vastmat-demo.py; a test checks that they are the same):
# CSPDarknet at 1/8 width, 16 / 32 / 64 / 128 channels at strides 4 / 8 / 16 / 32, the channels and strides of the
# narrow ResNet-18 of the tiny QDTrack, TransTrack and MOTIP configs. The zoo's configs of those models start from
# its weights after the zoo's detector training on the same train videos (zoo_pretrained_backbone), the role
# ImageNet weights play at full size. It reads frames as YOLOX does: BGR, 0-255, no normalisation.
demo_backbone = dict(
    _delete_=True,  # replaces the ResNet of the config it is merged into
    type='CSPDarknet',
    deepen_factor=0.33,
    widen_factor=0.125,
    out_indices=(2, 3, 4),
    use_depthwise=False,
    spp_kernal_sizes=(5, 9, 13),
    norm_cfg=dict(type='BN', momentum=0.03, eps=0.001),
    act_cfg=dict(type='Swish'))
demo_backbone_from_stride4 = dict(demo_backbone, out_indices=(1, 2, 3, 4))  # with the stride-4 level (an FPN)
# frozen (weights and batch-norm statistics, mmdet's frozen_stages): the zoo's Deformable DETRs (TransTrack,
# MOTIP) learn only their neck and transformer on the detector's features (configs/motip/motip_tiny_zoo_vastmat-demo.py)
demo_backbone_frozen = dict(demo_backbone, frozen_stages=4)
# (padded to multiples of 32: the CSPDarknet stem halves the frame into 2 x 2 cells)
demo_backbone_input = dict(mean=[0.0, 0.0, 0.0], std=[1.0, 1.0, 1.0], bgr_to_rgb=False, pad_size_divisor=32)
# trained by the zoo before the models that start from it; its checkpoint's backbone.* weights are loaded
zoo_pretrained_backbone = 'yolox/yolox_tiny_1xb8-1200it_vastmat-demo.py'
