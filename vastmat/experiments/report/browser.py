"""Headless Chromium through Selenium, to check a report as a person sees it (its test and its benchmark): Debian's
``chromium`` and ``chromium-driver`` packages (installed by tools/setup_env.sh), never a downloaded browser."""
from __future__ import annotations

import os
import shutil
from typing import Any

CHROMIUM_BINARIES = ('chromium', 'chromium-browser', 'google-chrome')
WINDOW = (1400, 1000)


def find_chromium() -> tuple[str, str] | None:
    """``(browser, driver)`` paths (``$VASTMAT_CHROMIUM`` / ``$VASTMAT_CHROMEDRIVER`` first), or None when absent."""
    browser = os.environ.get('VASTMAT_CHROMIUM') or next(
        (path for path in map(shutil.which, CHROMIUM_BINARIES) if path), None)
    driver = os.environ.get('VASTMAT_CHROMEDRIVER') or shutil.which('chromedriver')
    return (browser, driver) if browser and driver else None


def headless_chromium(paths: tuple[str, str] | None = None) -> Any:
    """A Selenium WebDriver of headless Chromium that keeps the page's console messages (``get_log('browser')``).

    Raises:
        RuntimeError: no Chromium or chromedriver is installed.
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    paths = paths or find_chromium()
    if paths is None:
        raise RuntimeError('no Chromium and chromedriver (Debian: apt-get install chromium chromium-driver; '
                           'tools/setup_env.sh installs them)')
    options = webdriver.ChromeOptions()
    for argument in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
                     f'--window-size={WINDOW[0]},{WINDOW[1]}', '--disable-extensions', '--no-first-run'):
        options.add_argument(argument)
    options.binary_location = paths[0]
    options.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
    return webdriver.Chrome(service=Service(paths[1]), options=options)


def interactive_seconds(driver: Any) -> float:
    """Seconds from the start of navigation until the page and its scripts finished loading (``loadEventEnd``)."""
    timing = driver.execute_script('const t = performance.getEntriesByType("navigation")[0]; '
                                   'return [t.startTime, t.loadEventEnd];')
    return (timing[1] - timing[0]) / 1000
