// Submission page: draw the confusion heatmaps and follow the status until scoring ends.
(function () {
  "use strict";
  function draw(targetId, dataId) {
    var target = document.getElementById(targetId);
    var data = document.getElementById(dataId);
    if (!target || !data || !window.Plotly) { return; }
    var figure = JSON.parse(JSON.parse(data.textContent));
    if (!figure) { return; }
    window.Plotly.newPlot(target, figure.data, figure.layout, { displaylogo: false, responsive: true });
  }
  draw("confusion-raw", "confusion-raw-data");
  draw("confusion-calibrated", "confusion-calibrated-data");

  var status = document.getElementById("submission-status");
  if (status && (status.textContent === "queued" || status.textContent === "scoring")) {
    var poll = function () {
      fetch(status.dataset.url, { headers: { Accept: "application/json" } })
        .then(function (response) { return response.json(); })
        .then(function (body) {
          if (body.status === "scored" || body.status === "failed") { window.location.reload(); }
          else { status.textContent = body.status; window.setTimeout(poll, 2000); }
        })
        .catch(function () { window.setTimeout(poll, 5000); });
    };
    window.setTimeout(poll, 1500);
  }
})();
