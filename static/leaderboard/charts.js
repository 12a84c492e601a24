// Draw every plotly figure of the page: a <div data-figure="ID"> is drawn from the JSON in the
// <script type="application/json" id="ID"> element (the figure as built by leaderboard/charts.py).
// This script is loaded with `defer` and its tag's data-plotly names plotly.js, which it loads
// itself, after DOMContentLoaded: deferred scripts run before that event, so a deferred
// plotly.js tag (4.8 MB of JavaScript to parse and run) held every chart page's DOMContentLoaded
// back by its run time; loaded from here, the page is ready first and the charts follow.
// Each figure downloads as PNG (the modebar's camera) or SVG (a modebar button of ours), named
// after the div's data-filename; buttons in an element with data-image-downloads="DIV-ID" do
// the same from the page, and are shown once their figure is drawn.
// On a narrow screen (a phone) the figures are fitted before they are drawn: the heatmap's
// cell values go (a tap or hover writes the cell's value under the chart, in an aria-live line),
// axis labels shrink and stand upright, and where even then they would overlap the chart keeps
// a minimum cell size and scrolls sideways in its own container. The rank chart draws the top
// lines only (TOP_LINES, the figure's traces come in rank order), with a chooser for more and
// for the visitor's own team.
(function () {
  "use strict";
  var baseConfig = { displaylogo: false, responsive: true, typesetMath: false };
  var TOP_LINES = 10;
  var NARROW_PX = 640;
  var VALUES_FROM_CELL_PX = 24;  // below this, a cell cannot hold "-0.45" legibly (10 px digits)
  var LABEL_GAP_PX = 3;          // between two upright labels of the same axis
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

  function plainText(html) {
    // Hover texts hold plotly's small HTML subset and escaped names: decode without running anything.
    var text = new DOMParser().parseFromString(html.replace(/<br>/g, "; "), "text/html").body.textContent;
    return text.replace(/^; /, "");
  }

  // Labels small and upright enough not to overlap: the font from the room per label, and below
  // a readable size the chart keeps that size and widens (its container scrolls sideways).
  function fitLabels(target, layout, count, room) {
    var per = room / Math.max(count, 1);
    var font = per < 14 ? 9 : (per < 20 ? 10 : 12);
    layout.xaxis = Object.assign({}, layout.xaxis, { tickfont: { size: font } });
    if (per < 40) { layout.xaxis.tickangle = -90; }
    if (per < font + LABEL_GAP_PX) {
      per = font + LABEL_GAP_PX;
      target.style.width = Math.ceil(per * count + (target.clientWidth - room)) + "px";
    }
    return { per: per, font: font };
  }

  function fitHeatmap(target, figure) {
    var trace = (figure.data || [])[0];
    var layout = figure.layout;
    var count = trace && trace.x ? trace.x.length : 0;
    var width = target.clientWidth;
    if (!count || !width) { return; }
    var narrow = width < NARROW_PX;
    if (narrow) {
      // the colour bar above the chart, margins from the labels alone (automargin)
      layout.margin = { l: 4, r: 4, t: 44, b: 4 };
      trace.colorbar = Object.assign({}, trace.colorbar, {
        orientation: "h", thickness: 10, x: 0.5, xanchor: "center", y: 1.01, yanchor: "bottom", title: { text: "ρ", side: "right" }
      });
      layout.xaxis = Object.assign({}, layout.xaxis, { title: null });
    }
    var room = width - (narrow ? 70 : 200);
    var fitted = fitLabels(target, layout, count, room);
    layout.yaxis = Object.assign({}, layout.yaxis, { tickfont: { size: fitted.font } });
    if (fitted.per < VALUES_FROM_CELL_PX) {
      delete trace.texttemplate;
      delete trace.text;
    }
    if (narrow) { layout.height = Math.ceil(fitted.per * count + 190); }
  }

  function showTappedValue(target) {
    var line = document.getElementById(target.getAttribute("data-tap-value"));
    if (!line) { return; }
    function write(event) {
      var point = event && event.points && event.points[0];
      var data = point && point.customdata;
      if (!data) { return; }
      line.textContent = plainText(data[0] + " vs " + data[1] + ": ρ = " + data[2] + (data[4] || "") + ", on " + data[3] + " teams");
    }
    target.on("plotly_click", write);
    target.on("plotly_hover", write);
  }

  function chooseLines(target, figure) {
    var form = document.querySelector('[data-lines-chooser="' + target.id + '"]');
    var traces = figure.data || [];
    var mine = target.getAttribute("data-lines-mine");
    var width = target.clientWidth;
    var count = traces.length && traces[0].x ? traces[0].x.length : 0;
    if (width && count) { fitLabels(target, figure.layout, count, width - (width < NARROW_PX ? 80 : 260)); }
    if (width && width < NARROW_PX) {
      figure.layout.margin = { l: 50, r: 8, t: 8, b: 8 };
      // the legend above the chart (it pushes the margin), the x axis's labels below
      figure.layout.legend = { orientation: "h", x: 0, xanchor: "left", y: 1.01, yanchor: "bottom", title: { text: "" } };
      figure.layout.xaxis = Object.assign({}, figure.layout.xaxis, { automargin: true });
    }
    traces.forEach(function (trace) {
      if (mine && trace.meta === mine) { trace.line = { width: 4 }; trace.name += " (my team)"; }
    });
    if (!form || traces.length <= TOP_LINES) { return null; }
    function shown() {
      var choice = form.elements.shown.value;
      var limit = choice === "all" ? traces.length : parseInt(choice, 10);
      var withMine = form.elements.mine ? form.elements.mine.checked : false;
      return traces.map(function (trace, index) { return index < limit || (withMine && trace.meta === mine); });
    }
    function height(visible) {
      var drawn = visible.filter(Boolean).length;
      return Math.max(360, 22 * drawn + 220) + (width < NARROW_PX ? 18 * drawn : 0);
    }
    var visible = shown();
    traces.forEach(function (trace, index) { trace.visible = visible[index]; trace.showlegend = visible[index]; });
    figure.layout.height = height(visible);
    form.addEventListener("change", function () {
      var now = shown();
      window.Plotly.restyle(target, { visible: now, showlegend: now });
      window.Plotly.relayout(target, { height: height(now) });
    });
    form.hidden = false;
    return form;
  }

  function drawAll() {
    if (!window.Plotly) { return; }
    var targets = document.querySelectorAll("[data-figure]");
    Array.prototype.forEach.call(targets, function (target) {
      var figure = readFigure(target.getAttribute("data-figure"));
      if (figure) {
        figure.layout = figure.layout || {};
        if (target.getAttribute("data-fit") === "heatmap") { fitHeatmap(target, figure); }
        if (target.hasAttribute("data-lines-mine")) { chooseLines(target, figure); }
        window.Plotly.newPlot(target, figure.data || [], figure.layout, configFor(target))
          .then(function () {
            enableButtons(target);
            if (target.hasAttribute("data-tap-value")) { showTappedValue(target); }
          });
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
