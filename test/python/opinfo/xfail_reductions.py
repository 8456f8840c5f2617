"""Expected failures of the OpInfo sweep for the reductions area (see xfails.py for the
key format). Owned by the reductions engineer: delete an entry when its operator lands
(the run fails on an unexpected pass); every entry says why it fails.
Seeded from a real sweep by seed_xfails.py.
"""

XFAIL = {
}
