#!/usr/bin/python3
"""Opens one of jetagent's offline HTML report pages in headless chromium and checks it.

    tools/check_html_page.py PAGE.html [--screenshot OUT.png] [--window-size 1280,4000]

Passes (exit 0) when
  - the page refers to no external file or URL (no src or href outside the page),
  - chromium loads it with the network unreachable, and the page's own script
    (src/app/html_report.cpp) records on <body> that it finished (data-done), drew every chart
    it set out to draw (data-charts-drawn == data-charts-expected > 0) and saw no error
    (data-errors == 0),
  - chromium logged no console message for the page,
  - the screenshot is a PNG of the window's size, larger than a blank page of that size would be.
Fails (exit 1) with one line per problem; exit 77 (CTest's skip) when no chromium is installed
(Debian: apt install chromium). Standard library only.
"""

import argparse
import html.parser
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

SKIP = 77
# A blank 1280x4000 page compresses to about 4.6 bytes per thousand pixels; a page with charts and
# tables to several times that.
MIN_PNG_BYTES_PER_KILOPIXEL = 10
CONSOLE_LINE = re.compile(r':CONSOLE(?:\(\d+\)|:\d+)?\] "(.*)", source: (.*)$')


class PageScan(html.parser.HTMLParser):
    """The <body> attributes, the page's error list and any reference to another file."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.body = None
        self.external = []
        self.errors = []
        self._in_error_list = 0

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == 'body' and self.body is None:
            self.body = attributes
        for name in ('src', 'href', 'srcset', 'data', 'poster', 'action'):
            value = (attributes.get(name) or '').strip()
            if value and not value.startswith(('#', 'data:')):
                self.external.append(f'<{tag} {name}="{value}">')
        if tag == 'div' and attributes.get('id') == 'page-errors':
            self._in_error_list = 1
        elif self._in_error_list and tag == 'li':
            self.errors.append('')

    def handle_endtag(self, tag):
        if tag == 'div' and self._in_error_list:
            self._in_error_list = 0

    def handle_data(self, data):
        if self._in_error_list and self.errors:
            self.errors[-1] += data


def scan(text):
    parser = PageScan()
    parser.feed(text)
    parser.close()
    return parser


def find_chromium():
    for candidate in [os.environ.get('CHROMIUM'), 'chromium', 'chromium-browser']:
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def run_chromium(chromium, page, screenshot, window, timeout):
    """The DOM after the page's scripts ran, chromium's log, and how long it took."""
    with tempfile.TemporaryDirectory(prefix='check-html-page-') as profile:
        command = [
            chromium, '--headless', '--disable-gpu',
            # The sandbox needs user namespaces, which containers and root (CI) do not give; the
            # page is a local file the build just wrote.
            '--no-sandbox',
            f'--user-data-dir={profile}', '--no-first-run', '--no-default-browser-check',
            '--disable-extensions', '--disable-sync', '--disable-background-networking',
            '--disable-component-update', '--mute-audio', '--hide-scrollbars',
            # No name resolves: a page that reaches for the network fails here as it would offline.
            '--host-resolver-rules=MAP * ~NOTFOUND',
            '--enable-logging=stderr', '--v=0',
            # Virtual time runs the page's timers to completion before the DOM is dumped.
            '--virtual-time-budget=5000',
            f'--window-size={window[0]},{window[1]}', f'--screenshot={screenshot}',
            '--dump-dom', 'file://' + os.path.abspath(page),
        ]
        start = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True, errors='replace',
                                timeout=timeout, check=False)
        return result, time.monotonic() - start


def png_size(path):
    with open(path, 'rb') as file:
        head = file.read(24)
    if len(head) < 24 or head[:8] != b'\x89PNG\r\n\x1a\n' or head[12:16] != b'IHDR':
        return None
    return struct.unpack('>II', head[16:24])


def check_dom(dom, problems):
    """The page's own record of its script; returns its counts for the summary line."""
    page = scan(dom)
    body = page.body or {}
    if body.get('data-done') != 'true':
        problems.append('the page script did not finish (no data-done on <body>)')
    expected, drawn, errors = (body.get(name) for name in
                               ('data-charts-expected', 'data-charts-drawn', 'data-errors'))
    if not (expected or '').isdigit() or int(expected) == 0:
        problems.append(f'the page expects no charts (data-charts-expected={expected!r})')
    elif drawn != expected:
        problems.append(f'{drawn} of {expected} charts drawn')
    if errors != '0':
        problems.append(f'the page recorded {errors} errors (data-errors)')
    for message in page.errors:
        problems.append('page error: ' + message.strip())
    return expected, drawn


def check_screenshot(screenshot, window, problems):
    if not os.path.isfile(screenshot):
        problems.append(f'chromium wrote no screenshot to {screenshot}')
        return
    size = png_size(screenshot)
    if size != window:
        problems.append(f'{screenshot} is not a {window[0]}x{window[1]} PNG ({size})')
    minimum = MIN_PNG_BYTES_PER_KILOPIXEL * window[0] * window[1] // 1000
    if os.path.getsize(screenshot) < minimum:
        problems.append(f'{screenshot} has {os.path.getsize(screenshot)} bytes, fewer than the '
                        f'{minimum} of a page with content: is it blank?')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('page')
    parser.add_argument('--screenshot', help='where the PNG goes (default: beside the page)')
    parser.add_argument('--window-size', default='1280,4000', help='WIDTH,HEIGHT in pixels')
    parser.add_argument('--chromium',
                        help='the browser to run (default: $CHROMIUM, else chromium on PATH)')
    parser.add_argument('--timeout', type=float, default=90, help='seconds chromium may take')
    args = parser.parse_args()
    name = f'check_html_page: {args.page}'
    try:
        window = tuple(int(part) for part in args.window_size.split(','))
        assert len(window) == 2 and min(window) > 0
    except (ValueError, AssertionError):
        print(f'{name}: --window-size must be WIDTH,HEIGHT, not {args.window_size!r}',
              file=sys.stderr)
        return 1
    try:
        with open(args.page, encoding='utf-8') as file:
            text = file.read()
    except (OSError, UnicodeDecodeError) as error:
        print(f'{name}: cannot read the page: {error}', file=sys.stderr)
        return 1
    problems = [f'refers to another file: {ref}' for ref in scan(text).external]

    chromium = shutil.which(args.chromium) if args.chromium else find_chromium()
    if args.chromium and not chromium:
        print(f'{name}: --chromium {args.chromium}: no such program', file=sys.stderr)
        return 1
    if not chromium:
        print(f'{name}: SKIP: no chromium on PATH (Debian: apt install chromium)', file=sys.stderr)
        return SKIP
    screenshot = args.screenshot or os.path.splitext(args.page)[0] + '.png'
    if os.path.exists(screenshot):
        os.remove(screenshot)
    try:
        result, seconds = run_chromium(chromium, args.page, screenshot, window, args.timeout)
    except subprocess.TimeoutExpired:
        print(f'{name}: chromium took more than {args.timeout:g} s', file=sys.stderr)
        return 1
    if result.returncode != 0:
        problems.append(f'chromium exited with {result.returncode}: {result.stderr[-2000:]}')
    for line in result.stderr.splitlines():
        console = CONSOLE_LINE.search(line)
        if console:
            problems.append(f'console: {console.group(1)} ({console.group(2)})')
    expected, drawn = check_dom(result.stdout, problems)
    check_screenshot(screenshot, window, problems)

    if problems:
        for problem in problems:
            print(f'{name}: {problem}', file=sys.stderr)
        return 1
    print(f'{name}: {drawn}/{expected} charts drawn, no script errors, no console messages; '
          f'screenshot {screenshot} ({os.path.getsize(screenshot) // 1024} KiB); '
          f'page {len(text.encode()) // 1024} KiB; chromium {seconds:.1f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
