"""The table as a picture: a compact snapshot of a game, and an RGB image of it.

:func:`table_snapshot` reduces a :class:`~handfoot_env.engine.Game` to what a
spectator sees from the full view (every hand and foot as count lists, each
team's melds and books, the piles, whose turn it is, the scores).  The HTML
replay viewer embeds one snapshot per step; :func:`render_rgb` draws one as a
``uint8`` array of shape ``(H, W, 3)``, which is what
``handfoot_v0.env(render_mode="rgb_array").render()`` returns.

Drawing is done with Pillow (installed with matplotlib): the felt and the seat
panels are drawn once per table layout, card faces and text labels are drawn
once and cached, so that a frame is a copy of the background plus pastes.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Dict, Optional, Sequence, Tuple

import numpy as np

from .cards import BLACK3, CODES, JOKER, NUM_KINDS, NUM_RANKS, RED3, TWO, WILD_SLOT
from .engine import GAME_OVER, PHASE_NAMES, Game
from PIL import Image, ImageDraw, ImageFont
import importlib.util
import os
from .actions import ACTION_NAMES

#: image size of :func:`render_rgb` (width, height)
SIZE = (1024, 640)


# =========================================================================== snapshot
def table_snapshot(game: Game, round_over: bool = False) -> dict:
    """What the full view shows of ``game``, as a small JSON-serialisable dict.

    Keys: ``round``, ``rounds``, ``minimum``, ``dealer``, ``current`` and
    ``turn`` (seats; ``-1`` once no one is to act), ``phase`` (name),
    ``scores``, ``opened`` (0/1 per team), ``red3`` (per team), ``hands`` and
    ``feet`` (count lists over the card kinds of :mod:`handfoot_env.cards`; a
    foot already picked up is ``None``), ``played`` (played from the foot, 0/1
    per seat), ``melds`` and ``books`` (per team, lists of ``[slot, naturals,
    twos, jokers]``; slot 11 is the wild meld), ``stock``, ``pile`` (size),
    ``top`` (kind of the pile's top card, ``-1`` if empty), ``blocked`` (0/1),
    ``pending`` (pile cards waiting for the opening), ``prov`` (value of
    provisional opening melds), ``incomplete`` (slot of an unfinished pickup
    meld or ``-1``), ``permission`` (answer to "may I go out?" this turn, or
    ``None``), ``over`` (0/1: no one is to act), ``winner``.
    ``round_over``: the game is a finished round's board (see
    :func:`handfoot_env.record.board_after`).
    """
    over = game.phase == GAME_OVER or round_over
    nt = game.num_teams
    return {
        "round": game.round,
        "rounds": game.rules.rounds,
        "minimum": game.minimum,
        "dealer": game.dealer,
        "current": -1 if over else game.current,
        "turn": -1 if over else game.turn_player,
        "phase": "over" if over else PHASE_NAMES[game.phase],
        "scores": list(game.scores),
        "opened": [int(bool(x)) for x in game.opened],
        "red3": list(game.red3),
        "hands": [list(h) for h in game.hands],
        "feet": [None if f is None else list(f) for f in game.feet],
        "played": [int(bool(x)) for x in game.played_foot],
        "melds": [[[s, n, t, j] for s, (n, t, j) in enumerate(game.melds[team]) if n + t + j] for team in range(nt)],
        "books": [[[s, n, t, j] for s, n, t, j in game.books[team]] for team in range(nt)],
        "stock": len(game.stock),
        "pile": len(game.discard),
        "top": game.discard[-1] if game.discard else -1,
        "blocked": int(bool(game.discard) and game.discard[-1] == BLACK3),
        "pending": list(game.pending) if any(game.pending) else None,
        "prov": int(game.prov_value or 0),
        "incomplete": int(game.incomplete),
        "permission": game.permission,
        "over": int(over),
        "winner": game.winner if game.phase == GAME_OVER and not round_over else None,
    }


def meld_kind(slot: int, twos: int, jokers: int) -> str:
    """``clean`` (no wilds), ``dirty`` (some wilds) or ``wild`` (the wild meld)."""
    return "wild" if slot == WILD_SLOT else ("clean" if twos + jokers == 0 else "dirty")


# =========================================================================== drawing
FELT = (27, 94, 53)
FELT_DARK = (18, 66, 37)
PANEL = (22, 78, 44)
INK = (235, 240, 230)
DIM = (170, 200, 175)
ACTIVE = (255, 214, 64)
KIND_COLOURS = {"clean": (76, 201, 110), "dirty": (240, 160, 50), "wild": (190, 110, 240)}
TEAM_COLOURS = ((110, 170, 255), (255, 130, 120), (120, 230, 200), (230, 200, 110))
CARD_W, CARD_H = 26, 36
STEP = 29                      # horizontal pitch of grouped cards


def _font_path(bold: bool) -> Optional[str]:
    spec = importlib.util.find_spec("matplotlib")
    for base in (spec.submodule_search_locations or []) if spec else []:
        p = os.path.join(base, "mpl-data", "fonts", "ttf", "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf")
        if os.path.isfile(p):
            return p
    return None


@lru_cache(maxsize=None)
def _font(size: int, bold: bool = False):
    path = _font_path(bold)
    if path:
        return ImageFont.truetype(path, size)
    try:
        return ImageFont.load_default(size)
    except TypeError:            # Pillow < 10.1: fixed bitmap font
        return ImageFont.load_default()


@lru_cache(maxsize=8192)
def _text(text: str, size: int, colour: Tuple[int, int, int], bold: bool = False):
    """(RGB image, mask) of ``text``, cached."""
    f = _font(size, bold)
    x0, y0, x1, y1 = f.getbbox(text or " ")
    w, h = max(1, x1), max(1, y1 + 2)
    mask = Image.new("L", (w, h), 0)
    ImageDraw.Draw(mask).text((0, 0), text, font=f, fill=255)
    return Image.new("RGB", (w, h), colour), mask


def _card_colour(kind: int) -> Tuple[int, int, int]:
    if kind in (TWO, JOKER):
        return (150, 60, 190)
    if kind == RED3:
        return (200, 30, 40)
    return (30, 30, 30)


@lru_cache(maxsize=None)
def _card(kind: int, dim: bool = False):
    """A small card face (RGBA) of ``kind``; ``dim``: a foot not yet picked up."""
    im = Image.new("RGBA", (CARD_W, CARD_H), (0, 0, 0, 0))
    d = ImageDraw.Draw(im)
    face = (205, 210, 200) if dim else (250, 248, 240)
    edge = (120, 60, 160) if kind in (TWO, JOKER) else (90, 90, 90)
    d.rounded_rectangle((0, 0, CARD_W - 1, CARD_H - 1), radius=4, fill=face, outline=edge,
                        width=2 if kind in (TWO, JOKER) else 1)
    label = "JK" if kind == JOKER else ("3" if kind in (RED3, BLACK3) else CODES[kind])
    f = _font(13 if len(label) < 2 else 11, True)
    d.text((CARD_W / 2, 11), label, font=f, fill=_card_colour(kind), anchor="mm")
    sym = {TWO: "\u2605", JOKER: "\u2605", RED3: "\u2665", BLACK3: "\u2660"}.get(kind)
    if sym:
        d.text((CARD_W / 2, 26), sym, font=_font(12, True), fill=_card_colour(kind), anchor="mm")
    return im


@lru_cache(maxsize=None)
def _card_back():
    im = Image.new("RGBA", (CARD_W, CARD_H), (0, 0, 0, 0))
    d = ImageDraw.Draw(im)
    d.rounded_rectangle((0, 0, CARD_W - 1, CARD_H - 1), radius=4, fill=(40, 70, 150), outline=(240, 240, 240))
    d.rectangle((4, 4, CARD_W - 5, CARD_H - 5), outline=(150, 180, 240))
    return im


@lru_cache(maxsize=None)
def _badge(n: int):
    """A count badge ``×n`` (RGBA)."""
    txt = str(n)
    f = _font(10, True)
    x0, y0, x1, y1 = f.getbbox(txt)
    w = max(15, x1 - x0 + 7)
    im = Image.new("RGBA", (w, 15), (0, 0, 0, 0))
    d = ImageDraw.Draw(im)
    d.rounded_rectangle((0, 0, w - 1, 14), radius=7, fill=(20, 20, 20), outline=(240, 240, 240))
    d.text((w / 2, 7.5), txt, font=f, fill=(255, 255, 255), anchor="mm")
    return im


@lru_cache(maxsize=None)
def _meld_sprite(slot: int, n: int, t: int, j: int, book: bool):
    """A meld as a small fan of its cards with a frame coloured by its kind (RGBA)."""
    # wilds behind, naturals in front: the front card shows the meld's rank
    cards = [JOKER] * j + [TWO] * t + ([slot] * n if slot < NUM_RANKS else [])
    pitch = 6
    w = CARD_W + pitch * (len(cards) - 1) + 6
    h = CARD_H + 6
    im = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    d = ImageDraw.Draw(im)
    colour = KIND_COLOURS[meld_kind(slot, t, j)]
    d.rounded_rectangle((0, 0, w - 1, h - 1), radius=5, fill=colour + (90 if book else 40,), outline=colour,
                        width=2 if book else 1)
    for i, k in enumerate(cards):
        c = _card(k)
        im.alpha_composite(c, (3 + i * pitch, 3))
    b = _badge(len(cards))
    im.alpha_composite(b, (w - b.size[0], h - b.size[1]))
    return im


class _Layout:
    """Where each seat, the piles and the team areas go for a player count."""
    def __init__(self, n: int, teams: int, team_of: Sequence[int], size=SIZE):
        self.W, self.H = size
        self.n, self.teams, self.team_of = n, teams, tuple(team_of)
        W, H = self.W, self.H
        top_h, side_w, bar = 112, 232, 30
        left, right, top = [1], [n - 1] if n > 2 else [], list(range(2, n - 1))
        if n == 3:
            top = []
        self.seats: Dict[int, Tuple[int, int, int, int]] = {}
        self.seats[0] = (side_w + 6, H - top_h - 4, W - 2 * side_w - 12, top_h)
        mid_y, mid_h = bar + top_h + 8, H - bar - 2 * top_h - 20
        for p in left:
            self.seats[p] = (6, mid_y - top_h // 2, side_w - 8, mid_h + top_h)
        for p in right:
            self.seats[p] = (W - side_w + 2, mid_y - top_h // 2, side_w - 8, mid_h + top_h)
        if top:
            w = (W - 2 * side_w - 12) // len(top)
            for i, p in enumerate(top):
                self.seats[p] = (side_w + 6 + i * w, bar + 4, w - 4, top_h)
        self.center = (side_w + 6, mid_y, W - 2 * side_w - 12, mid_h)
        self.bar = bar
        self.background = self._background()

    def _background(self):
        im = Image.new("RGB", (self.W, self.H), FELT_DARK)
        d = ImageDraw.Draw(im)
        d.rounded_rectangle((3, self.bar + 1, self.W - 4, self.H - 3), radius=28, fill=FELT, outline=(120, 80, 40),
                            width=3)
        d.rectangle((0, 0, self.W, self.bar - 1), fill=(16, 40, 24))
        for p, (x, y, w, h) in self.seats.items():
            d.rounded_rectangle((x, y, x + w, y + h), radius=8, fill=PANEL, outline=(40, 110, 65))
        return im


@lru_cache(maxsize=16)
def _layout(n: int, teams: int, team_of: tuple) -> _Layout:
    return _Layout(n, teams, team_of)


class _Canvas:
    def __init__(self, base):
        self.im = base.copy()

    def text(self, x: int, y: int, s: str, size: int = 12, colour=INK, bold: bool = False) -> int:
        img, mask = _text(s, size, colour, bold)
        self.im.paste(img, (int(x), int(y)), mask)
        return img.size[0]

    def sprite(self, x: int, y: int, sprite) -> None:
        self.im.paste(sprite, (int(x), int(y)), sprite)


def _draw_counts(cv: _Canvas, x: int, y: int, w: int, counts: Sequence[int], dim: bool = False,
                 max_rows: int = 2) -> int:
    """Grouped cards (one face per kind with a count badge), wrapped into ``w``; returns the height used."""
    kinds = [k for k in range(NUM_KINDS) if counts[k]]
    if not kinds:
        return 0
    per_row = max(1, (w - CARD_W) // STEP + 1)
    rows = min(max_rows, (len(kinds) + per_row - 1) // per_row)
    per_row = (len(kinds) + rows - 1) // rows
    pitch = STEP if per_row <= 1 else min(STEP, (w - CARD_W) / (per_row - 1))
    for i, k in enumerate(kinds):
        r, c = divmod(i, per_row)
        cx, cy = x + c * pitch, y + r * (CARD_H + 4)
        cv.sprite(cx, cy, _card(k, dim))
        if counts[k] > 1:
            b = _badge(counts[k])
            cv.sprite(cx + CARD_W - b.size[0] + 4, cy + CARD_H - 10, b)
    return rows * (CARD_H + 4)


def _draw_team(cv: "_Canvas", snap: dict, t: int, cx: int, cw: int, ty: int, band: int) -> None:
    """Team ``t``'s band of the table's centre at height ``ty``: its name, books, red threes and melds."""
    tx = cx + 8
    col = TEAM_COLOURS[t % 4]
    tx += cv.text(tx, ty, f"Team {t}", 12, col, True) + 8
    bc = [0, 0, 0]
    for s, _n, tw, j in snap["books"][t]:
        bc[("clean", "dirty", "wild").index(meld_kind(s, tw, j))] += 1
    info = (("open" if snap["opened"][t] else "not opened") + f" \u00b7 red 3s {snap['red3'][t]}"
            + f" \u00b7 books {bc[0]} clean, {bc[1]} dirty, {bc[2]} wild")
    cv.text(tx, ty + 2, info, 11, DIM)
    if snap["red3"][t]:
        r3 = _card(RED3)
        for i in range(min(snap["red3"][t], 6)):
            cv.sprite(cx + cw - 12 - CARD_W - i * 6, ty - 2, r3)
    mx, my = cx + 8, ty + 18
    row_h = CARD_H + 10
    items = [(m, True) for m in snap["books"][t]] + [(m, False) for m in snap["melds"][t]]
    for (s, nn, tw, j), book in items:
        sp = _meld_sprite(s, nn, tw, j, book)
        if mx + sp.size[0] > cx + cw - 4:
            mx, my = cx + 8, my + row_h
            if my + row_h > ty + band + 4:
                break
        cv.sprite(mx, my, sp)
        mx += sp.size[0] + 5


def render_rgb(snap: dict, team_of: Sequence[int], caption: str = "") -> np.ndarray:
    """Draw a :func:`table_snapshot` as a ``uint8`` array ``(H, W, 3)``.

    ``team_of``: the team of each seat; ``caption``: a line for the top bar
    (the action just taken).
    """
    n = len(snap["hands"])
    nt = len(snap["scores"])
    lay = _layout(n, nt, tuple(team_of))
    cv = _Canvas(lay.background)
    # top bar
    x = 10
    x += cv.text(x, 7, f"Round {snap['round']}/{snap['rounds']}", 14, INK, True) + 12
    x += cv.text(x, 9, f"minimum {snap['minimum']}   dealer player_{snap['dealer']}", 12, DIM) + 18
    for t in range(nt):
        x += cv.text(x, 7, f"Team {t}: {snap['scores'][t]}", 14, TEAM_COLOURS[t % 4], True) + 14
    if caption:
        img, _ = _text(caption, 12, INK)
        cv.text(max(x + 10, lay.W - img.size[0] - 12), 9, caption, 12, ACTIVE)
    # seats
    d = None
    for p, (sx, sy, sw, sh) in lay.seats.items():
        t = team_of[p]
        acting = p == snap["current"]
        if acting:
            d = d or ImageDraw.Draw(cv.im)
            d.rounded_rectangle((sx, sy, sx + sw, sy + sh), radius=8, outline=ACTIVE, width=3)
        hand = snap["hands"][p]
        foot = snap["feet"][p]
        where = "hand" if foot is not None else "foot"
        label = f"player_{p}"
        lx = sx + 8
        lx += cv.text(lx, sy + 5, label, 13, TEAM_COLOURS[t % 4], True) + 6
        state = f"team {t} \u00b7 {sum(hand)} in {where}"
        if foot is None:
            state += " \u00b7 played" if snap["played"][p] else ""
        else:
            state += f" \u00b7 foot {sum(foot)}"
        lx += cv.text(lx, sy + 7, state, 11, DIM) + 6
        if acting:
            ph = snap["phase"]
            cv.text(lx, sy + 6, "\u25b6 " + ("answers" if ph == "answer" else ph), 12, ACTIVE, True)
        y = sy + 24
        side = sw < 300
        rows = 3 if side else 2
        if foot is not None and not side:
            hw = (sw - 24) * 3 // 5
            _draw_counts(cv, sx + 8, y, hw, hand, max_rows=rows)
            cv.text(sx + 16 + hw, y - 14 + 2, "foot", 10, DIM)
            _draw_counts(cv, sx + 16 + hw, y, sw - hw - 24, foot, dim=True, max_rows=rows)
        else:
            used = _draw_counts(cv, sx + 8, y, sw - 16, hand, max_rows=rows)
            if foot is not None:
                y += max(used, CARD_H + 4) + 4
                cv.text(sx + 8, y, "foot (unseen by its owner)", 10, DIM)
                _draw_counts(cv, sx + 8, y + 14, sw - 16, foot, dim=True, max_rows=rows)
    # centre: piles
    cx, cy, cw, ch = lay.center
    px = cx + 8
    cv.sprite(px, cy + 4, _card_back())
    cv.text(px + CARD_W + 6, cy + 6, "stock", 11, DIM)
    cv.text(px + CARD_W + 6, cy + 20, str(snap["stock"]), 14, INK, True)
    px += 96
    if snap["top"] >= 0:
        cv.sprite(px, cy + 4, _card(snap["top"]))
    cv.text(px + CARD_W + 6, cy + 6, "pile", 11, DIM)
    cv.text(px + CARD_W + 6, cy + 20, str(snap["pile"]) + ("  blocked" if snap["blocked"] else ""), 14, INK, True)
    px += 140
    if snap["winner"] is not None or (snap["over"] and snap["current"] < 0 and snap["phase"] == "over"):
        w = snap["winner"]
        msg = "Game over: " + ("a draw" if w is None else f"team {w} wins")
        cv.text(px, cy + 12, msg, 15, ACTIVE, True)
    elif snap["pending"]:
        cv.text(px, cy + 12, f"opening: {snap['prov']} of {snap['minimum']}", 12, ACTIVE)
    # centre: teams
    y = cy + CARD_H + 14
    band = (cy + ch - y) // max(1, nt)
    for t in range(nt):
        _draw_team(cv, snap, t, cx, cw, y + t * band, band)
    return np.asarray(cv.im, dtype=np.uint8)


def render_game(game: Game, caption: Optional[str] = None) -> np.ndarray:
    """The full-view image of ``game`` (``uint8``, ``(H, W, 3)``); the caption defaults to the last action."""
    if caption is None:
        caption = ""
        if game.history:
            p, a = game.history[-1]
            caption = f"last: player_{p} {ACTION_NAMES[a]}"
    return render_rgb(table_snapshot(game), game.team_of, caption)


__all__ = ["SIZE", "table_snapshot", "render_rgb", "render_game", "meld_kind"]
