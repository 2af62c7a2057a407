"""The batched xyah Kalman filter equals mmdet's (= ByteTrack's) filter track by track."""
import numpy as np
import pytest
from mmdet.models.task_modules.tracking import KalmanFilter

from vastmat.models.motion import KalmanFilterXYAH, KalmanFilterXYWH
from vastmat.structures.bbox import (cxcywh_to_xyxy, ltwh_to_xyah, ltwh_to_xyxy, xyah_to_xyxy, xyxy_to_cxcywh,
                                     xyxy_to_ltwh, xyxy_to_xyah)


def test_batched_filter_equals_mmdet_per_track():
    rng = np.random.default_rng(0)
    measurements = np.column_stack([rng.uniform(0, 1000, (6, 2)), rng.uniform(0.3, 3, 6), rng.uniform(20, 300, 6)])
    ours, theirs = KalmanFilterXYAH(), KalmanFilter()
    mean, cov = ours.initiate(measurements)
    singles = [theirs.initiate(m) for m in measurements]
    for step in range(5):
        mean, cov = ours.predict(mean, cov)
        singles = [theirs.predict(m, c) for m, c in singles]
        z = measurements + rng.normal(0, 3, measurements.shape) * [1, 1, 0.01, 1]
        mean, cov = ours.update(mean, cov, z)
        singles = [theirs.update(m, c, zi) for (m, c), zi in zip(singles, z)]
        np.testing.assert_allclose(mean, np.array([m for m, _ in singles]), rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(cov, np.array([c for _, c in singles]), rtol=1e-10, atol=1e-9)


def test_initiate_and_predict_values_by_hand():
    kf = KalmanFilterXYAH()
    mean, cov = kf.initiate(np.array([[10.0, 20.0, 0.5, 100.0]]))
    assert mean.tolist() == [[10, 20, 0.5, 100, 0, 0, 0, 0]]
    # std: 2 * h / 20 = 10 for positions, 1e-2 for the aspect, 10 * h / 160 = 6.25 for velocities
    np.testing.assert_allclose(np.diag(cov[0]), [100, 100, 1e-4, 100, 6.25 ** 2, 6.25 ** 2, 1e-10, 6.25 ** 2])
    moved = mean.copy()
    moved[0, 4:] = [1, 2, 0, 3]
    predicted, _ = kf.predict(moved, cov)
    assert predicted[0, :4].tolist() == [11, 22, 0.5, 103]


def test_predict_by_slices_equals_the_matrix_products_bit_for_bit():
    """predict adds slices instead of multiplying by F: the same numbers, bit for bit, on any covariance."""
    kf = KalmanFilterXYAH()
    rng = np.random.default_rng(1)
    a = rng.normal(size=(40, 8, 8))
    covariance, mean = a @ a.transpose(0, 2, 1), rng.normal(size=(40, 8)) * 100
    h = mean[:, 3]
    p, v, ones = kf.std_weight_position, kf.std_weight_velocity, np.ones(40)
    std = np.stack([p * h, p * h, 1e-2 * ones, p * h, v * h, v * h, 1e-5 * ones, v * h], axis=1)
    predicted_mean, predicted_covariance = kf.predict(mean, covariance)
    assert np.array_equal(predicted_mean, mean @ kf.motion_mat.T)
    assert np.array_equal(predicted_covariance,
                          kf.motion_mat @ covariance @ kf.motion_mat.T + np.eye(8) * (std ** 2)[:, None, :])


def _full_states(rng, count):
    """Random states with full (correlated) covariances: the update's solve branch, not its division."""
    a = rng.normal(size=(count, 8, 8))
    return rng.normal(size=(count, 8)) * 100 + [0, 0, 0, 200, 0, 0, 0, 0], a @ a.transpose(0, 2, 1) + np.eye(8)


def _update_by_matrices(mean, covariance, measurement, noise_var):
    """The Kalman correction written with matrices: S = H P H^T + R, K = P H^T S^-1."""
    projected = covariance[:, :4, :4] + noise_var[:, None, :] * np.eye(4)
    gain = np.linalg.solve(projected, covariance[:, :4, :]).transpose(0, 2, 1)
    new_mean = mean + np.einsum('kij,kj->ki', gain, measurement - mean[:, :4])
    return new_mean, covariance - gain @ projected @ gain.transpose(0, 2, 1)


def test_update_with_full_covariances_equals_the_matrix_formula():
    rng = np.random.default_rng(2)
    mean, covariance = _full_states(rng, 30)
    measurement = mean[:, :4] + rng.normal(size=(30, 4))
    xyah, xywh = KalmanFilterXYAH(), KalmanFilterXYWH()
    std = mean[:, 3:4] * np.array([1 / 20, 1 / 20, 0, 1 / 20]) + np.array([0, 0, 1e-1, 0])
    expected = _update_by_matrices(mean, covariance, measurement, std ** 2)
    for got, want in zip(xyah.update(mean, covariance, measurement), expected):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    scores = rng.uniform(0.1, 0.9, 30)
    wh4 = np.concatenate([mean[:, 2:4], mean[:, 2:4]], axis=1)
    expected = _update_by_matrices(mean, covariance, measurement, (wh4 / 20) ** 2 * (1 - scores[:, None]))
    for got, want in zip(xywh.update(mean, covariance, measurement, scores), expected):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_xywh_predict_equals_the_matrix_products_bit_for_bit():
    """TrackTrack's filter: noise from the predicted width and height, F P F^T as slice additions."""
    kf = KalmanFilterXYWH()
    mean, covariance = _full_states(np.random.default_rng(4), 40)
    predicted = mean @ kf.motion_mat.T
    wh4 = np.concatenate([predicted[:, 2:4], predicted[:, 2:4]], axis=1)
    std = np.concatenate([kf.std_weight_position * wh4, kf.std_weight_velocity * wh4], axis=1)
    predicted_mean, predicted_covariance = kf.predict(mean, covariance)
    assert np.array_equal(predicted_mean, predicted)
    assert np.array_equal(predicted_covariance,
                          kf.motion_mat @ covariance @ kf.motion_mat.T + np.eye(8) * (std ** 2)[:, None, :])


def test_steps_on_rows_in_place_equal_the_steps_on_gathered_rows():
    """initiate_rows / predict_rows / update_rows / gating_distance(rows=) on a track store's rows: the rows given
    change exactly as the gathered copies do in initiate / predict / update, every other row is left untouched."""
    rng = np.random.default_rng(5)
    for kf in (KalmanFilterXYAH(), KalmanFilterXYWH()):
        mean, covariance = _full_states(rng, 20)
        rows = np.array([7, 2, 15, 11, 0])
        measurement = mean[rows, :4] + rng.normal(size=(5, 4))
        gathered = kf.update(*kf.predict(mean[rows], covariance[rows]), measurement)
        stepped_mean, stepped_covariance = mean.copy(), covariance.copy()
        started = [a.copy() for a in (mean, covariance)]
        kf.initiate_rows(*started, rows[:2], measurement[:2])
        for got, want in zip(started, kf.initiate(measurement[:2])):
            np.testing.assert_array_equal(got[rows[:2]], want)
        kf.predict_rows(stepped_mean, stepped_covariance, rows)
        np.testing.assert_array_equal(kf.gating_distance(stepped_mean, stepped_covariance, measurement, rows=rows),
                                      kf.gating_distance(stepped_mean[rows], stepped_covariance[rows], measurement))
        kf.update_rows(stepped_mean, stepped_covariance, rows, measurement)
        np.testing.assert_array_equal(stepped_mean[rows], gathered[0])
        np.testing.assert_array_equal(stepped_covariance[rows], gathered[1])
        with pytest.raises(ValueError, match='5 rows given 4 measurements'):
            kf.update_rows(stepped_mean, stepped_covariance, rows, measurement[:4])
        others = np.setdiff1d(np.arange(20), rows)
        np.testing.assert_array_equal(stepped_mean[others], mean[others])
        np.testing.assert_array_equal(stepped_covariance[others], covariance[others])


def test_box_conversions_round_trip():
    boxes = np.array([[10.0, 20.0, 50.0, 100.0], [0.5, 0.25, 3.0, 9.0]])
    np.testing.assert_allclose(xyah_to_xyxy(xyxy_to_xyah(boxes)), boxes, atol=1e-12)
    tlwh = np.column_stack([boxes[:, :2], boxes[:, 2:] - boxes[:, :2]])
    np.testing.assert_allclose(ltwh_to_xyah(tlwh), xyxy_to_xyah(boxes), atol=1e-12)


def test_box_conversions_equal_their_numpy_expressions_bit_for_bit():
    """The compiled conversions compute the element-wise numpy expressions in the same order (float64 out, any
    input layout: a state's first four columns, a strided view, a list)."""
    rng = np.random.default_rng(6)
    b = rng.uniform(-50, 500, (37, 8))
    b[:, 2:4] = np.abs(b[:, 2:4]) + 0.1
    x, y, u, v = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    w = u * v
    expected = {
        ltwh_to_xyxy: np.stack([x, y, x + u, y + v], 1), xyxy_to_ltwh: np.stack([x, y, u - x, v - y], 1),
        xyxy_to_xyah: np.stack([x + (u - x) / 2, y + (v - y) / 2, (u - x) / (v - y), v - y], 1),
        ltwh_to_xyah: np.stack([x + u / 2, y + v / 2, u / v, v], 1),
        xyah_to_xyxy: np.stack([x - w / 2, y - v / 2, (x - w / 2) + w, (y - v / 2) + v], 1),
        xyxy_to_cxcywh: np.stack([(x + u) / 2, (y + v) / 2, u - x, v - y], 1),
        cxcywh_to_xyxy: np.stack([x - u / 2, y - v / 2, x + u / 2, y + v / 2], 1),
    }
    for convert, want in expected.items():
        got = convert(b[:, :4])
        assert got.dtype == np.float64 and np.array_equal(got, want), convert.__name__
        assert np.array_equal(convert(b[::3, :4]), want[::3]), convert.__name__
    assert np.array_equal(xyah_to_xyxy(b), expected[xyah_to_xyxy])  # a whole Kalman state: its first four values
    assert ltwh_to_xyxy([[1, 2, 3, 4]]).tolist() == [[1.0, 2.0, 4.0, 6.0]]
    assert ltwh_to_xyxy(np.zeros((0, 4))).shape == (0, 4)
