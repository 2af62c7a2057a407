# Adaptive CDA, forward: alpha(N) = clip(0.5 + 0.05 (N - 10), 0, 1), N = high-confidence detections of the frame
# (more IoU in dense frames, more centre similarity in sparse ones; DESIGN.md section 4).
matcher = dict(type='CDA', mode='forward', k=0.05, n_ref=10, alpha_ref=0.5, alpha_min=0.0, alpha_max=1.0)
