(function () {
  'use strict';
  const body = document.body;
  const errorBox = document.getElementById('page-errors');
  function fail(message) {
    body.dataset.errors = String(Number(body.dataset.errors) + 1);
    const item = document.createElement('li');
    item.textContent = String(message);
    errorBox.querySelector('ul').appendChild(item);
    errorBox.hidden = false;
  }
  window.addEventListener('error', (e) => fail(e.message));
  window.addEventListener('unhandledrejection', (e) => fail(e.reason));
  const consoleError = console.error.bind(console);
  console.error = function (...args) { fail(args.join(' ')); consoleError(...args); };

  const token = new URLSearchParams(location.search).get('token');
  function withToken(path) {
    return token ? path + (path.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(token)
                 : path;
  }
  const colours = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
    '#ff9da7', '#9c755f', '#bab0ac'];
  const maxPoints = 600;
  function text(tag, content, cls) {
    const e = document.createElement(tag);
    e.textContent = content === null || content === undefined ? '-' : String(content);
    if (cls) e.className = cls;
    return e;
  }
  function table(headings, rows) {
    const t = document.createElement('table');
    const head = t.insertRow();
    headings.forEach((h) => head.appendChild(text('th', h)));
    rows.forEach((r) => {
      const row = t.insertRow();
      r.forEach((c, i) => row.appendChild(text('td', c, i === 1 && typeof c === 'string' ? 'text' : '')));
    });
    return t;
  }
  function fixed(v, digits) { return v === null || v === undefined ? null : Number(v).toFixed(digits); }

  function makeChart(id, unit) {
    return new Chart(document.getElementById(id), {
      type: 'line',
      data: { labels: [], datasets: [] },
      options: {
        animation: false, responsive: false, normalized: true,
        plugins: { legend: { position: 'right' } },
        scales: { x: { title: { display: true, text: 'seconds since start' },
                       ticks: { maxTicksLimit: 12 } },
                  y: { title: { display: true, text: unit } } },
      },
    });
  }
  const charts = [
    { chart: makeChart('chart-latency', 'ms'), values: 'latency_ms', names: 'tasks' },
    { chart: makeChart('chart-power', 'W'), values: 'rails_w', names: 'rails' },
    { chart: makeChart('chart-temps', '\u00b0C'), values: 'zones_c', names: 'zones' },
  ];
  function addPoint(point) {
    for (const c of charts) {
      const names = (point.names && point.names[c.names]) || [];
      const sets = c.chart.data.datasets;
      names.forEach((name, i) => {
        if (!sets[i]) {
          sets.push({ label: name, data: c.chart.data.labels.map(() => null),
            borderColor: colours[i % colours.length], backgroundColor: colours[i % colours.length],
            pointRadius: 0, borderWidth: 1.5, spanGaps: true });
        }
        sets[i].label = name;
      });
      c.chart.data.labels.push(Number(point.t_s).toFixed(0));
      sets.forEach((set, i) => {
        const v = point[c.values] ? point[c.values][i] : null;
        set.data.push(v === undefined ? null : v);
      });
      if (c.chart.data.labels.length > maxPoints) {
        c.chart.data.labels.shift();
        sets.forEach((set) => set.data.shift());
      }
    }
  }
  function redraw() {
    let expected = 0;
    let drawn = 0;
    for (const c of charts) {
      c.chart.update('none');
      if (c.chart.data.datasets.length === 0) continue;
      expected += 1;
      const points = c.chart.data.datasets.some((s) => s.data.some((v) => v !== null));
      if (points && c.chart.getDatasetMeta(0).data.length > 0) drawn += 1;
    }
    body.dataset.chartsExpected = String(expected);
    body.dataset.chartsDrawn = String(drawn);
    body.dataset.chartUpdates = String(Number(body.dataset.chartUpdates) + 1);
  }

  // Per task over several streams: a table with a row per stream, its batching in the caption.
  // Records on <body> the rows shown (data-stream-rows) and their streams (data-stream-names).
  function renderStreams(tasks) {
    const section = document.getElementById('streams-section');
    const tables = [];
    const names = [];
    let rows = 0;
    tasks.filter((t) => Array.isArray(t.streams) && t.streams.length).forEach((t) => {
      const b = t.batching || {};
      const headings = ['stream', 'frames', 'fps', 'dropped', 'failed', 'e2e p50 / p99 ms', 'top-1'];
      const t1 = table(headings, t.streams.map((r) => {
          names.push(r.name);
          const e = r.end_to_end_ms || {};
        return [r.name, r.frames, fixed(r.fps, 1), r.dropped, r.failed,
          [e.p50, e.p99].map((v) => fixed(v, 2)).join(' / '),
          r.top1 === null || r.top1 === undefined ? null : (100 * r.top1).toFixed(1) + '%'];
      }));
      rows += t.streams.length;
      const caption = t1.createCaption();
      caption.textContent = t.name + ': batch ' + (b.batch_size === null ? '-' : b.batch_size) +
        ', mean fill ' + (b.mean_fill === null ? '-' : (100 * b.mean_fill).toFixed(0) + '%') +
        ', ' + b.batches + ' batches, ' + b.multi_stream + ' of several streams, ' + b.waited +
        ' waited, ' + b.timed_out + ' timed out' +
        (b.timeout_ms === null ? '' : ' (timeout ' + fixed(b.timeout_ms, 1) + ' ms)');
      tables.push(t1);
    });
    document.getElementById('streams').replaceChildren(...tables);
    section.hidden = tables.length === 0;
    body.dataset.streamRows = String(rows);
    body.dataset.streamNames = names.join(' ');
  }

  // The video at its own aspect (a mosaic of several streams is wider or taller than a frame),
  // 640 to 960 pixels wide.
  function sizeVideo(v) {
    if (!v.width || !v.height) return;
    const width = Math.min(Math.max(v.width, 640), 960);
    const height = Math.round(v.height * width / v.width);
    if (video.width !== width || video.height !== height) {
      video.width = width;
      video.height = height;
    }
  }

  function render(s) {
    const run = s.run || {};
    const source = run.source || {};
    const context = run.context || {};
    const streams = run.streams || [];
    const what = streams.length > 1
      ? streams.length + ' streams (' + streams.map((x) => x.name).join(', ') + ')'
      : (source.uri || '?') + ' ' + (source.width || '?') + 'x' + (source.height || '?');
    document.getElementById('context').textContent =
      (s.running ? 'running' : 'not running') + ' | ' + what + ' ' +
      (source.pacing || '') + ' | ' + [context.host, context.cpu, context.os].filter((x) => x).join(', ') +
      ' | jetagent ' + (run.jetagent_version || '') +
      ' | up ' + fixed(s.uptime_s, 0) + ' s';
    const rows = (s.tasks || []).map((t) => {
      const l = t.latest;
      const top = l ? l.top.slice(0, 3).map((x) => x.label + ' ' + fixed(x.score, 2)).join(', ') : 'waiting';
      const st = l ? l.stages_ms : {};
      const r = t.rolling || {};
      return [t.name, top, l ? fixed(l.end_to_end_ms, 2) : null,
        l ? [st.wait, st.preprocess, st.inference, st.postprocess].map((v) => fixed(v, 2)).join(' / ') : null,
        [r.p50_ms, r.p90_ms, r.p99_ms, r.max_ms].map((v) => fixed(v, 2)).join(' / '),
        t.fps, t.frames, t.dropped, t.deadline_misses, t.failed];
    });
    const tasks = document.getElementById('tasks');
    tasks.replaceChildren(table(['task', 'latest result', 'e2e ms',
      'wait / pre / infer / post ms', 'p50 / p90 / p99 / max ms', 'fps', 'frames', 'dropped',
      'deadline misses', 'failed'], rows));
    renderStreams(s.tasks || []);
    if (s.power) {
      const p = s.power;
      // A total that is one of the rails is marked on its row; an estimate gets a row of its own.
      const rails = p.rails.map((r) => [r.name + (!p.total_is_estimate && r.name === p.total_name ? ' (total)' : ''),
        r.online ? fixed(r.w, 3) : 'offline']);
      const totalIsARail = !p.total_is_estimate && p.rails.some((r) => r.name === p.total_name);
      document.getElementById('power').replaceChildren(table(['rail', 'W'], totalIsARail ? rails
        : [[p.total_name + (p.total_is_estimate ? ' (sum)' : ' (total)'), fixed(p.total_w, 3)]].concat(rails)));
    }
    if (s.temperatures && s.temperatures.length) {
      document.getElementById('temps').replaceChildren(table(['zone', '\u00b0C'],
        s.temperatures.map((z) => [z.zone, z.online ? fixed(z.celsius, 1) : 'offline'])));
    }
    const v = s.video || {};
    sizeVideo(v);
    document.getElementById('video-stats').textContent = 'video ' + v.width + 'x' + v.height +
      ': ' + v.frames_encoded + ' encoded, ' + v.frames_sent + ' sent, ' +
      v.frames_skipped_for_slow_clients + ' skipped for slow clients, ' + v.clients + '/' +
      v.max_clients + ' clients (' + v.clients_refused + ' refused), encoder ' +
      (v.encoder_core_percent === null ? '-' : fixed(v.encoder_core_percent, 2)) + '% of a core';
  }

  // The video: a still-changing <img>. Set only after the page has loaded, since a never-ending
  // multipart response would otherwise hold the load event back. Whether frames arrive is seen
  // by drawing it small once a second and comparing.
  const video = document.getElementById('video');
  const probe = document.createElement('canvas');
  probe.width = 160;
  probe.height = 120;
  let lastSum = null;
  function watchVideo() {
    if (!video.naturalWidth) return;
    const g = probe.getContext('2d', { willReadFrequently: true });
    g.drawImage(video, 0, 0, probe.width, probe.height);
    const pixels = g.getImageData(0, 0, probe.width, probe.height).data;
    let sum = 0;
    for (let i = 0; i < pixels.length; i += 1) sum = (sum * 31 + pixels[i]) >>> 0;
    if (sum !== lastSum) body.dataset.videoFrames = String(Number(body.dataset.videoFrames) + 1);
    lastSum = sum;
  }

  function start() {
    video.src = withToken('/video.mjpg');
    setInterval(watchVideo, 500);
    fetch(withToken('/api/history'))
      .then((r) => { if (!r.ok) throw new Error('/api/history: HTTP ' + r.status); return r.json(); })
      .then((h) => {
        h.points.forEach(addPoint);
        redraw();
        const events = new EventSource(withToken('/api/events'));
        events.addEventListener('status', (e) => {
          const s = JSON.parse(e.data);
          render(s);
          addPoint(s.point);
          redraw();
          body.dataset.updates = String(Number(body.dataset.updates) + 1);
        });
        // The browser reconnects by itself; the note stays until it has.
        const connection = document.getElementById('connection');
        events.addEventListener('open', () => { connection.textContent = ''; });
        events.addEventListener('error', () => { connection.textContent = ' (disconnected; retrying)'; });
        body.dataset.done = 'true';
      })
      .catch((e) => fail(e));
  }
  if (document.readyState === 'complete') start();
  else window.addEventListener('load', start);
}());
