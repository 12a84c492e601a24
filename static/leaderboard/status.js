// Submission page: follow the status until scoring ends, then reload to show the scores.
(function () {
  "use strict";
  var status = document.getElementById("submission-status");
  if (!status || (status.dataset.status !== "queued" && status.dataset.status !== "scoring")) { return; }
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
})();
