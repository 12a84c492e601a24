// Draw every plotly figure of the page: a <div data-figure="ID"> is drawn from the JSON in the
// <script type="application/json" id="ID"> element (the figure as built by leaderboard/charts.py).
(function () {
  "use strict";
  var config = { displaylogo: false, responsive: true, typesetMath: false };

  function readFigure(id) {
    var element = document.getElementById(id);
    if (!element) { return null; }
    var figure = JSON.parse(element.textContent);
    // json_script of fig.to_json() holds a JSON string: decode it a second time.
    return typeof figure === "string" ? JSON.parse(figure) : figure;
  }

  function drawAll() {
    if (!window.Plotly) { return; }
    var targets = document.querySelectorAll("[data-figure]");
    Array.prototype.forEach.call(targets, function (target) {
      var figure = readFigure(target.getAttribute("data-figure"));
      if (figure) {
        window.Plotly.newPlot(target, figure.data || [], figure.layout || {}, config);
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", drawAll);
  } else {
    drawAll();
  }
})();
