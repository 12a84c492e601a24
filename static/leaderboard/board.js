// The leaderboard's column tips, on top of a table that works without them: a column's "i"
// button shows the column's formula on hover, focus or tap (the tooltip is its
// aria-describedby, so a screen reader reads it on focus); Escape or a tap elsewhere closes it.
// Paging, sorting and "Find a team" are links and a form: the server does them over the whole
// board, and marks the visitor's own row.
(function () {
  "use strict";

  function closeTips(except) {
    Array.prototype.forEach.call(document.querySelectorAll('.col-info[aria-expanded="true"]'), function (button) {
      if (button !== except) { button.setAttribute("aria-expanded", "false"); }
    });
  }

  function start() {
    document.addEventListener("click", function (event) {
      var button = event.target.closest ? event.target.closest(".col-info") : null;
      if (button) {
        var open = button.getAttribute("aria-expanded") === "true";
        closeTips(button);
        button.setAttribute("aria-expanded", open ? "false" : "true");
      } else {
        closeTips(null);
      }
    });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape") { closeTips(null); }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
