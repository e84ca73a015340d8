// The seat's page of the browser table (handfoot serve).  Its token is the address's #fragment (never sent
// in a URL); the state comes from GET /api/tables/ID/state and then from the websocket; actions are POSTed
// by name with the seq of the state they were chosen in.  The page offers only the names in state.legal.
(function () {
  "use strict";
  var CODES = ["4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2", "JK", "3R", "3B"];
  var TID = decodeURIComponent(location.pathname.split("/")[2] || "");
  var TOKEN = (location.hash || "").replace(/^#/, "") || null;
  var S = null, selected = {}, busy = false, ws = null, retry = 500, fatal = false, closed = {}, lost = false;

  function $(id) { return document.getElementById(id); }
  function esc(x) {
    return String(x).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function headers(json) {
    var h = {};
    if (TOKEN) h.Authorization = "Bearer " + TOKEN;
    if (json) h["Content-Type"] = "application/json";
    return h;
  }
  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }
  function card(code, extra, attrs) {
    var cls = code === "10" ? "n ten" : "n", ix = code, pip = code;
    if (code === "2") { cls = "w"; pip = "\u2605"; }
    else if (code === "JK") { cls = "w jk"; pip = "\u2605"; }
    else if (code === "3R") { cls = "r"; ix = "3"; pip = "\u2665"; }
    else if (code === "3B") { cls = "b"; ix = "3"; pip = "\u2660"; }
    return '<div class="card ' + cls + (extra ? " " + extra : "") + '" data-code="' + code + '"' + (attrs || "") +
      '><span class="ix">' + ix + '</span><span class="pip">' + pip + "</span></div>";
  }
  function who(p) {
    var kind = S.players[p];
    return "player_" + p + (S.seat === p ? " (you)" : kind === "human" ? " (person)" : " (" + esc(kind) + ")");
  }
  function say(text) { $("error").textContent = text || ""; lost = false; }
  function saySilent(text) {
    // the connection's own trouble: said while it lasts, cleared as soon as the server answers again
    say(text);
    lost = true;
  }
  function answered() { if (lost) say(""); }

  // ------------------------------------------------------------------ talking to the server
  function stop(text) {
    // a link that is not a seat of this table (or a table that is gone): say so once, stop trying, take the
    // old board away and offer the way back to the start page
    fatal = true;
    document.body.dataset.fatal = "1";
    $("status").textContent = text;
    $("conn").textContent = "";
    $("trouble").textContent = "";
    $("mine").hidden = true;
    $("felt").classList.add("stopped");
    var box = document.createElement("section");
    box.id = "stopped";
    box.innerHTML = "<h2>" + esc(text.charAt(0).toUpperCase() + text.slice(1)) + "</h2><p>" +
      '<a id="home" href="/">Back to the start page</a> to open a new table.</p>';
    $("felt").appendChild(box);
    ["sheet", "over", "log"].forEach(function (id) { $(id).innerHTML = ""; });
    if (ws) ws.close();
  }
  function load() {
    fetch("/api/tables/" + encodeURIComponent(TID) + "/state", { headers: headers(false) })
      .then(function (r) {
        return r.json().catch(function () { return { error: "the server answered " + r.status }; })
          .then(function (j) { return [r.status, j]; });
      })
      .then(function (res) {
        if (res[0] === 200) { answered(); show(res[1]); return; }
        if (res[0] === 401) stop("This link is not a seat at this table: check that you copied the whole link " +
                                 "(the part after # is your seat's key).");
        else if (res[0] === 404 || res[0] === 410) stop(res[1].error);
        else { say(res[1].error); if (res[0] >= 500 || res[0] === 429) setTimeout(load, 2000); }
      })
      .catch(function () { saySilent("the server does not answer; retrying"); setTimeout(load, 2000); });
  }
  function connect() {
    if (fatal) return;
    ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws/tables/" +
                       encodeURIComponent(TID));
    ws.onopen = function () { retry = 500; $("conn").textContent = "live"; ws.send(JSON.stringify({ token: TOKEN })); };
    ws.onmessage = function (ev) {
      var m = JSON.parse(ev.data);
      if (m.type === "state") { answered(); show(m.state); }
      else if (m.type === "error") say(m.error);
    };
    ws.onclose = function () {
      if (fatal) return;
      $("conn").textContent = "reconnecting\u2026";
      setTimeout(function () { load(); connect(); }, retry);
      retry = Math.min(retry * 2, 8000);
    };
  }
  // the turn timeout (handfoot serve --turn-timeout): when the table's stand-in moves for this seat
  function standInTime() {
    var mine = S.seat !== null && (S.waiting.length ? S.waiting.indexOf(S.seat) >= 0 : S.to_act);
    return mine && S.act_by ? "if you have not moved by " + new Date(S.act_by * 1000).toLocaleTimeString() +
      ", the stand-in (" + S.stand_in + ") moves for you" : "";
  }
  function leave() {
    if (!S || !window.confirm("Leave this table? The stand-in (" + S.stand_in + ") plays your seat from now on.")) return;
    seatPost("leave");
  }
  function seatPost(what) {
    fetch("/api/tables/" + encodeURIComponent(TID) + "/" + what, { method: "POST", headers: headers(true), body: "{}" })
      .then(function (r) { return r.json().then(function (j) { return [r.status, j]; }); })
      .then(function (res) { if (res[0] === 200) show(res[1]); else say(res[1].error); })
      .catch(function () { saySilent("the server does not answer; retrying"); setTimeout(load, 2000); });
  }
  function act(name) {
    if (busy || !S || S.legal.indexOf(name) < 0) return;
    busy = true;
    fetch("/api/tables/" + encodeURIComponent(TID) + "/act", {
      method: "POST", headers: headers(true), body: JSON.stringify({ action: name, seq: S.seq })
    }).then(function (r) { return r.json().then(function (j) { return [r.status, j]; }); })
      .then(function (res) {
        busy = false;
        if (res[0] === 200) { selected = {}; say(""); show(res[1]); } else { say(res[1].error); load(); }
      })
      .catch(function () { busy = false; saySilent("the server does not answer; retrying"); setTimeout(load, 2000); });
  }

  // ------------------------------------------------------------------ the selection
  function selection() {
    var counts = {}, n = 0;
    Object.keys(selected).forEach(function (i) { var c = S.hand[+i]; counts[c] = (counts[c] || 0) + 1; n++; });
    return { counts: counts, n: n };
  }
  function meldNames() {
    // the legal melds made of exactly the chosen cards; wilds alone may go onto any meld or start the wild meld
    var sel = selection(), ranks = [], twos = sel.counts["2"] || 0, jokers = sel.counts.JK || 0;
    Object.keys(sel.counts).forEach(function (c) { if (c !== "2" && c !== "JK") ranks.push(c); });
    if (!sel.n || ranks.length > 1) return [];
    var n = ranks.length ? sel.counts[ranks[0]] : 0;
    return S.legal.filter(function (name) {
      var p = name.split(":");
      return p[0] === "meld" && (!ranks.length || p[1] === ranks[0]) && +p[2] === n && +p[3] === twos && +p[4] === jokers;
    });
  }
  function meldLabel(name) {
    var p = name.split(":"), what = [];
    if (+p[2]) what.push(p[2] + " \u00D7 " + p[1]);
    if (+p[3]) what.push(p[3] + " \u00D7 2");
    if (+p[4]) what.push(p[4] + " \u00D7 JK");
    return "Meld " + what.join(" + ") + (p[1] === "W" ? " (wild meld)" : +p[2] ? "" : " onto the " + p[1] + "s");
  }
  var WORDS = { draw: "Draw two cards", pickup: "Pick up the pile", lay_red_three: "Lay a red three",
                cancel_melds: "Take back melds", ask_go_out: "Ask to go out", answer_yes: "Yes, go out",
                answer_no: "No, not yet", next_round: "Seen: deal the next round" };
  var CARD_WORDS = { "2": "2 (wild)", JK: "joker", "3R": "red 3", "3B": "black 3" };
  function label(name) {
    // an action id in words: every button and line a person reads says what it does
    if (WORDS[name]) return WORDS[name];
    if (name.indexOf("discard:") === 0) { var c = name.slice(8); return "Discard " + (CARD_WORDS[c] || c); }
    if (name.indexOf("meld:") === 0) return meldLabel(name);
    return name;
  }
  function words(text) {
    // a server's reason that names an action id, e.g. "(lay_red_three)", with the button's words instead
    return String(text || "").replace(/\(([a-z_]+(?::[A-Za-z0-9:]+)?)\)/g, function (m, id) {
      return WORDS[id] || id.indexOf(":") > 0 ? '("' + label(id) + '")' : m;
    });
  }
  function pickupReason() {
    // why the pile cannot be taken now (said when drawing is the choice), from what the seat sees
    var top = S.discard.length ? S.discard[S.discard.length - 1] : null;
    if (!top) return "the discard pile is empty";
    if (top === "3B" || top === "3R") return "a three on top of the pile blocks it";
    var n = S.hand.filter(function (c) { return c === top; }).length;
    if (top !== "2" && top !== "JK" && n < 2) return "taking it needs two " + top + "s in your hand to meld with the top card";
    return "not with these cards now";
  }
  function discardName() {
    var sel = selection();
    return sel.n === 1 ? "discard:" + Object.keys(sel.counts)[0] : null;
  }

  // ------------------------------------------------------------------ drawing
  function members(t) {
    var m = [];
    for (var p = 0; p < S.num_players; p++) if (S.team_of[p] === t) m.push("player_" + p);
    return m.join(" + ");
  }
  function seatsHTML() {
    var h = "";
    for (var p = 0; p < S.num_players; p++) {
      var foot = S.foot_picked_up[p] ? "in the foot" + (S.played_foot[p] ? ", played from it" : "")
        : "foot waiting (" + plural(S.foot_sizes[p], "card") + ")";
      h += '<div class="seat team' + (S.team_of[p] % 4) + (p === S.current && !S.game_over ? " acting" : "") +
        (p === S.seat ? " mine" : "") + '" id="seat-' + p + '"><b>' + who(p) + "</b> team " + S.team_of[p] +
        '<div class="what">' + plural(S.hand_sizes[p], "card") + " \u00B7 " + foot + "</div></div>";
    }
    return h;
  }
  function meldHTML(m, book) {
    var f = "", i;
    for (i = 0; i < m.naturals; i++) f += card(m.slot === "W" ? "2" : m.slot);
    for (i = 0; i < m.twos; i++) f += card("2");
    for (i = 0; i < m.jokers; i++) f += card("JK");
    var size = m.naturals + m.twos + m.jokers;
    return '<div class="meld ' + m.kind + (book ? " book" : "") + '" data-rank="' + m.slot + '"><div class="fan mini">' +
      f + '</div><div class="cap">' + (book ? m.kind + " book" : (m.slot === "W" ? "wild" : m.slot) + " \u00D7" + size) +
      "</div></div>";
  }
  function boardHTML(books, melds, red3) {
    var h = "", r3 = "";
    for (var i = 0; i < red3; i++) r3 += card("3R");
    if (r3) h += '<div class="meld r3"><div class="fan mini">' + r3 + '</div><div class="cap">red 3 \u00D7' + red3 +
      "</div></div>";
    books.forEach(function (b) { h += meldHTML(b, true); });
    melds.forEach(function (m) { h += meldHTML(m, false); });
    return h || '<span class="info">no melds</span>';
  }
  function needText() {
    return S.going_out[0] + "/" + S.going_out[1] + "/" + S.going_out[2];
  }
  function opening(t) {
    // how far the turn player's unopened team is towards the round's first-meld minimum
    if (S.opened[t]) return "open";
    if (S.team_of[S.turn_player] === t && S.prov_value > 0 && !S.game_over)
      return "not opened: " + S.prov_value + " of " + S.minimum + " melded, " + (S.minimum - S.prov_value) + " to go";
    return "not opened (needs " + S.minimum + ")";
  }
  function teamsHTML() {
    var h = "";
    for (var t = 0; t < S.scores.length; t++) {
      var b = S.book_counts[t];
      h += '<div class="team team' + (t % 4) + '" id="team-' + t + '"><h3>Team ' + t + ' <span class="info">' +
        members(t) + " \u00B7 " + '<span class="opening">' + opening(t) + "</span> \u00B7 " +
        '<span class="books' + (S.books_met[t] ? " met" : "") + '">books ' + b[0] + "/" + b[1] + "/" + b[2] +
        " of " + needText() + " to go out" + (S.books_met[t] ? " \u2713" : "") + "</span>" +
        '</span><span class="score" title="game total (before this round)">' + S.scores[t] + "</span>" +
        '<span class="round-points" title="on the table this round">+' + S.table_points[t] +
        " this round</span></h3><div class=\"melds\">" + boardHTML(S.books[t], S.melds[t], S.red_threes[t]) +
        "</div></div>";
    }
    return h + '<div class="legend">books and melds: <span class="clean">clean</span> (no wild card) \u00B7 ' +
      '<span class="dirty">dirty</span> (with twos or jokers) \u00B7 <span class="wild">wild</span> (wild cards only)' +
      " \u00B7 books c/d/w: clean/dirty/wild</div>";
  }
  function pilesHTML() {
    var top = S.discard.length ? S.discard[S.discard.length - 1] : null;
    return '<div class="pile" id="stock"><div class="card back"></div><div><div class="what">stock</div>' +
      '<div class="num">' + S.stock_size + '</div></div></div><div class="pile" id="pile">' +
      (top ? card(top) : '<div class="empty"></div>') + '<div><div class="what">discard pile' +
      (top ? ", top " + top : ", empty") + '</div><div class="num">' + S.discard.length +
      (S.pile_blocked && top ? ' <span class="blocked">blocked</span>' : "") + "</div></div></div>";
  }
  function sheetHTML() {
    var h = "<table><tr><th>round</th>";
    S.scores.forEach(function (_, t) { h += "<th>team " + t + "</th>"; });
    h += "</tr>";
    S.round_scores.forEach(function (r, i) {
      h += "<tr><td>" + (i + 1) + "</td>" + r.map(function (v) { return "<td>" + v + "</td>"; }).join("") + "</tr>";
    });
    h += '<tr class="total"><td>total</td>' + S.scores.map(function (v) { return "<td>" + v + "</td>"; }).join("") +
      "</tr></table>";
    return h;
  }
  function roundEndHTML(E) {
    // the finished round: who went out, each line of the breakdown, the totals and the last board
    var h = '<h2 id="re-title">Round ' + E.round + " is over" + (E.game_over ? ": the game is over" : "") + "</h2>" +
      '<p id="re-reason">' + esc(E.reason) + (E.last ? " (last move: player_" + E.last.player + " " +
      esc(E.last.text) + ")" : "") + "</p>" + roundEndChoice(E) + '<table id="re-sheet"><tr><th></th>';
    E.teams.forEach(function (_, t) { h += "<th>team " + t + " <small>" + members(t) + "</small></th>"; });
    h += "</tr>";
    E.items.forEach(function (it) {
      h += '<tr class="item-' + it[0] + (it[0] === "total" ? " total" : "") + '"><td>' + esc(it[1]) + "</td>" +
        E.teams.map(function (d) { return "<td>" + d[it[0]] + "</td>"; }).join("") + "</tr>";
    });
    h += '<tr class="game total"><td>game total</td>' + E.scores.map(function (v) { return "<td>" + v + "</td>"; })
      .join("") + "</tr></table><h3>The board at the end</h3>";
    E.teams.forEach(function (_, t) {
      h += '<div class="team team' + (t % 4) + '"><h3>Team ' + t + "</h3><div class=\"melds\">" +
        boardHTML(E.books[t], E.melds[t], E.red_threes[t]) + "</div></div>";
    });
    h += '<p id="re-left">Cards left: ' + E.cards_left.map(function (n, p) {
      return "player_" + p + " " + n + (E.foot_picked_up[p] ? "" : " (foot unplayed)");
    }).join(" \u00B7 ") + "</p>";
    return h;
  }
  function roundEndChoice(E) {
    // the person confirms the sheet (the next deal waits for everyone), or sees whom the table waits for
    var next = "round " + (E.round + 1);
    if (S.waiting.indexOf(S.seat) >= 0)
      return '<div class="re-choice"><button id="act-next" data-action="next_round">Seen: deal ' + next +
        "</button></div>";
    if (S.waiting.length)
      return '<p id="re-wait" class="re-choice">Waiting for ' + S.waiting.map(function (p) { return "player_" + p; })
        .join(", ") + " to see the sheet before " + next + " is dealt.</p>";
    return '<div class="re-choice"><button id="re-close">Close</button></div>';
  }
  function status() {
    if (S.game_over) return "Game over";
    if (S.waiting.length) return S.waiting.indexOf(S.seat) >= 0 ? "Round " + S.round_end.round + " is over"
      : "Waiting for everyone to see round " + S.round_end.round + "'s sheet";
    if (S.to_act) return S.phase === "answer" ? "Your partner asks to go out" : "Your turn";
    return who(S.current) + (S.phase === "answer" ? " answers" : " to play");
  }

  function show(state) {
    if (S && state.seq < S.seq) return;                 // an older push arriving late
    if (!S || state.seq !== S.seq) selected = {};
    S = state;
    document.body.dataset.seq = S.seq;
    document.body.dataset.toAct = S.to_act ? "1" : "0";
    document.body.dataset.over = S.game_over ? "1" : "0";
    document.body.dataset.waiting = S.waiting.length ? "1" : "0";
    var E = S.round_end, open = E && (S.waiting.length || (S.game_over && !closed[E.round]));
    // while a finished round's sheet is up, the header speaks of that round (the next one is not dealt yet)
    $("where").textContent = "table " + S.table + " \u00B7 " + S.rules + " \u00B7 " + (open ? "round " + E.round +
      " of " + S.rounds + " is over" : "round " + S.round + " of " + S.rounds + " \u00B7 first meld " + S.minimum +
      " \u00B7 going out needs " + needText() + " books (clean/dirty/wild)") +
      (S.seed !== null ? " \u00B7 seed " + S.seed + " (chosen by the table's creator)" : "") +
      (S.seat === null ? " \u00B7 spectator" : " \u00B7 you are player_" + S.seat + ", team " + S.team);
    $("status").textContent = status();
    $("trouble").textContent = [S.trouble, S.notice, standInTime()].filter(Boolean).join(" \u00B7 ");
    $("leave").hidden = S.seat === null || S.game_over || S.left.indexOf(S.seat) >= 0;
    $("back").hidden = S.seat === null || S.game_over || S.away.indexOf(S.seat) < 0;
    $("seats").innerHTML = seatsHTML();
    $("piles").innerHTML = pilesHTML();
    $("teams").innerHTML = teamsHTML();
    $("sheet").innerHTML = sheetHTML();
    $("log").innerHTML = S.log.slice().reverse().map(function (e) {
      return '<li class="' + (e.player === S.seat ? "me" : "") + '" data-action="' + esc(e.action) + '">player_' + e.player +
        ": " + esc(e.text || e.action) + "</li>";
    }).join("");
    $("over").innerHTML = S.game_over ? (S.winner === null ? "A draw." : "Team " + S.winner + " wins.") +
      ' <a id="replay" href="/table/' + encodeURIComponent(S.table) + '/replay">Replay the game</a> \u00B7 ' +
      '<a href="/api/tables/' + encodeURIComponent(S.table) + '/record" download="handfoot-' + S.table +
      '.json">record (JSON)</a>' : "";
    $("round-end").hidden = !open;
    $("felt").classList.toggle("sheet-open", !!open);
    $("round-end").innerHTML = open ? roundEndHTML(E) : "";
    $("mine").hidden = S.seat === null;
    drawMine();
  }

  function hint() {
    // what a person needs to know to act: the opening still to meld, why Discard is not offered
    var lines = [], me = S.team;
    if (!S.to_act || S.waiting.length) return "";
    if (!S.opened[me] && S.phase === "meld" && S.turn_player === S.seat)
      lines.push("Opening: your team has melded " + S.prov_value + " of the " + S.minimum + " needed, " +
                 Math.max(0, S.minimum - S.prov_value) + " to go.");
    if (S.discard_reason) lines.push("Discard is not available: " + words(S.discard_reason) + ".");
    if (S.phase === "draw" && S.legal.indexOf("draw") >= 0 && S.legal.indexOf("pickup") < 0)
      lines.push("Pick up the pile: not now (" + pickupReason() + ").");
    if (S.legal.indexOf("ask_go_out") >= 0 && !S.books_met[me])
      lines.push("Going out needs " + needText() + " books (clean/dirty/wild); your team has " +
                 S.book_counts[me].join("/") + ".");
    return lines.join(" ");
  }

  function drawMine() {
    if (S.seat === null) return;
    $("mine").className = S.to_act ? "acting" : "";
    $("hand").innerHTML = S.hand.map(function (c, i) {
      return card(c, selected[i] ? "sel" : "", ' data-i="' + i + '" role="button" tabindex="0"');
    }).join("") || '<span class="info">no cards</span>';
    $("pending").textContent = (S.in_foot ? "Playing from your foot. " : "") +
      (S.pending.length ? "Pile cards waiting for your team to open: " + S.pending.join(" ") : "");
    $("hint").textContent = hint();
    var legal = S.legal;
    var ask = $("ask");
    ask.hidden = !(S.to_act && S.phase === "answer" && !S.waiting.length);
    ask.textContent = "Your partner, player_" + S.turn_player + ', asks: "May I go out?"';
    document.querySelectorAll("#actions button[data-action]").forEach(function (b) {
      var ok = legal.indexOf(b.dataset.action) >= 0;
      if (b.dataset.action === "ask_go_out") ok = ok && S.books_met[S.team];
      b.disabled = !ok;
      // the pile stays in sight, greyed with its reason, whenever drawing is the choice
      var shown = ok || (b.dataset.action === "pickup" && legal.indexOf("draw") >= 0);
      b.classList.toggle("hidden", !shown);
      b.title = ok ? "" : b.dataset.action === "pickup" ? "Not now: " + pickupReason() : "";
    });
    var melds = meldNames(), d = discardName();
    var db = $("act-discard");
    $("melds").innerHTML = melds.length ? melds.map(function (m, i) {
      return '<button class="meld-choice"' + (i ? "" : ' id="act-meld"') + ' data-action="' + esc(m) + '">' +
        esc(meldLabel(m)) + "</button>";
    }).join("") : (legal.some(function (n) { return n.indexOf("meld:") === 0; }) ?
      '<button id="act-meld" disabled title="' + esc(meldReason()) + '">Meld the chosen cards</button>' +
      '<span class="why" id="why-meld">' + esc(meldReason()) + "</span>" : "");
    db.disabled = !(d && legal.indexOf(d) >= 0);
    db.textContent = db.disabled ? "Discard selected" : label(d);
    db.title = db.disabled ? discardReason() : "";
    $("why-discard").textContent = db.disabled && !S.discard_reason &&
      legal.some(function (n) { return n.indexOf("discard:") === 0; }) ? discardReason() : "";
    db.classList.toggle("hidden", !legal.some(function (n) { return n.indexOf("discard:") === 0; }) &&
                        !S.discard_reason);
    $("act-clear").classList.toggle("hidden", !Object.keys(selected).length);
    $("nlegal").textContent = legal.length;
    $("legal").innerHTML = legal.map(function (n) {
      return '<button data-action="' + esc(n) + '">' + esc(label(n)) + "</button>";
    }).join("");
  }

  function meldReason() {
    var n = selection().n;
    return n ? "the chosen cards make no meld you may lay now: choose cards of one rank, with wild cards if you like"
      : "choose the cards to meld in your hand first";
  }
  function discardReason() {
    if (S.discard_reason) return words(S.discard_reason);
    var n = selection().n;
    return n === 0 ? "choose one card in your hand to discard" : n > 1 ? "choose exactly one card to discard"
      : "that card may not be discarded now";
  }

  // ------------------------------------------------------------------ events
  $("hand").addEventListener("click", function (ev) {
    var el = ev.target.closest(".card");
    if (!el || !S || !S.to_act) return;
    var i = el.dataset.i;
    if (selected[i]) delete selected[i]; else selected[i] = true;
    drawMine();
  });
  $("actions").addEventListener("click", function (ev) {
    var b = ev.target.closest("button");
    if (!b || b.disabled) return;
    if (b.id === "act-clear") { selected = {}; drawMine(); return; }
    if (b.id === "act-discard") { act(discardName()); return; }
    if (b.dataset.action) act(b.dataset.action);
  });
  $("round-end").addEventListener("click", function (ev) {
    var b = ev.target.closest("button");
    if (!b || !S) return;
    if (b.id === "re-close") { closed[S.round_end.round] = true; show(S); return; }
    if (b.dataset.action) act(b.dataset.action);
  });
  $("legal").addEventListener("click", function (ev) {
    var b = ev.target.closest("button");
    if (b && b.dataset.action) act(b.dataset.action);
  });
  $("leave").addEventListener("click", leave);
  $("back").addEventListener("click", function () { seatPost("back"); });
  if (TOKEN) history.replaceState(null, "", location.pathname + location.hash);
  load();
  connect();
})();
