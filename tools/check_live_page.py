#!/usr/bin/python3
"""Opens jetagent's live view (`run --serve`) in headless chromium and checks it while it runs.

    tools/check_live_page.py URL [--screenshot OUT.png] [--charts N] [--seconds S]
                             [--streams NAME,NAME...]

A live page never finishes loading (its video and event stream go on), so chromium is driven
through its DevTools protocol on a pipe (--remote-debugging-pipe) instead of --dump-dom: the
script opens URL, reads the page's own record of itself on <body> (src/agent/live/live_page.cpp) every
half second, and collects every console message and uncaught exception. Passes (exit 0) when,
within S seconds (default 30),
  - the page finished setting up (data-done) and drew N charts (data-charts-drawn and
    data-charts-expected, default 3),
  - the charts were updated by at least 3 status events after that (data-updates,
    data-chart-updates),
  - the video element received frames: its picture changed at least twice (data-video-frames),
  - with --streams, the stream table shows a row for each of those streams (data-stream-rows,
    data-stream-names),
  - the page recorded no error (data-errors) and chromium reported no console error, warning or
    exception,
  - the screenshot is a PNG larger than a blank page would be.
Fails (exit 1) with one line per problem; exit 77 (CTest's skip) when no chromium is installed.
Standard library only.
"""

import argparse
import base64
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

SKIP = 77
MIN_PNG_BYTES_PER_KILOPIXEL = 10
WINDOW = (1280, 2300)


class DevTools:
    """Chromium's DevTools protocol over --remote-debugging-pipe: JSON messages ending in NUL,
    commands on the child's fd 3, answers and events from its fd 4."""

    def __init__(self, chromium, profile):
        to_child_read, self._to_child = os.pipe()
        self._from_child, from_child_write = os.pipe()

        def arrange_fds():
            os.dup2(to_child_read, 3)
            os.dup2(from_child_write, 4)

        command = [
            chromium, '--headless', '--disable-gpu', '--no-sandbox', '--remote-debugging-pipe',
            f'--user-data-dir={profile}', '--no-first-run', '--no-default-browser-check',
            '--disable-extensions', '--disable-sync', '--disable-background-networking',
            '--disable-component-update', '--mute-audio', '--hide-scrollbars',
            f'--window-size={WINDOW[0]},{WINDOW[1]}', 'about:blank',
        ]
        self.process = subprocess.Popen(command, preexec_fn=arrange_fds, pass_fds=(3, 4),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_read)
        os.close(from_child_write)
        self._buffer = b''
        self._next_id = 0
        self.events = []

    def _read_message(self, deadline):
        while b'\0' not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError('chromium did not answer')
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise EOFError('chromium closed its DevTools pipe')
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b'\0', 1)
        return json.loads(message)

    def call(self, method, params=None, session=None, timeout=20):
        self._next_id += 1
        request = {'id': self._next_id, 'method': method, 'params': params or {}}
        if session:
            request['sessionId'] = session
        os.write(self._to_child, json.dumps(request).encode() + b'\0')
        deadline = time.monotonic() + timeout
        while True:
            message = self._read_message(deadline)
            if message.get('id') == self._next_id:
                if 'error' in message:
                    raise RuntimeError(f'{method}: {message["error"]}')
                return message.get('result', {})
            self.events.append(message)

    def close(self):
        try:
            self.call('Browser.close', timeout=5)
        except (OSError, EOFError, TimeoutError, RuntimeError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def find_chromium():
    for candidate in [os.environ.get('CHROMIUM'), 'chromium', 'chromium-browser']:
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def console_problems(events):
    """Console errors and warnings, uncaught exceptions and error log entries of the page."""
    problems = []
    for event in events:
        method, params = event.get('method'), event.get('params', {})
        if method == 'Runtime.consoleAPICalled' and params.get('type') in ('error', 'warning',
                                                                            'assert'):
            text = ' '.join(str(a.get('value', a.get('description', ''))) for a in
                            params.get('args', []))
            problems.append(f'console.{params.get("type")}: {text}')
        elif method == 'Runtime.exceptionThrown':
            details = params.get('exceptionDetails', {})
            text = details.get('exception', {}).get('description') or details.get('text')
            problems.append(f'uncaught exception: {text}')
        elif method == 'Log.entryAdded':
            entry = params.get('entry', {})
            if entry.get('level') in ('error', 'warning'):
                problems.append(f'console {entry.get("level")}: {entry.get("text")} '
                                f'({entry.get("url", "")})')
    return problems


def page_state(tools, session):
    result = tools.call('Runtime.evaluate', {
        'expression': 'JSON.stringify(Object.assign({}, document.body.dataset))',
        'returnByValue': True}, session)
    return json.loads(result.get('result', {}).get('value') or '{}')


def number(state, key):
    try:
        return int(state.get(key, '0'))
    except ValueError:
        return 0


def missing_streams(state, streams):
    """The streams of `streams` that the page's stream table has no row for."""
    shown = state.get('streamNames', '').split()
    return [name for name in streams if name not in shown]


def check(tools, url, charts, seconds, screenshot, streams):
    problems = []
    target = tools.call('Target.createTarget', {'url': 'about:blank'})['targetId']
    session = tools.call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
    for domain in ('Runtime', 'Log', 'Page'):
        tools.call(f'{domain}.enable', None, session)
    tools.call('Page.navigate', {'url': url}, session)
    deadline = time.monotonic() + seconds
    state = {}
    updates_at_setup = None
    while time.monotonic() < deadline:
        time.sleep(0.5)
        state = page_state(tools, session)
        drawn = number(state, 'chartsDrawn')
        if state.get('done') == 'true' and drawn >= charts and updates_at_setup is None:
            updates_at_setup = number(state, 'chartUpdates')
        if (updates_at_setup is not None and
                number(state, 'chartUpdates') >= updates_at_setup + 3 and
                number(state, 'updates') >= 3 and number(state, 'videoFrames') >= 2 and
                not missing_streams(state, streams)):
            break
    if state.get('done') != 'true':
        problems.append('the page did not finish setting up (no data-done)')
    expected, drawn = number(state, 'chartsExpected'), number(state, 'chartsDrawn')
    if drawn < charts or drawn != expected:
        problems.append(f'{drawn} of {expected} charts drawn, {charts} wanted')
    if updates_at_setup is None or number(state, 'chartUpdates') < updates_at_setup + 3:
        problems.append(f'the charts were not updated 3 times ({state.get("chartUpdates")} '
                        f'updates in all)')
    if number(state, 'updates') < 3:
        problems.append(f'{state.get("updates")} status events received, 3 wanted')
    if number(state, 'videoFrames') < 2:
        problems.append(f'the video element showed {state.get("videoFrames")} different '
                        f'pictures, 2 wanted')
    missing = missing_streams(state, streams)
    if missing:
        problems.append(f'the stream table has no row for {", ".join(missing)} '
                        f'({state.get("streamRows")} rows: {state.get("streamNames")!r})')
    if state.get('errors') != '0':
        problems.append(f'the page recorded {state.get("errors")} errors (data-errors)')
    shot = tools.call('Page.captureScreenshot', {'format': 'png'}, session)
    png = base64.b64decode(shot['data'])
    with open(screenshot, 'wb') as file:
        file.write(png)
    if png[:8] != b'\x89PNG\r\n\x1a\n':
        problems.append('the screenshot is not a PNG')
    else:
        width, height = struct.unpack('>II', png[16:24])
        if len(png) < MIN_PNG_BYTES_PER_KILOPIXEL * width * height // 1000:
            problems.append(f'the screenshot has {len(png)} bytes: is the page blank?')
    problems += console_problems(tools.events)
    return problems, state


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('url')
    parser.add_argument('--screenshot', default='live.png', help='where the PNG goes')
    parser.add_argument('--charts', type=int, default=3, help='charts the page must draw')
    parser.add_argument('--seconds', type=float, default=30, help='how long the page may take')
    parser.add_argument('--streams', default='',
                        help='comma-separated stream names the stream table must show')
    args = parser.parse_args()
    name = f'check_live_page: {args.url}'
    chromium = find_chromium()
    if not chromium:
        print(f'{name}: SKIP: no chromium on PATH (Debian: apt install chromium)', file=sys.stderr)
        return SKIP
    if os.path.exists(args.screenshot):
        os.remove(args.screenshot)
    with tempfile.TemporaryDirectory(prefix='check-live-page-') as profile:
        tools = DevTools(chromium, profile)
        try:
            streams = [name for name in args.streams.split(',') if name]
            problems, state = check(tools, args.url, args.charts, args.seconds, args.screenshot,
                                    streams)
        except (OSError, EOFError, TimeoutError, RuntimeError) as error:
            problems, state = [f'driving chromium failed: {error}'], {}
        finally:
            tools.close()
    if problems:
        for problem in problems:
            print(f'{name}: {problem}', file=sys.stderr)
        return 1
    print(f'{name}: {state.get("chartsDrawn")} charts drawn and updated '
          f'{state.get("chartUpdates")} times, {state.get("updates")} status events, the video '
          f'changed {state.get("videoFrames")} times, {state.get("streamRows")} stream rows, '
          f'no errors; screenshot {args.screenshot}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
