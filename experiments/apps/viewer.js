(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("game-data").textContent);
  var CODES = D.codes, SLOTS = D.slots, N = D.n, NT = D.teams, TEAM = D.team_of;
  var TWO = 11, JOKER = 12, RED3 = 13, BLACK3 = 14, WILD_SLOT = 11;
  var PER_INDEX = { hands: 1, feet: 1, melds: 1, books: 1 };

  // ------------------------------------------------------------------ states
  // D.states[0] is a full snapshot; every later entry holds only what changed.
  var S = [];
  var prev = null;
  D.states.forEach(function (d) {
    var s;
    if (prev === null) { s = d; } else {
      s = Object.assign({}, prev);
      Object.keys(d).forEach(function (k) {
        var v = d[k];
        if (PER_INDEX[k] && v !== null && !Array.isArray(v)) {
          var a = prev[k].slice();
          Object.keys(v).forEach(function (i) { a[+i] = v[i]; });
          s[k] = a;
        } else { s[k] = v; }
      });
    }
    S.push(s);
    prev = s;
  });
  var F = D.frames;
  var LAST = F.length - 1;
  // the round a frame belongs to (an end frame belongs to the round it ends)
  var ROUND_OF = S.map(function (s) { return s.round; });
  var ROUNDS = [];
  ROUND_OF.forEach(function (r, i) { if (ROUNDS.indexOf(r) < 0) ROUNDS.push(r); });
  function roundStart(r) { return ROUND_OF.indexOf(r); }
  function roundEnd(r) { return ROUND_OF.lastIndexOf(r); }

  // ------------------------------------------------------------------ helpers
  function esc(x) {
    return String(x).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function $(id) { return document.getElementById(id); }
  function sum(a) { var t = 0; for (var i = 0; i < a.length; i++) t += a[i]; return t; }
  function seatName(p) { return "player_" + p; }
  function label(p) { return D.players[p] ? D.players[p] : ""; }
  function teamMembers(t) { var m = []; for (var p = 0; p < N; p++) if (TEAM[p] === t) m.push(seatName(p)); return m; }
  function signed(v) { return (v > 0 ? "+" : "") + v; }
  function meldKind(slot, t, j) { return slot === WILD_SLOT ? "wild" : (t + j === 0 ? "clean" : "dirty"); }

  function card(kind, extra) {
    var code = CODES[kind], cls = "n", ix = code, pip = code;
    if (kind === TWO) { cls = "w"; pip = "\u2605"; }
    else if (kind === JOKER) { cls = "w jk"; ix = "JK"; pip = "\u2605"; }
    else if (kind === RED3) { cls = "r"; ix = "3"; pip = "\u2665"; }
    else if (kind === BLACK3) { cls = "b"; ix = "3"; pip = "\u2660"; }
    if (code === "10") { pip = "10"; cls += " ten"; }
    return '<div class="card ' + cls + (extra ? " " + extra : "") + '" data-kind="' + code + '"><span class="ix">' +
      ix + '</span><span class="pip">' + pip + "</span></div>";
  }
  function back() { return '<div class="card back"></div>'; }
  function cardsOf(counts, extra) {
    var h = "", first = true;
    for (var k = 0; k < counts.length; k++) {
      for (var i = 0; i < counts[k]; i++) {
        h += card(k, (extra || "") + (i === 0 && !first ? " gap" : ""));
      }
      if (counts[k]) first = false;
    }
    return h;
  }
  function backs(n) {
    var h = '<div class="backs"><div class="fan">';
    for (var i = 0; i < Math.min(n, 14); i++) h += back();
    return h + "</div><b>" + n + "</b></div>";
  }

  // ------------------------------------------------------------------ view state
  var cur = 0, view = "all", timer = null;
  var sheetOpen = null;   // null: shown at round ends; "open": shown everywhere; "closed": hidden on this frame
  if (D.view !== null && D.view !== undefined) view = String(D.view);
  if (D.start) { while (cur < LAST && F[cur].k < D.start) cur++; }
  try {
    var h = (location.hash || "").replace("#", "");
    if (/^\d+$/.test(h)) cur = Math.min(+h, LAST);
  } catch (e) { /* no hash */ }

  // ------------------------------------------------------------------ table
  function seatHTML(s, p, meta) {
    var t = TEAM[p];
    var acting = s.current === p;
    var mine = view !== "all" && +view === p;
    var shown = view === "all" || mine;
    var hand = s.hands[p], foot = s.feet[p];
    var h = '<div class="seat' + (acting ? " acting" : "") + (mine ? " mine" : "") + '" id="seat-' + p + '" data-seat="' + p + '">';
    h += '<h3><span class="team' + (t % 4) + '">' + seatName(p) + "</span>";
    if (label(p)) h += '<span class="who">' + esc(label(p)) + "</span>";
    h += '<span class="chip">team ' + t + "</span>";
    h += '<span class="chip" data-hand="' + sum(hand) + '">' + sum(hand) + " in " + (foot === null ? "foot" : "hand") + "</span>";
    if (foot === null) h += '<span class="chip">' + (s.played[p] ? "playing from foot" : "foot picked up") + "</span>";
    if (s.dealer === p) h += '<span class="chip">dealer</span>';
    if (acting) h += '<span class="turn">\u25B6 ' + (s.phase === "answer" ? "answers" : s.phase) + "</span>";
    h += "</h3>";
    h += '<div class="line"><div>';
    h += '<div class="label">' + (foot === null ? "foot (in play)" : "hand") + "</div>";
    h += shown ? '<div class="hand">' + cardsOf(hand) + "</div>" : '<div class="mini">' + backs(sum(hand)) + "</div>";
    h += "</div>";
    if (foot !== null) {
      h += '<div><div class="label">foot, not picked up</div>';
      h += view === "all" ? '<div class="hand mini">' + cardsOf(foot, "dim") + "</div>" : '<div class="mini">' + backs(sum(foot)) + "</div>";
      h += "</div>";
    }
    h += "</div></div>";
    return h;
  }

  function meldHTML(m, book) {
    var slot = m[0], n = m[1], t = m[2], j = m[3];
    var kind = meldKind(slot, t, j);
    var f = "";
    for (var i = 0; i < n; i++) f += card(slot);
    for (i = 0; i < t; i++) f += card(TWO);
    for (i = 0; i < j; i++) f += card(JOKER);
    var size = n + t + j;
    var cap = book ? kind + " book" : (slot === WILD_SLOT ? "wild" : SLOTS[slot]) + " \u00D7" + size + " " + kind;
    return '<div class="meld ' + kind + (book ? " book" : "") + '" data-rank="' + SLOTS[slot] + '" title="' +
      (slot === WILD_SLOT ? "wild meld" : SLOTS[slot] + " meld") + ": " + n + " natural" + (n === 1 ? "" : "s") +
      ", " + t + " two" + (t === 1 ? "" : "s") + ", " + j + " joker" + (j === 1 ? "" : "s") + '"><div class="fan mini">' +
      f + '</div><div class="cap">' + cap + "</div></div>";
  }

  function teamHTML(s, t) {
    var bc = { clean: 0, dirty: 0, wild: 0 };
    s.books[t].forEach(function (b) { bc[meldKind(b[0], b[2], b[3])]++; });
    var need = D.rules.go_out[Math.min(s.round, D.rules.go_out.length) - 1];   // this round's books
    var h = '<div class="team team' + (t % 4) + '" id="team-' + t + '" data-melds="' + s.melds[t].length +
      '" data-books="' + s.books[t].length + '" data-red3="' + s.red3[t] + '">';
    h += "<h3>Team " + t + ' <span class="info">' + teamMembers(t).join(" + ") + " \u00B7 " +
      (s.opened[t] ? "open" : "not opened (needs " + s.minimum + ")") + " \u00B7 books " + bc.clean + " clean, " +
      bc.dirty + " dirty" + (D.rules.wild_melds ? ", " + bc.wild + " wild" : "") + " (out needs " + need[0] + "/" +
      need[1] + (D.rules.wild_melds ? "/" + need[2] : "") + ')</span><span class="score" id="score-' + t + '">' +
      s.scores[t] + "</span></h3>";
    h += '<div class="melds">';
    if (s.red3[t]) {
      var r3 = "";
      for (var i = 0; i < s.red3[t]; i++) r3 += card(RED3);
      h += '<div class="meld r3" title="red threes laid: ' + s.red3[t] + '"><div class="fan mini">' + r3 +
        '</div><div class="cap">red 3 \u00D7' + s.red3[t] + "</div></div>";
    }
    s.books[t].forEach(function (b) { h += meldHTML(b, true); });
    s.melds[t].forEach(function (m) { h += meldHTML(m, false); });
    if (!s.red3[t] && !s.books[t].length && !s.melds[t].length) h += '<span class="info">no melds yet</span>';
    h += "</div></div>";
    return h;
  }

  function pilesHTML(s) {
    var h = '<div class="pile" id="stock" data-size="' + s.stock + '">' + back() +
      '<div><div class="what">stock</div><div class="num">' + s.stock + "</div></div></div>";
    h += '<div class="pile" id="pile" data-size="' + s.pile + '">' + (s.top >= 0 ? card(s.top) : '<div class="empty"></div>') +
      '<div><div class="what">discard pile' + (s.top >= 0 ? ", top " + CODES[s.top] : "") + '</div><div class="num">' +
      s.pile + (s.blocked ? ' <span class="blocked">blocked</span>' : "") + "</div></div></div>";
    h += '<div class="legend"><span><b class="clean">clean</b> no wilds</span><span><b class="dirty">dirty</b> with wilds</span>' +
      (D.rules.wild_melds ? '<span><b class="wild">wild</b> wilds only</span>' : "") + "</div>";
    return h;
  }

  // seats around the table, clockwise (play passes left) from the seat at the bottom
  function placeSeats(s, meta) {
    var bottom = view === "all" ? 0 : +view;
    var rel = [];
    for (var i = 0; i < N; i++) rel.push((bottom + i) % N);
    var areas = { top: [], left: [], right: [], bottom: [rel[0]] };
    if (N === 2) areas.top = [rel[1]];
    else {
      areas.left = [rel[1]];
      areas.right = [rel[N - 1]];
      for (i = 2; i < N - 1; i++) areas.top.push(rel[i]);
    }
    ["top", "left", "right", "bottom"].forEach(function (a) {
      $("seats-" + a).innerHTML = areas[a].map(function (p) { return seatHTML(s, p, meta); }).join("");
    });
  }

  // ------------------------------------------------------------------ side panel
  function describeFrame(i) {
    var f = F[i], s = S[i];
    var h = '<div class="step" id="step" data-frame="' + i + '" data-k="' + f.k + '">Action ' + f.k + " of " + D.actions +
      " \u00B7 round " + s.round + "/" + s.rounds + " \u00B7 minimum " + s.minimum + "</div>";
    if (f.a) {
      var p = f.a[0];
      h += '<div class="act" id="action"><span class="team' + (TEAM[p] % 4) + '">' + seatName(p) + "</span>" +
        (label(p) ? " (" + esc(label(p)) + ")" : "") + ": " + esc(f.d) + "</div>";
    } else {
      h += '<div class="act" id="action">' + (f.after ? "Round " + f.after + " is over; " : "") + esc(f.d) + "</div>";
    }
    if (f.t === "end") {
      var det = D.round_details[f.ri];
      var who = det.went_out === null || det.went_out === undefined ? "no one went out (the stock ran out)" : seatName(det.went_out) + " went out";
      h += '<div class="note">Round ' + det.round + " ends: " + who + ". Round scores " +
        f.rs.map(function (v, t) { return "team " + t + " " + signed(v); }).join(", ") + ".</div>";
      if (f.over) {
        h += '<div class="next" id="turn" data-seat="-1">Game over: ' +
          (D.winner === null ? "a draw" : "team " + D.winner + " wins") + " (" + D.scores.join(" : ") + ")</div>";
      } else {
        h += '<div class="next" id="turn" data-seat="-1">Next: the deal of round ' + (det.round + 1) + "</div>";
      }
    } else if (s.current >= 0) {
      var msg = s.phase === "answer" ? seatName(s.current) + " must answer: may " + seatName(s.turn) + " go out?"
        : seatName(s.current) + " to act (" + s.phase + ")";
      h += '<div class="next" id="turn" data-seat="' + s.current + '">' + msg + "</div>";
      if (s.pending) h += '<div class="note">' + seatName(s.turn) + " is opening from the pile: " + s.prov + " of " + s.minimum + "</div>";
      if (s.incomplete >= 0) h += '<div class="note">The ' + (s.incomplete === WILD_SLOT ? "wild" : SLOTS[s.incomplete]) + " meld from the pile still needs cards this turn</div>";
      if (s.permission === true || s.permission === false) h += '<div class="note">Going out this turn: ' + (s.permission ? "allowed" : "refused") + "</div>";
    } else {
      h += '<div class="next" id="turn" data-seat="-1">Game over</div>';
    }
    return h;
  }

  var FINISHED = [];
  (function () { var n = 0; F.forEach(function (f) { if (f.t === "end") n++; FINISHED.push(n); }); })();

  function scoresHTML(i) {
    var done = FINISHED[i];
    var h = '<table><tr><th>round</th>';
    for (var t = 0; t < NT; t++) h += '<th class="team' + (t % 4) + '">team ' + t + "</th>";
    h += "</tr>";
    var run = D.start_scores.slice();
    for (var r = 0; r < done; r++) {
      var rs = D.round_scores[r];
      h += "<tr" + (F[i].t === "end" && F[i].ri === r ? ' class="cur"' : "") + "><td>" + D.round_details[r].round + "</td>";
      for (t = 0; t < NT; t++) { run[t] += rs[t]; h += "<td>" + signed(rs[t]) + " (" + run[t] + ")</td>"; }
      h += "</tr>";
    }
    h += '<tr class="total"><td>total</td>';
    for (t = 0; t < NT; t++) h += '<td id="total-' + t + '">' + S[i].scores[t] + "</td>";
    return h + "</tr></table>";
  }

  function sheetHTML(ri) {
    var done = FINISHED[cur];
    var h = '<button class="close" id="sheet-close" title="close (S or Escape)">close</button>';
    if (ri !== null) {
      var det = D.round_details[ri];
      h += "<h2>Round " + det.round + " score sheet</h2>";
      h += "<p>" + (det.went_out === null || det.went_out === undefined ? "No one went out: the stock ran out." : seatName(det.went_out) + " went out.") +
        (det.actions ? " " + det.actions + " actions." : "") + "</p>";
      h += "<table><tr><th></th>";
      for (var t = 0; t < NT; t++) h += "<th>Team " + t + " (" + teamMembers(t).join(" + ") + ")</th>";
      h += "</tr>";
      D.items.forEach(function (it) {
        h += "<tr" + (it[0] === "total" ? ' class="total"' : "") + "><td>" + it[1] + "</td>";
        for (var t = 0; t < NT; t++) h += "<td>" + det.teams[t][it[0]] + "</td>";
        h += "</tr>";
      });
      h += "</table>";
    } else {
      h += "<h2>Score sheet</h2>" + (done ? "" : "<p>No round has ended yet.</p>");
    }
    h += "<table><tr><th>round</th>";
    for (t = 0; t < NT; t++) h += "<th>Team " + t + "</th>";
    h += "</tr>";
    var run = D.start_scores.slice();
    for (var r = 0; r < done; r++) {
      h += "<tr><td>" + D.round_details[r].round + "</td>";
      for (t = 0; t < NT; t++) { run[t] += D.round_scores[r][t]; h += "<td>" + signed(D.round_scores[r][t]) + " (" + run[t] + ")</td>"; }
      h += "</tr>";
    }
    h += '<tr class="total"><td>total</td>';
    for (t = 0; t < NT; t++) h += "<td>" + run[t] + "</td>";
    h += "</tr></table>";
    if (done === D.round_details.length && D.game_over) {
      h += "<p><b>" + (D.winner === null ? "The game is a draw." : "Team " + D.winner + " (" + teamMembers(D.winner).join(" + ") + ") wins.") + "</b></p>";
    }
    return h;
  }

  var tlRound = null;
  function timeline(i) {
    var r = ROUND_OF[i];
    var ol = $("timeline");
    if (tlRound !== r) {
      tlRound = r;
      var h = "";
      for (var j = roundStart(r); j <= roundEnd(r); j++) {
        var f = F[j];
        var who = f.a ? "P" + f.a[0] : "";
        var text = f.a ? f.d + (f.t === "end" ? " \u2014 round " + r + " ends" : "") : f.d;
        h += '<li data-f="' + j + '" class="' + (f.t === "end" ? "end" : "") + '" title="' + esc(f.a ? seatName(f.a[0]) + ": " + f.d : f.d) +
          '"><span class="k">' + f.k + '</span><span class="p' + (f.a ? " team" + (TEAM[f.a[0]] % 4) : "") + '">' + who +
          "</span><span>" + esc(text) + "</span></li>";
      }
      ol.innerHTML = h;
      $("timeline-title").textContent = "Round " + r + ": " + (roundEnd(r) - roundStart(r) + 1) + " steps (click one)";
    }
    var items = ol.children, start = roundStart(r);
    for (var k = 0; k < items.length; k++) {
      var idx = start + k;
      items[k].className = (F[idx].t === "end" ? "end " : "") + (idx === i ? "cur" : (idx > i ? "future" : ""));
    }
    var c = items[i - start];
    if (c) {
      var top = c.offsetTop - ol.offsetTop, bottom = top + c.offsetHeight;
      if (top < ol.scrollTop || bottom > ol.scrollTop + ol.clientHeight) ol.scrollTop = Math.max(0, top - ol.clientHeight / 2);
    }
  }

  // ------------------------------------------------------------------ draw
  function draw() {
    var s = S[cur], f = F[cur];
    placeSeats(s, f);
    $("piles").innerHTML = pilesHTML(s);
    var th = "";
    for (var t = 0; t < NT; t++) th += teamHTML(s, t);
    $("teams").innerHTML = th;
    $("now").innerHTML = describeFrame(cur);
    $("scores").innerHTML = scoresHTML(cur);
    var want = f.t === "end" ? f.ri : null;
    var sheet = $("sheet");
    if (want === null && sheetOpen === "open") want = FINISHED[cur] ? FINISHED[cur] - 1 : -1;
    if (want !== null && sheetOpen !== "closed") { sheet.innerHTML = sheetHTML(want < 0 ? null : want); sheet.hidden = false; }
    else { sheet.hidden = true; }
    var rb = $("rounds").children;
    for (var b = 0; b < rb.length; b++) rb[b].className = +rb[b].dataset.round === s.round ? "on" : "";
    $("slider").value = cur;
    timeline(cur);
    document.body.dataset.frame = cur;
    document.body.dataset.k = f.k;
    document.body.dataset.round = s.round;
    try { history.replaceState(null, "", "#" + cur); } catch (e) { /* file: URLs may refuse */ }
  }

  function go(i) {
    i = Math.max(0, Math.min(LAST, i));
    if (i !== cur) { cur = i; if (sheetOpen === "closed") sheetOpen = null; }
    draw();
  }
  function step(d) { go(cur + d); }
  function roundJump(d) {
    var r = ROUND_OF[cur], at = ROUNDS.indexOf(r);
    if (d < 0) {
      if (cur > roundStart(r)) go(roundStart(r));
      else if (at > 0) go(roundStart(ROUNDS[at - 1]));
    } else if (at < ROUNDS.length - 1) go(roundStart(ROUNDS[at + 1]));
    else go(LAST);
  }
  function speed() { return +$("speed").value; }
  function play(on) {
    if (timer) { clearInterval(timer); timer = null; }
    if (on) {
      if (cur >= LAST) go(0);
      timer = setInterval(function () { if (cur >= LAST) play(false); else step(1); }, 1000 / speed());
    }
    $("btn-play").textContent = timer ? "pause" : "play";
    $("btn-play").className = timer ? "on" : "";
  }
  function setView(v) { view = v; $("view").value = v; draw(); }
  // the score sheet shows itself at a round's end; S opens it anywhere (until closed)
  function toggleSheet() { sheetOpen = $("sheet").hidden ? "open" : "closed"; draw(); }

  // ------------------------------------------------------------------ setup
  $("title").textContent = document.title.replace(/^Hand and Foot replay - /, "");
  var sub = "Seed " + D.seed + " \u00B7 " + D.actions + " actions \u00B7 " + D.round_details.length + " round" +
    (D.round_details.length === 1 ? "" : "s") + " \u00B7 " +
    (D.game_over ? (D.winner === null ? "a draw" : "team " + D.winner + " wins") + " " + D.scores.join(" : ") : "not finished") +
    (D.source ? " \u00B7 " + D.source : "");
  $("subtitle").textContent = sub;
  var vs = '<option value="all">full view</option>';
  for (var p = 0; p < N; p++) vs += '<option value="' + p + '">' + seatName(p) + (label(p) ? " (" + esc(label(p)) + ")" : "") + "</option>";
  $("view").innerHTML = vs;
  $("rounds").innerHTML = ROUNDS.map(function (r) { return '<button data-round="' + r + '" title="go to round ' + r + '">R' + r + "</button>"; }).join("");
  $("slider").max = LAST;

  $("btn-first").onclick = function () { roundJump(-1); };
  $("btn-prev").onclick = function () { step(-1); };
  $("btn-next").onclick = function () { step(1); };
  $("btn-last").onclick = function () { roundJump(1); };
  $("btn-play").onclick = function () { play(!timer); };
  $("btn-sheet").onclick = toggleSheet;
  $("speed").onchange = function () { if (timer) play(true); };
  $("view").onchange = function () { setView(this.value); };
  $("slider").oninput = function () { go(+this.value); };
  $("rounds").onclick = function (e) { var b = e.target.closest("button"); if (b) go(roundStart(+b.dataset.round)); };
  $("timeline").onclick = function (e) { var li = e.target.closest("li"); if (li) go(+li.dataset.f); };
  // buttons and the slider give the keyboard back at once (Space and arrows then drive the replay)
  document.addEventListener("click", function (e) { var b = e.target.closest("button"); if (b) b.blur(); });
  $("slider").onchange = function () { this.blur(); };
  $("sheet").onclick = function (e) { if (e.target.id === "sheet-close") { sheetOpen = "closed"; draw(); } };
  document.addEventListener("keydown", function (e) {
    if (e.target && (e.target.tagName === "SELECT" || e.target.tagName === "INPUT") && e.key !== "Escape") return;
    var used = true;
    switch (e.key) {
      case "ArrowRight": step(e.shiftKey ? 10 : 1); break;
      case "ArrowLeft": step(e.shiftKey ? -10 : -1); break;
      case "ArrowDown": case "PageDown": roundJump(1); break;
      case "ArrowUp": case "PageUp": roundJump(-1); break;
      case "Home": go(0); break;
      case "End": go(LAST); break;
      case " ": play(!timer); break;
      case "+": case "=": $("speed").selectedIndex = Math.min($("speed").options.length - 1, $("speed").selectedIndex + 1); if (timer) play(true); break;
      case "-": $("speed").selectedIndex = Math.max(0, $("speed").selectedIndex - 1); if (timer) play(true); break;
      case "v": case "V": setView(view === "all" ? "0" : (+view + 1 < N ? String(+view + 1) : "all")); break;
      case "s": case "S": toggleSheet(); break;
      case "Escape": sheetOpen = "closed"; draw(); break;
      default: used = false;
    }
    if (used) e.preventDefault();
  });
  draw();
})();
