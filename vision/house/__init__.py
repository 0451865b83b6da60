"""The house's own dice (Vision IV): examples a person vouched for, and the house model fitted
on them that adapts the reader to them (``read_roll(..., house=...)``)."""

from vision.house.examples import MAX_EXAMPLES, NOT_A_DIE, ORIGINS, Example, HouseSet
from vision.house.model import HouseGuess, HouseModel, fit, look
from vision.house.store import HouseFolderError, house_model, load_set, save_set

__all__ = [
    "MAX_EXAMPLES",
    "NOT_A_DIE",
    "ORIGINS",
    "Example",
    "HouseFolderError",
    "HouseGuess",
    "HouseModel",
    "HouseSet",
    "fit",
    "house_model",
    "load_set",
    "look",
    "save_set",
]
