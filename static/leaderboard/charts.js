// Draw every plotly figure of the page: a <div data-figure="ID"> is drawn from the JSON in the
// <script type="application/json" id="ID"> element (the figure as built by leaderboard/charts.py).
// This script is loaded with `defer` and its tag's data-plotly names plotly.js, which it loads
// itself, after DOMContentLoaded: deferred scripts run before that event, so a deferred
// plotly.js tag (4.8 MB of JavaScript to parse and run) held every chart page's DOMContentLoaded
// back by its run time; loaded from here, the page is ready first and the charts follow.
// Each figure downloads as PNG (the modebar's camera) or SVG (a modebar button of ours), named
// after the div's data-filename; buttons in an element with data-image-downloads="DIV-ID" do
// the same from the page, and are shown once their figure is drawn.
(function () {
  "use strict";
  var baseConfig = { displaylogo: false, responsive: true, typesetMath: false };
  var plotlyUrl = document.currentScript ? document.currentScript.getAttribute("data-plotly") : null;

  function readFigure(id) {
    var element = document.getElementById(id);
    if (!element) { return null; }
    var figure = JSON.parse(element.textContent);
    // json_script of fig.to_json() holds a JSON string: decode it a second time.
    return typeof figure === "string" ? JSON.parse(figure) : figure;
  }

  function filenameOf(target) {
    return target.getAttribute("data-filename") || target.id || "figure";
  }

  // The image at the size drawn on the page; PNG at twice the pixels, for print and slides.
  function downloadImage(target, format) {
    var size = target._fullLayout || {};
    return window.Plotly.downloadImage(target, {
      format: format,
      filename: filenameOf(target),
      width: size.width,
      height: size.height,
      scale: format === "png" ? 2 : 1
    });
  }

  function configFor(target) {
    var config = Object.assign({}, baseConfig);
    config.toImageButtonOptions = { format: "png", filename: filenameOf(target), scale: 2 };
    config.modeBarButtonsToAdd = [{
      name: "downloadSvg",
      title: "Download plot as an SVG",
      icon: window.Plotly.Icons.disk,
      click: function (graph) { downloadImage(graph, "svg"); }
    }];
    return config;
  }

  function enableButtons(target) {
    var groups = document.querySelectorAll('[data-image-downloads="' + target.id + '"]');
    Array.prototype.forEach.call(groups, function (group) {
      Array.prototype.forEach.call(group.querySelectorAll("[data-download-format]"), function (button) {
        button.addEventListener("click", function () {
          downloadImage(target, button.getAttribute("data-download-format"));
        });
      });
      group.hidden = false;
    });
  }

  function drawAll() {
    if (!window.Plotly) { return; }
    var targets = document.querySelectorAll("[data-figure]");
    Array.prototype.forEach.call(targets, function (target) {
      var figure = readFigure(target.getAttribute("data-figure"));
      if (figure) {
        window.Plotly.newPlot(target, figure.data || [], figure.layout || {}, configFor(target))
          .then(function () { enableButtons(target); });
      }
    });
  }

  // An inserted script loads asynchronously: it never delays DOMContentLoaded.
  function withPlotly(callback) {
    if (window.Plotly) { callback(); return; }
    if (!plotlyUrl) { return; }
    var script = document.createElement("script");
    script.src = plotlyUrl;
    script.addEventListener("load", callback);
    document.head.appendChild(script);
  }

  function start() {
    if (document.querySelector("[data-figure]")) { withPlotly(drawAll); }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
