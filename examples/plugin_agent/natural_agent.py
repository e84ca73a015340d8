"""A plug-in agent for handfoot: ``handfoot evaluate --agents py:natural_agent:NaturalAgent greedy``
(with this folder on PYTHONPATH), or installed with ``pip install -e examples/plugin_agent`` as ``natural``.

It plays like the greedy agent, but melds its natural cards before its wild ones.
"""
from agents.base import Agent
from agents.heuristics import GreedyAgent, books_ok, discard_options, meld_options
from handfoot_env.actions import ANSWER_YES, ASK_GO_OUT, CANCEL_MELDS, DRAW, LAY_RED_THREE, PICKUP


class NaturalAgent(Agent):
    name = "natural"

    def act(self, observation, view):
        legal = view.legal_actions
        for a in (ANSWER_YES, LAY_RED_THREE, PICKUP, DRAW):
            if a in legal:
                return a
        if ASK_GO_OUT in legal and books_ok(view):
            return ASK_GO_OUT
        melds = meld_options(legal)            # (action id, slot, naturals, twos, jokers)
        if melds:                              # most naturals first, then fewest wilds
            return max(melds, key=lambda m: (m[2], -(m[3] + m[4]), -m[0]))[0]
        discards = discard_options(legal)
        if discards:
            return GreedyAgent._discard(view, discards)
        return CANCEL_MELDS if CANCEL_MELDS in legal else legal[0]
