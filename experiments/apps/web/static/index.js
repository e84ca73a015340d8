(function () {
  "use strict";
  var OPTS = null;
  function $(id) { return document.getElementById(id); }
  function esc(x) {
    return String(x).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function say(text) { $("error").textContent = text || ""; }
  function seats() {
    // one chooser per seat, offering only the kinds that can play these rules; who partners whom
    var rules = $("rules").value, n = OPTS.rules[rules], kinds = OPTS.seats_for[rules], h = "";
    var teams = OPTS.teams[rules];
    for (var p = 0; p < n; p++) {
      var t = p % teams, partners = [];
      for (var q = 0; q < n; q++) if (q !== p && q % teams === t) partners.push("player_" + q);
      h += '<label>player_' + p + (p === 0 ? " (you)" : "") + ' <span class="info">team ' + t +
        (partners.length ? ", partner of " + partners.join(" and ") : ", plays alone") + '</span> <select id="seat-' +
        p + '">';
      kinds.forEach(function (k) {
        var pick = p === 0 ? "human" : (kinds.indexOf("strategic") >= 0 ? "strategic" : kinds[1]);
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
    if (o.chosen_seeds !== "allowed")
      $("seed-note").textContent = "A chosen seed is refused when more than one person sits at the table: whoever " +
        "chose it would know every hand. It is shown to everyone at the table.";
    $("offer-note").textContent = o.offer_games
      ? "Once a game here is finished, its moves (and which seats were people) may be offered in datasets of " +
        "games for research; no names or links are kept."
      : "Games at this server are not offered in datasets.";
    seats();
  }).catch(function () { say("the server does not answer; reload the page"); });
  $("new").addEventListener("submit", function (ev) {
    ev.preventDefault();
    say("");
    var n = OPTS.rules[$("rules").value], body = { rules: $("rules").value, seats: [], pace_ms: +$("pace").value };
    for (var p = 0; p < n; p++) body.seats.push($("seat-" + p).value);
    var seed = $("seed").value.trim();
    if (seed !== "") {
      if (!/^[0-9]{1,19}$/.test(seed)) { say("the seed must be a whole number from 0 to 9223372036854775807"); return; }
      body.seed = seed;                          // as a string: every digit of a large seed survives
    }
    fetch("/api/tables", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
      .then(function (r) {
        return r.json().catch(function () { return { error: "the server answered " + r.status }; })
          .then(function (j) { return [r.status, j]; });
      })
      .then(function (res) {
        if (res[0] !== 201) { say(res[1].error || ("the server answered " + res[0])); return; }
        var t = res[1], h = "<h2>Table " + esc(t.table) + "</h2>" +
          (t.seed ? '<p id="chosen-seed">Dealt from the chosen seed ' + esc(t.seed) + " (everyone at the table sees it)</p>" : "") +
          "<ul>";
        t.seats.forEach(function (s) {
          h += "<li>" + esc(s.player) + " (" + esc(s.kind) + ", team " + s.team + ")" + (s.url ? ': <a id="link-' +
            s.seat + '" href="' + esc(s.url) + '" target="_blank" rel="noopener">' + esc(s.url) + "</a>" : "") + "</li>";
        });
        h += '<li>spectator: <a id="link-spectator" href="' + esc(t.spectator) + '">' + esc(t.spectator) + "</a></li></ul>";
        $("links").innerHTML = h;
      })
      .catch(function () { say("the server does not answer; try again"); });
  });
})();
