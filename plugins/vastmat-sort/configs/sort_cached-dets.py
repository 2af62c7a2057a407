# SORT (Bewley et al. 2016; official defaults) on cached detections, from the vastmat-sort plugin:
#   pip install plugins/vastmat-sort
#   python tools/test.py plugins/vastmat-sort/configs/sort_cached-dets.py --det-root DETS [--data-root DATA] \
#       --work-dir W
# SORT is registered by the plugin's entry point (group `vastmat.plugins`); nothing else is needed.
# The base is vastmat's shipped config, found in a source checkout and in an installed wheel alike.
_base_ = ['vastmat::_base_/tracking_cached-dets.py']

model = dict(tracker=dict(type='SORT', max_age=1, min_hits=3, iou_threshold=0.3))
