"""The fixed action table (docs/interface.md "Action names").

Ids are stable for a given table size; the table does not depend on the rule
config, so one network can play every preset.

====================  ===========  ==================================================
ids                   name         meaning
====================  ===========  ==================================================
0                     draw         draw two cards from the stock
1                     pickup       take the discard pile (docs/rules.md 4.3)
2                     lay_red_three lay one red three, draw its replacement
3                     cancel_melds take back the provisional melds of an unopened team
4                     ask_go_out   ask the partner for permission to go out
5                     answer_yes   the partner's answer
6                     answer_no
7 .. 20               discard:C    discard one card of code C (all codes but 3R)
21 .. 21+N_MELD-1     meld:R:N:T:J N naturals of rank R plus T twos and J jokers onto
                                   the team's unfinished meld of R (or start one);
                                   R = W is the wild meld (N = 0)
====================  ===========  ==================================================

Meld actions add 1..7 cards.  For a natural rank at most 3 wilds are added in
one action (no legal meld of at most 7 cards holds more under either wild
limit): 59 actions per rank.  The wild meld has the 35 (T, J) pairs with
1 <= T + J <= 7.  In all 7 + 14 + 11 x 59 + 35 = 705 actions.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from .cards import CODES, NUM_RANKS, RED3, SLOT_CODES, WILD_SLOT

DRAW, PICKUP, LAY_RED_THREE, CANCEL_MELDS, ASK_GO_OUT, ANSWER_YES, ANSWER_NO = range(7)
DISCARD_KINDS: Tuple[int, ...] = tuple(k for k in range(len(CODES)) if k != RED3)
DISCARD_BASE = 7
#: kind -> discard action id (-1 for the red three)
DISCARD_ACTION: Tuple[int, ...] = tuple(
    DISCARD_BASE + DISCARD_KINDS.index(k) if k != RED3 else -1 for k in range(len(CODES)))
MELD_BASE = DISCARD_BASE + len(DISCARD_KINDS)

#: for each meld action (offset from MELD_BASE): (slot, naturals, twos, jokers)
MELD_SPECS: List[Tuple[int, int, int, int]] = []
for _slot in range(NUM_RANKS):
    for _w in range(4):
        for _t in range(_w + 1):
            _j = _w - _t
            for _n in range(max(0, 1 - _w), 8 - _w):
                MELD_SPECS.append((_slot, _n, _t, _j))
for _t in range(8):
    for _j in range(8 - _t):
        if _t + _j >= 1:
            MELD_SPECS.append((WILD_SLOT, 0, _t, _j))

NUM_ACTIONS = MELD_BASE + len(MELD_SPECS)

ACTION_NAMES: List[str] = (
    ["draw", "pickup", "lay_red_three", "cancel_melds", "ask_go_out", "answer_yes", "answer_no"]
    + [f"discard:{CODES[k]}" for k in DISCARD_KINDS]
    + [f"meld:{SLOT_CODES[s]}:{n}:{t}:{j}" for (s, n, t, j) in MELD_SPECS]
)
ACTION_INDEX: Dict[str, int] = {n: i for i, n in enumerate(ACTION_NAMES)}
#: (slot, n, t, j) -> action id
MELD_ACTION: Dict[Tuple[int, int, int, int], int] = {
    spec: MELD_BASE + i for i, spec in enumerate(MELD_SPECS)}
#: per slot, its meld actions as (action id, n, t, j), fewest cards first
MELDS_BY_SLOT: List[List[Tuple[int, int, int, int]]] = [[] for _ in range(len(SLOT_CODES))]
for _i, (_s, _n, _t, _j) in enumerate(MELD_SPECS):
    MELDS_BY_SLOT[_s].append((MELD_BASE + _i, _n, _t, _j))


def action_index(name: str) -> int:
    """Id of an action name; ``KeyError`` naming the unknown action."""
    try:
        return ACTION_INDEX[name]
    except KeyError:
        raise KeyError(f"unknown action name {name!r}") from None


def action_name(action: int) -> str:
    if not 0 <= int(action) < NUM_ACTIONS:
        raise KeyError(f"action id {action!r} out of range 0..{NUM_ACTIONS - 1}")
    return ACTION_NAMES[int(action)]


def _action_features():
    """The feature table of :data:`ACTION_FEATURES` (built once at import)."""
    names = (["kind:" + k for k in ("draw", "pickup", "lay_red_three", "cancel_melds", "ask_go_out",
                                    "answer_yes", "answer_no", "discard", "meld")]
             + ["card:" + c for c in CODES] + ["wild_meld", "naturals", "twos", "jokers", "cards"])
    col = {n: i for i, n in enumerate(names)}
    f = np.zeros((NUM_ACTIONS, len(names)), np.float32)
    for a in range(DISCARD_BASE):
        f[a, a] = 1.0
    for k in DISCARD_KINDS:
        a = DISCARD_ACTION[k]
        f[a, col["kind:discard"]] = 1.0
        f[a, col["card:" + CODES[k]]] = 1.0
    for a, (slot, n, t, j) in enumerate(MELD_SPECS, start=MELD_BASE):
        f[a, col["kind:meld"]] = 1.0
        if slot == WILD_SLOT:
            f[a, col["wild_meld"]] = 1.0
        else:
            f[a, col["card:" + CODES[slot]]] = 1.0
        f[a, col["naturals"]], f[a, col["twos"]], f[a, col["jokers"]] = n / 7.0, t / 7.0, j / 7.0
        f[a, col["cards"]] = (n + t + j) / 7.0
    f.setflags(write=False)
    return f, tuple(names)


#: one row per action id describing the action itself (for action-value networks, Q(s, a)):
#: its kind (one-hot of draw, pickup, lay_red_three, cancel_melds, ask_go_out, answer_yes,
#: answer_no, discard, meld), the card it names (one-hot over the card codes: the discarded card,
#: or the natural rank of a meld), whether it is the wild meld, and a meld's naturals, twos,
#: jokers and card count, each / 7.  Read-only; :data:`ACTION_FEATURE_NAMES` names the columns.
ACTION_FEATURES, ACTION_FEATURE_NAMES = _action_features()
