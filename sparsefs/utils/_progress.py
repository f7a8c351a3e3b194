"""The progress bar of long fits (docs/contract.md, "Progress")."""

from tqdm.auto import tqdm


def fit_progress(total: int, desc: str, enabled) -> tqdm:
    """A tqdm bar on stderr over ``total`` steps of a fit, shown only when ``enabled`` (the
    estimator's ``verbose``). Each step is seconds to minutes of work, so every update is
    drawn (no rate limit); the bar is cleared when the fit ends."""
    return tqdm(total=total, desc=desc, unit="path", disable=not enabled, leave=False,
                mininterval=0, miniters=1)
