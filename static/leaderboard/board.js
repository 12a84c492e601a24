// The leaderboard's tools, on top of a table that works without them:
// - a column's "i" button shows the column's formula on hover, focus or tap (the tooltip is its
//   aria-describedby, so a screen reader reads it on focus), Escape or a tap elsewhere closes it;
// - "Find a team" hides the rows whose team name does not contain the text typed;
// - the visitor's own row is marked. The rows are cached HTML shared by every visitor, so they
//   carry only data-team-id; the table's data-my-team (rendered per visitor) says which is theirs.
(function () {
  "use strict";

  function closeTips(except) {
    Array.prototype.forEach.call(document.querySelectorAll('.col-info[aria-expanded="true"]'), function (button) {
      if (button !== except) { button.setAttribute("aria-expanded", "false"); }
    });
  }

  function setUpTips() {
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

  function teamRows(table) {
    return table.querySelectorAll("tbody tr.team-row, tbody tr.unscored-row");
  }

  function setUpSearch(box) {
    var table = document.getElementById(box.getAttribute("data-board-search"));
    var input = box.querySelector("input");
    var status = box.querySelector("[role=status]");
    if (!table || !input) { return; }
    var rows = teamRows(table);
    input.addEventListener("input", function () {
      var needle = input.value.trim().toLocaleLowerCase();
      var shown = 0;
      Array.prototype.forEach.call(rows, function (row) {
        var name = row.querySelector(".col-team").textContent.toLocaleLowerCase();
        var match = !needle || name.indexOf(needle) !== -1;
        row.hidden = !match;
        if (match) { shown += 1; }
      });
      status.textContent = needle ? shown + " of " + rows.length + " teams shown" : "";
    });
    box.hidden = false;
  }

  function markMine(table) {
    var mine = table.getAttribute("data-my-team");
    if (!mine) { return; }
    var row = table.querySelector('tr[data-team-id="' + mine + '"]');
    if (!row) { return; }
    row.classList.add("mine");
    var name = row.querySelector(".col-team");
    var note = document.createElement("span");
    note.className = "tag tag-mine";
    note.textContent = "your team";
    name.appendChild(note);
    Array.prototype.forEach.call(document.querySelectorAll("[data-jump-mine]"), function (link) {
      link.addEventListener("click", function (event) {
        event.preventDefault();
        var search = document.getElementById("team-filter");
        if (search && search.value && row.hidden) {
          search.value = "";
          search.dispatchEvent(new Event("input"));
        }
        row.scrollIntoView({ block: "center" });
        name.setAttribute("tabindex", "-1");
        name.focus({ preventScroll: true });
      });
    });
  }

  function start() {
    setUpTips();
    Array.prototype.forEach.call(document.querySelectorAll("[data-board-search]"), setUpSearch);
    Array.prototype.forEach.call(document.querySelectorAll("table[data-my-team]"), markMine);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
