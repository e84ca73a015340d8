"""The browser table, ``handfoot serve`` (docs/playing.md, the JSON API in docs/interface.md).

============  ================================================================
module        holds
============  ================================================================
``messages``  what a seat (or a spectator) is sent, built from its SeatView only
``public``    a table's public facts: action labels, a finished round's sheet and board,
              the round's going-out books and first-meld minimum
``store``     the SQLite file: tables and one row per applied action
``rooms``     one table in play (game, agents, seat tokens) and the set of them
``server``    the starlette application: pages, JSON API, websocket, limits
``serve``     the ``handfoot serve`` command (uvicorn)
============  ================================================================

``messages``, ``public``, ``store`` and ``rooms`` need nothing beyond the main install;
``server`` and ``serve`` need the ``web`` extra (starlette, uvicorn, websockets).
"""
