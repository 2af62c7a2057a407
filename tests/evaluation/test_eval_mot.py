"""TrackEval-backed tracking metrics against published numbers, the vastmat preset's ignore rule, the tools."""
import json
import os.path as osp
import shutil

import numpy as np
import pytest

from helpers.common import ANIMALTRACK, SHARED_DATA, mot_specs, needs_animaltrack, needs_mot, tool
from vastmat.datasets.formats import FormatError
from vastmat.evaluation.analysis import bootstrap_hota, difficulty_thirds, interval, per_video_hota_stats
from vastmat.evaluation.mot_eval import SequenceSpec, combined_hota, evaluate


def _reference(benchmark):
    with open(osp.join(SHARED_DATA, benchmark, 'reference_metrics_trackeval.json')) as f:
        return json.load(f)


def _assert_matches(ours, reference, ratio_tol):
    checked = 0
    for seq, values in reference.items():
        for key, value in values.items():
            if isinstance(value, int):
                assert ours[seq][key] == value and isinstance(ours[seq][key], int), (seq, key)
            else:
                np.testing.assert_allclose(ours[seq][key], value, rtol=0, atol=ratio_tol, err_msg=f'{seq} {key}')
            checked += 1
    return checked


@needs_mot
def test_mot15_cem_published_values():
    ours = evaluate(mot_specs('MOT15-TUD', 'CEM'), 'mot15')
    published = {  # py-motmetrics tests (full precision)
        'TUD-Campus': (0.3913974378451139, 0.418047030142763, 0.36912068120832836),
        'TUD-Stadtmitte': (0.3978490169927877, 0.3922675723693166, 0.4088407518112996),
        'COMBINED': (0.3999570912884786, 0.3976832912424188, 0.4124495298453543)}
    for seq, (hota, deta, assa) in published.items():
        np.testing.assert_allclose([ours[seq]['HOTA'], ours[seq]['DetA'], ours[seq]['AssA']], [hota, deta, assa],
                                   rtol=0, atol=1e-12)
    campus = ours['TUD-Campus']  # MOTChallenge devkit: MOTA 52.6, IDF1 55.8, FP 13, FN 150, IDs 7
    assert round(100 * campus['MOTA'], 1) == 52.6 and round(100 * campus['IDF1'], 1) == 55.8
    assert (campus['CLR_FP'], campus['CLR_FN'], campus['IDSW']) == (13, 150, 7)
    assert _assert_matches(ours, _reference('MOT15-TUD')['CEM'], 1e-12) > 100


@needs_mot
def test_combined_hota_and_the_paired_bootstrap_of_videos():
    """combined_hota rebuilds TrackEval's HOTA combination from flattened per-video results (CEM on TUD: the
    published COMBINED to the bit); a video given twice weighs twice; the bootstrap resamples videos, the same
    resamples for every method, so a method against itself differs by exactly 0."""
    ours = evaluate(mot_specs('MOT15-TUD', 'CEM'), 'mot15')
    campus, stadt = 'TUD-Campus', 'TUD-Stadtmitte'
    assert combined_hota(ours, [campus, stadt]) == ours['COMBINED']['HOTA']
    assert abs(combined_hota(ours, [campus, stadt]) - 0.3999570912884786) < 1e-12
    assert combined_hota(ours, [campus]) == pytest.approx(ours[campus]['HOTA'], abs=1e-12)
    assert combined_hota(ours, [campus, campus]) == pytest.approx(ours[campus]['HOTA'], abs=1e-12)
    # HOTA's combination by hand (Luiten et al. 2021): per alpha, DetA from the summed counts, AssA averaged with
    # HOTA_TP weights, HOTA = mean over alpha of sqrt(DetA AssA) (denominators at least 1, as TrackEval's, for the
    # alphas without true positives); Stadtmitte counted twice
    tp, fn, fp, ass = (np.array([ours[v][f'{k}_per_alpha'] for v in (campus, stadt, stadt)])
                       for k in ('HOTA_TP', 'HOTA_FN', 'HOTA_FP', 'AssA'))
    det_a = tp.sum(0) / np.maximum(1.0, (tp + fn + fp).sum(0))
    by_hand = np.sqrt(det_a * (ass * tp).sum(0) / np.maximum(1.0, tp.sum(0))).mean()
    assert combined_hota(ours, [campus, stadt, stadt]) == pytest.approx(by_hand, abs=1e-12)
    assert abs(by_hand - ours['COMBINED']['HOTA']) > 1e-4
    with pytest.raises(ValueError, match='no videos'):
        combined_hota(ours, [])

    worse = {k: dict(v) for k, v in ours.items()}  # Stadtmitte with every count of true positives halved
    worse[stadt]['HOTA_TP_per_alpha'] = [x / 2 for x in worse[stadt]['HOTA_TP_per_alpha']]
    draws = bootstrap_hota(dict(cem=ours, again=ours, worse=worse), [campus, stadt], samples=200, seed=3)
    assert set(draws) == {'cem', 'again', 'worse'} and draws['cem'].shape == (200, )
    assert (draws['again'] - draws['cem'] == 0).all()
    assert (draws['worse'] <= draws['cem']).all() and (draws['worse'] < draws['cem']).any()
    only_campus = np.isclose(draws['cem'], ours[campus]['HOTA'], rtol=0, atol=1e-12)
    assert only_campus.any() and (draws['worse'][only_campus] == draws['cem'][only_campus]).all()
    again = bootstrap_hota(dict(cem=ours), [campus, stadt], samples=200, seed=3)
    assert (again['cem'] == draws['cem']).all()  # the seed fixes the resamples
    assert interval(np.arange(101.0), 0.9) == pytest.approx((5.0, 95.0), abs=1e-12)
    with pytest.raises(KeyError, match="'worse' has no result for \\['MOT'\\]"):
        bootstrap_hota(dict(worse=worse), [campus, 'MOT'], samples=2)
    with pytest.raises(ValueError, match='level'):
        interval(np.arange(3.0), 1.0)


@needs_mot
@pytest.mark.parametrize('benchmark, preset, key, tracker', [
    ('MOT17', 'mot17', 'MPNTrack/FRCNN7', 'MPNTrack'),
    ('MOT17', 'mot17', 'Lif_T/FRCNN7', 'Lif_T'),
    ('MOT20', 'mot20', 'MPNTrack', 'MPNTrack'),
])
def test_mot17_mot20_reference_values(benchmark, preset, key, tracker):
    ours = evaluate(mot_specs(benchmark, tracker), preset, workers=2)
    reference = _reference(benchmark)[key]
    assert _assert_matches(ours, reference, 1e-9) == sum(len(v) for v in reference.values())


@needs_animaltrack
def test_animaltrack_ground_truth_as_tracker_parallel_equals_serial(tmp_path):
    results = tmp_path / 'gt_as_tracker'
    results.mkdir()
    for seq in ('chicken_3', 'deer_5', 'zebra_3', 'horse_4'):
        shutil.copy(osp.join(ANIMALTRACK, seq, 'gt', 'gt.txt'), results / f'{seq}.txt')
    serial = tmp_path / 'serial.json'
    tool('tools/eval_mot.py', '--gt-root', ANIMALTRACK, '--results', results, '--out', serial)
    parallel = tmp_path / 'parallel.json'
    tool('tools/eval_mot.py', '--gt-root', ANIMALTRACK, '--results', results, '--out', parallel,
         '--workers', 2, '--plot', tmp_path / 'cdf.png')
    assert serial.read_bytes() == parallel.read_bytes()
    metrics = json.loads(serial.read_text())
    for seq in ('chicken_3', 'deer_5', 'zebra_3', 'horse_4'):
        assert metrics[seq]['HOTA'] == metrics[seq]['MOTA'] == metrics[seq]['IDF1'] == 1.0
    # the 28 other videos have no result file: reported by name (the warning goes to the log; the analysis JSON
    # lists them) and scored as empty output
    assert metrics['chicken_4']['HOTA'] == 0.0 and metrics['chicken_4']['CLR_FN'] > 0
    analysis = json.loads((tmp_path / 'parallel_analysis.json').read_text())
    assert len(analysis['missing_results']) == 28 and analysis['per_video_hota']['share_below_20'] == 28 / 32
    assert 'chicken_4' in str(analysis['missing_results'])
    assert (tmp_path / 'cdf.png').stat().st_size > 5000


@needs_animaltrack
def test_animaltrack_ground_truth_frag_154():
    specs = [SequenceSpec(seq.name, seq.gt_path, seq.gt_path, seq.length) for seq in _animaltrack_specs()]
    combined = evaluate(specs, 'vastmat', workers=2)['COMBINED']
    assert combined['HOTA'] == combined['MOTA'] == combined['IDF1'] == 1.0
    assert combined['Frag'] == 154


def _animaltrack_specs():
    from vastmat.datasets.sequences import list_sequences, load_sequence
    for name in list_sequences(ANIMALTRACK):
        seq = load_sequence(ANIMALTRACK, name, with_gt=False)
        yield SequenceSpec(name, osp.join(seq.directory, 'gt', 'gt.txt'), '', seq.length)


def _write(path, rows):
    path.write_text(''.join(','.join(str(v) for v in row) + '\n' for row in rows))
    return str(path)


def test_vastmat_preset_ignores_valid0_rows(tmp_path):
    # frame 1: a valid animal (id 1) and an ignored one (id 2); frame 2: only the valid one
    gt = _write(tmp_path / 'gt.txt', [(1, 1, 10, 10, 20, 20, 1, 5, 1), (1, 2, 100, 100, 20, 20, 0, 5, 1),
                                     (2, 1, 12, 10, 20, 20, 1, 5, 1)])
    # the tracker finds both animals in frame 1 and misses frame 2
    res = _write(tmp_path / 'res.txt', [(1, 7, 10, 10, 20, 20, 0.9, -1, -1, -1),
                                       (1, 8, 100.5, 100, 20, 20, 0.8, -1, -1, -1)])
    out = evaluate([SequenceSpec('v', gt, res, 2)], 'vastmat')['v']
    # the box on the ignored animal is neither a TP nor an FP; the ignored row is not an FN
    assert (out['CLR_TP'], out['CLR_FP'], out['CLR_FN'], out['GT_Dets']) == (1, 0, 1, 2)
    assert out['MOTA'] == pytest.approx(0.5)


def test_float_boxes_are_kept(tmp_path):
    gt = _write(tmp_path / 'gt.txt', [(1, 1, 10.4, 10.4, 20.2, 20.2, 1, 5, 1)])
    res = _write(tmp_path / 'res.txt', [(1, 3, 10.4, 10.4, 20.2, 20.2, 1, -1, -1, -1)])
    out = evaluate([SequenceSpec('v', gt, res, 1)], 'vastmat')['v']
    assert out['LocA'] == pytest.approx(1.0, abs=1e-12)  # truncating the ground truth to ints would lower it


def test_malformed_result_names_file_and_line(tmp_path):
    gt = _write(tmp_path / 'gt.txt', [(1, 1, 10, 10, 20, 20, 1, 5, 1)])
    res = _write(tmp_path / 'res.txt', [(1, 3, 10, 10, 20, 20, 1, -1, -1, -1), (1, 4, 10, 10, 'nan', 20, 1, -1, -1,
                                                                              -1)])
    with pytest.raises(FormatError, match=r'res.txt:2: column 5 is nan'):
        evaluate([SequenceSpec('v', gt, res, 1)], 'vastmat')
    res2 = _write(tmp_path / 'res2.txt', [(3, 3, 10, 10, 20, 20, 1, -1, -1, -1)])
    with pytest.raises(FormatError, match=r'res2.txt:1: frame 3 is past seqLength 1'):
        evaluate([SequenceSpec('v', gt, res2, 1)], 'vastmat')


def test_per_video_statistics_and_thirds():
    results = {f'v{i}': {'HOTA': h} for i, h in enumerate([0.1, 0.3, 0.5, 0.7, 0.9])}
    results['COMBINED'] = {'HOTA': 0.5}
    stats = per_video_hota_stats(results)
    assert stats['mean'] == pytest.approx(0.5) and stats['median'] == pytest.approx(0.5)
    assert stats['iqr'] == pytest.approx(0.4) and stats['p10'] == pytest.approx(0.18)
    assert stats['share_below_20'] == pytest.approx(0.2) and stats['share_below_40'] == pytest.approx(0.4)
    other = {k: {'HOTA': 1 - v['HOTA'] if k in ('v0', 'v1') else v['HOTA']} for k, v in results.items()}
    thirds = difficulty_thirds({'a': results, 'b': other})
    # mean HOTA: v0 .5, v1 .5, v2 .5, v3 .7, v4 .9 -> ranked v4, v3, then ties by name v0, v1, v2
    assert thirds == {'Easy': ['v4', 'v3'], 'Medium': ['v0', 'v1'], 'Hard': ['v2']}


def test_compare_runs(tmp_path, capfd):
    runs = []
    for name, hota, idsw in (('a', 0.5, 10), ('b', 0.7, 30), ('c', 0.6, 20)):
        (tmp_path / name).mkdir()
        (tmp_path / name / 'metrics.json').write_text(json.dumps({'COMBINED': {'HOTA': hota, 'IDSW': idsw}}))
        runs.append(str(tmp_path / name / 'metrics.json'))
    csv_path = tmp_path / 'table.csv'
    tool('tools/analysis/compare_runs.py', *runs, '--metrics', 'HOTA', 'IDSW', '--csv', csv_path)
    printed = ''.join(capfd.readouterr())  # stdout and stderr (warnings)
    lines = csv_path.read_text().splitlines()
    assert lines[0] == 'run,HOTA,IDSW,HOTA_rank,IDSW_rank'
    assert lines[1:] == ['a,0.5,10,3,1', 'b,0.7,30,1,3', 'c,0.6,20,2,2']
    assert '70.000' in printed


def test_compare_runs_reference_table_pairs_the_videos(tmp_path):
    """--reference: each run's COMBINED HOTA on the chosen videos and its paired-bootstrap difference to the
    reference: CEM on TUD against itself exactly 0, a copy with halved true positives on one video below it in every
    resample, and one video alone its own HOTA."""
    from vastmat.utils.errors import UserInputError
    ours = evaluate(mot_specs('MOT15-TUD', 'CEM'), 'mot15')
    worse = {k: dict(v) for k, v in ours.items()}
    worse['TUD-Stadtmitte']['HOTA_TP_per_alpha'] = [x / 2 for x in worse['TUD-Stadtmitte']['HOTA_TP_per_alpha']]
    paths = []
    for name, data in (('cem', ours), ('again', ours), ('worse', worse)):
        paths.append(str(tmp_path / f'{name}.json'))
        (tmp_path / f'{name}.json').write_text(json.dumps(data))
    result = tool('tools/analysis/compare_runs.py', *paths, '--names', 'cem', 'again', 'worse', '--reference', 'cem',
                  '--bootstrap', '100')
    rows = {row['name']: row for row in result['paired']['rows']}
    assert result['paired']['videos'] == ['TUD-Campus', 'TUD-Stadtmitte']
    assert rows['cem']['HOTA'] == ours['COMBINED']['HOTA'] and rows['again']['difference'] == 0.0
    assert (rows['again']['low'], rows['again']['high'], rows['again']['share_better']) == (0.0, 0.0, 0.0)
    assert rows['worse']['difference'] < 0 and rows['worse']['high'] <= 0 and rows['worse']['share_better'] == 0.0
    one = tool('tools/analysis/compare_runs.py', *paths, '--names', 'cem', 'again', 'worse', '--reference', 'worse',
               '--videos', 'TUD-Campus')['paired']
    assert one['rows'][0]['HOTA'] == pytest.approx(ours['TUD-Campus']['HOTA'], abs=1e-12)
    assert one['rows'][0]['difference'] == 0.0  # Campus is the same in both
    with pytest.raises(UserInputError, match='--reference nope: not one of the --names'):
        tool('tools/analysis/compare_runs.py', *paths, '--names', 'cem', 'again', 'worse', '--reference', 'nope')
    with pytest.raises(UserInputError, match='cem: no per-video results for TUD-Nope'):
        tool('tools/analysis/compare_runs.py', *paths, '--names', 'cem', 'again', 'worse', '--reference', 'cem',
             '--videos', 'TUD-Nope')


def test_difficulty_groups_tool(demo_root, tmp_path):
    from vastmat.datasets.formats import read_gt, write_results, TrackResults
    from vastmat.datasets.sequences import list_sequences, load_sequence
    perfect, degraded = tmp_path / 'perfect', tmp_path / 'degraded'
    names = list_sequences(demo_root)
    for k, name in enumerate(names):
        gt = read_gt(osp.join(load_sequence(demo_root, name, with_gt=False).directory, 'gt', 'gt.txt'))
        valid = gt.select(gt.valid == 1)
        full = TrackResults(valid.frames, valid.ids, valid.boxes, np.ones(len(valid)), valid.line_numbers)
        write_results(str(perfect / f'{name}.txt'), full)
        keep = valid.frames <= 12 - k  # the later the video in the list, the more frames the tracker misses
        write_results(str(degraded / f'{name}.txt'), TrackResults(
            valid.frames[keep], valid.ids[keep], valid.boxes[keep], np.ones(int(keep.sum())), valid.line_numbers[keep]))
    out = tmp_path / 'thirds.json'
    tool('tools/analysis/difficulty_groups.py', '--gt-root', demo_root, '--results', perfect, degraded,
         '--out', out, '--plot', tmp_path / 'cdf.png')
    report = json.loads(out.read_text())
    assert [len(report['levels'][lv]) for lv in ('Easy', 'Medium', 'Hard')] == [4, 4, 3]
    assert set(report['levels']['Hard']) == set(names[-3:])  # the videos with the most frames missed
    assert report['trackers']['perfect']['Hard']['HOTA'] == pytest.approx(1.0)
    assert report['trackers']['degraded']['Easy']['HOTA'] > report['trackers']['degraded']['Hard']['HOTA']
