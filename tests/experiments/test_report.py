"""The HTML report (tools/analysis/report.py, vastmat/experiments/report): built from a zoo run and a tools/test.py
run on the rendered demo videos, then opened in headless Chromium (Debian's, installed by tools/setup_env.sh): no
console errors, the tables hold table5.csv's numbers, a click sorts a column, the slider moves every clip's frame, a
heat-map click opens the video's rows. Screenshots are saved under the test's tmp dir."""
import csv
import os.path as osp
import re

import pytest

from helpers.common import REPO, tool


@pytest.fixture(scope='module')
def report_runs(demo_root, tmp_path_factory):
    """A zoo work dir (ByteTrack with its own matcher and CDA fixed, on simulated detections of the test videos) and a
    tools/test.py work dir (ByteTrack with CDA adaptive on the same detections)."""
    root = tmp_path_factory.mktemp('report_runs')
    dets = root / 'dets'
    tool('tools/data/simulate_detections.py', '--data-root', demo_root, '--out', dets, '--split', 'protocol1/test')
    zoo = root / 'zoo'
    tool('tools/zoo_benchmark.py', '--data-root', demo_root, '--det-root', dets, '--work-dir', zoo, '--trackers',
         'ByteTrack', '--matchers', 'original', 'cda_fixed')
    test = root / 'test_adaptive'
    tool('tools/test.py', osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets.py'), '--det-root', dets,
         '--data-root', demo_root, '--work-dir', test, '--matcher', 'cda_adaptive')
    return str(zoo), str(test)


@pytest.fixture(scope='module')
def report(report_runs, tmp_path_factory):
    out = str(tmp_path_factory.mktemp('report') / 'report.html')
    return tool('tools/analysis/report.py', *report_runs, '--out', out)


@pytest.mark.xdist_group('report')  # one worker makes the runs and the report
def test_the_zoo_writes_its_report_and_the_page_is_self_contained(report_runs, report):
    zoo, _ = report_runs
    assert osp.getsize(osp.join(zoo, 'report.html')) > 0  # make demo's page
    text = open(report['path'], encoding='utf-8').read()
    assert report['runs'] == 3 and report['videos'] == 3 and report['clips'] >= 2
    # offline: no script, style, image or link that the browser would fetch
    assert not re.search(r'<script[^>]+src=|<link[^>]+href=|src="https?:|url\(https?:', text)
    assert text.count('plotly.js v') == 1  # Plotly's JavaScript inline once, shared by every figure
    for heading in ('Tables', 'Per video', 'Analyses', 'Clips', 'Provenance'):
        assert f'>{heading}</h2>' in text
    # the tools/test.py run tracked the zoo's test videos: one heat map and one set of clips for all three runs
    assert text.count('class="heatmap"') == 1
    assert 'bytetrack_cached-dets' in text and 'ByteTrack + cda_fixed' in text


def test_unknown_work_dir_is_refused_naming_it(tmp_path):
    from vastmat.experiments.report import write_report
    from vastmat.utils.errors import UserInputError
    with pytest.raises(UserInputError, match=f'{tmp_path}: not a work dir of the zoo'):
        write_report([str(tmp_path)], str(tmp_path / 'r.html'))
    with pytest.raises(UserInputError, match='no such work dir'):
        write_report([str(tmp_path / 'absent')], str(tmp_path / 'r.html'))
    assert not osp.exists(tmp_path / 'r.html')


def _rows(driver, table):
    return [[cell.get_attribute('data-value') or cell.text for cell in row.find_elements('css selector', 'td')]
            for row in table.find_elements('css selector', 'tbody tr')]


@pytest.mark.xdist_group('report')  # one worker makes the runs and the report
def test_report_in_headless_chromium(report_runs, report, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    from vastmat.experiments.report.browser import find_chromium, headless_chromium, interactive_seconds
    from vastmat.experiments.report.page import format_cell
    if find_chromium() is None:
        pytest.skip('no Chromium and chromedriver here (tools/setup_env.sh installs Debian\'s chromium and '
                    'chromium-driver)')
    driver = headless_chromium()
    try:
        driver.get('file://' + osp.abspath(report['path']))
        driver.execute_script('return document.readyState')
        assert interactive_seconds(driver) > 0
        driver.save_screenshot(str(tmp_path / 'tables.png'))
        # Table 5 holds table5.csv's numbers: the exact value in data-value, the terminal's format on screen
        with open(osp.join(report_runs[0], 'table5.csv'), newline='') as f:
            expected = list(csv.DictReader(f))
        table5 = driver.find_element('id', 'table-0')
        headers = [th.text for th in table5.find_elements('css selector', 'thead th')]
        shown = {row[0]: dict(zip(headers[1:], row[1:])) for row in _rows(driver, table5)}
        texts = {row.find_element('css selector', 'td').text:
                 [td.text for td in row.find_elements('css selector', 'td')]
                 for row in table5.find_elements('css selector', 'tbody tr')}
        assert set(shown) == {row['tracker'] for row in expected} == {'ByteTrack'}
        for row in expected:
            for column in headers[1:]:
                assert float(shown[row['tracker']][column]) == float(row[column]), column
                assert texts[row['tracker']][headers.index(column)] == format_cell(column, row[column]), column
        # a click on a header sorts the rows by it, a second click the other way
        table8 = driver.find_element('id', 'table-1')
        hota = next(th for th in table8.find_elements('css selector', 'thead th') if th.text == 'HOTA')
        column = [th.text for th in table8.find_elements('css selector', 'thead th')].index('HOTA')
        hota.click()
        ascending = [float(row[column]) for row in _rows(driver, table8)]
        assert ascending == sorted(ascending) and hota.get_attribute('data-order') == 'asc'
        hota.click()
        assert [float(row[column]) for row in _rows(driver, table8)] == sorted(ascending, reverse=True)
        # the slider moves every clip image of its clip to the same frame
        clip = driver.find_element('css selector', '.clip')
        images = clip.find_elements('css selector', 'img')
        # the zoo's tracker with its own association and the tools/test.py run (the zoo's matcher runs: tables only)
        assert [img.get_attribute('data-run') for img in images] == ['ByteTrack', 'bytetrack_cached-dets']
        first = [img.get_attribute('src') for img in images]
        slider = clip.find_element('css selector', 'input[type=range]')
        driver.execute_script('arguments[0].scrollIntoView()', clip)
        ActionChains(driver).click_and_hold(slider).release().perform()
        slider.send_keys(Keys.HOME, Keys.ARROW_RIGHT, Keys.ARROW_RIGHT)
        assert slider.get_attribute('value') == '2'
        frames = driver.execute_script('return CLIPS[0].frames')
        assert clip.find_element('css selector', '.frame').text == str(frames[2])
        moved = [img.get_attribute('src') for img in images]
        assert moved == driver.execute_script('return arguments[0].map(r => CLIPS[0].images[r][2])',
                                              [img.get_attribute('data-run') for img in images])
        assert moved != first
        driver.save_screenshot(str(tmp_path / 'clips.png'))
        # a click on the heat map opens the video's per-run rows
        video = driver.execute_script(
            "const div = document.querySelector('.heatmap .plotly-graph-div'); const x = div.data[0].x[0];"
            "div.emit('plotly_click', {points: [{x: x}]}); return x;")
        details = driver.find_element('css selector', f'details[id$=":{video}"]')
        assert details.get_attribute('open') is not None
        assert len(details.find_elements('css selector', 'tbody tr')) == 3
        driver.save_screenshot(str(tmp_path / 'video_rows.png'))
        errors = [entry for entry in driver.get_log('browser') if entry['level'] == 'SEVERE']
        assert not errors, errors
    finally:
        driver.quit()
    for name in ('tables.png', 'clips.png', 'video_rows.png'):
        assert osp.getsize(tmp_path / name) > 0
