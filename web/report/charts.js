(function () {
  'use strict';
  var body = document.body;
  var drawn = 0;
  function afterLabel(context) {
    var notes = context.dataset.notes;
    return notes ? notes[context.dataIndex] : '';
  }
  function painted(canvas) {
    var pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    for (var i = 3; i < pixels.length; i += 4) {
      if (pixels[i] !== 0) return true;
    }
    return false;
  }
  try {
    if (typeof Chart !== 'function') throw new Error('Chart.js did not load');
    Chart.defaults.animation = false;
    Chart.defaults.responsive = false;
    var specs = JSON.parse(document.getElementById('report-charts').textContent);
    specs.forEach(function (spec) {
      try {
        var canvas = document.getElementById(spec.id);
        if (!canvas) throw new Error('its canvas is missing');
        var options = spec.config.options = spec.config.options || {};
        options.animation = false;
        options.responsive = false;
        options.plugins = options.plugins || {};
        options.plugins.tooltip = options.plugins.tooltip || {};
        options.plugins.tooltip.callbacks = { afterLabel: afterLabel };
        var chart = new Chart(canvas, spec.config);
        if (!chart || !painted(canvas)) throw new Error('nothing was drawn');
        canvas.dataset.drawn = 'true';
        drawn += 1;
      } catch (error) {
        window.jetagentPageError('chart ' + spec.id + ': ' + error.message);
      }
    });
  } catch (error) {
    window.jetagentPageError('charts: ' + error.message);
  }
  body.dataset.chartsDrawn = String(drawn);
  body.dataset.done = 'true';
})();
