"""Expected failures of the OpInfo sweep for the linalg area (see xfails.py for the
key format): torch.linalg.solve_triangular (decomp_linalg.py). Owned by the
linalg engineer: delete an entry when it passes (the run fails on an unexpected
pass); every entry says why it fails.
"""

XFAIL = {
}
