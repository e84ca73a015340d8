(function () {
  "use strict";
  var OPTS = null;
  function $(id) { return document.getElementById(id); }
  function esc(x) {
    return String(x).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function seats() {
    var n = OPTS.rules[$("rules").value], h = "";
    for (var p = 0; p < n; p++) {
      h += '<label>player_' + p + (p === 0 ? " (you)" : "") + ' <select id="seat-' + p + '">';
      OPTS.seats.forEach(function (k) {
        var pick = p === 0 ? "human" : "strategic";
        h += "<option" + (k === pick ? " selected" : "") + ">" + esc(k) + "</option>";
      });
      h += "</select></label>";
    }
    $("seat-kinds").innerHTML = h;
  }
  fetch("/api/options").then(function (r) { return r.json(); }).then(function (o) {
    OPTS = o;
    $("rules").innerHTML = Object.keys(o.rules).map(function (k) {
      return "<option>" + esc(k) + "</option>";
    }).join("");
    $("rules").addEventListener("change", seats);
    seats();
  });
  $("new").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var n = OPTS.rules[$("rules").value], body = { rules: $("rules").value, seats: [], pace_ms: +$("pace").value };
    for (var p = 0; p < n; p++) body.seats.push($("seat-" + p).value);
    if ($("seed").value !== "") body.seed = +$("seed").value;
    fetch("/api/tables", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (j) { return [r.status, j]; }); })
      .then(function (res) {
        if (res[0] !== 201) { $("error").textContent = res[1].error; return; }
        var t = res[1], h = "<h2>Table " + esc(t.table) + "</h2><ul>";
        t.seats.forEach(function (s) {
          h += "<li>" + esc(s.player) + " (" + esc(s.kind) + ")" + (s.url ? ': <a id="link-' + s.seat + '" href="' +
            esc(s.url) + '" target="_blank" rel="noopener">' + esc(s.url) + "</a>" : "") + "</li>";
        });
        h += '<li>spectator: <a id="link-spectator" href="' + esc(t.spectator) + '">' + esc(t.spectator) + "</a></li></ul>";
        $("links").innerHTML = h;
      });
  });
})();
