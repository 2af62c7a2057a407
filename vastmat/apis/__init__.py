"""Inference for users: build a tracking model, track cached detections, a video file or a folder of frames."""
from .inference import (cached_frames, init_model, load_config, matcher_fragment, matcher_names,
                        parse_matcher_option, read_track_rows, run_tracking_test, swap_matcher, track_and_score,
                        track_cached, video_list, write_results_folder, write_track_rows)
from .video import TrackResult, read_frames, track

__all__ = ['init_model', 'load_config', 'matcher_fragment', 'matcher_names', 'parse_matcher_option', 'swap_matcher',
           'run_tracking_test', 'cached_frames', 'track_cached', 'track_and_score', 'video_list', 'read_track_rows',
           'write_track_rows', 'write_results_folder', 'track', 'read_frames', 'TrackResult']
