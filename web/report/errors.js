(function () {
  'use strict';
  var body = document.body;
  var count = 0;
  body.dataset.errors = '0';
  function report(message) {
    count += 1;
    body.dataset.errors = String(count);
    var box = document.getElementById('page-errors');
    box.hidden = false;
    var item = document.createElement('li');
    item.textContent = String(message);
    box.querySelector('ul').appendChild(item);
  }
  window.jetagentPageError = report;
  window.addEventListener('error', function (event) {
    var file = event.filename ? event.filename.split('/').pop() : '';
    report('script error: ' + event.message + (file ? ' (' + file + ':' + event.lineno + ')' : ''));
  });
  window.addEventListener('unhandledrejection', function (event) {
    report('unhandled promise rejection: ' + event.reason);
  });
  document.addEventListener('securitypolicyviolation', function (event) {
    report('blocked fetch of ' + event.blockedURI + ' (the page must be self-contained)');
  });
  var consoleError = console.error;
  console.error = function () {
    report('console.error: ' + Array.prototype.map.call(arguments, String).join(' '));
    return consoleError.apply(console, arguments);
  };
})();
