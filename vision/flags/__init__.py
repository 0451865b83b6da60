"""COCKED and STACKED: is a die flat on the pad, and is it on or against another die?

No public reader judges these and no public photo set labels them, so the judgement is learned
from :mod:`vision.synth` renders, whose ground truth is exact, by a small convolutional network
(``vision/flags.onnx``, trained by ``bench/train_flags.py``; ONNX Runtime at run time, well
under a millisecond per die), and rules beside it weigh what the network alone gets wrong. One
module a job, in the order a die goes through them:

- ``dice``: what the reader knows of each die (``DieView``), which detections are other dice
  (two closer than half a side are one die seen twice) and how near the nearest one is;
- ``features``: what the network is shown of each die: a patch turned to the die and scaled to
  its top face, its perspective offset, its nearest neighbour, its size against the other dice;
- ``network``: the network (``FlagModel``, ``load_model``, ``MODEL_PATH``), its inputs and the
  mirrored views it is asked about;
- ``size``: the cues measured from the pips (``vision.pipsize``): a die larger than the flat
  dice lies on a die, a 4-6 whose layout is squeezed one way is tilted;
- ``evidence``: the verdicts on one die and the flags they make (the network's, and the rules':
  alone, lean, squeeze, size), each with the cue that raised it and how sure it is;
- ``params``: the thresholds (``FlagParams``) and the measurements they were chosen on;
- ``judging``: ``judge``, every die of a frame in one batched pass: the call the reader makes.

This package re-exports its contract: what the reader calls and configures (``judge``,
``DieView``, ``FlagParams``: ``vision.detect``, ``vision.params``), what ``judge`` returns and
takes (``Evidence`` with its ``Decision`` and ``Cue``, ``FlagModel``), and the shipped network
with its loader (``MODEL_PATH``, ``load_model``: the benchmarks, the training script and the
runtime tests). Everything else is imported from its own module.
"""

from vision.flags.dice import DieView
from vision.flags.evidence import Cue, Decision, Evidence
from vision.flags.judging import judge
from vision.flags.network import MODEL_PATH, FlagModel, load_model
from vision.flags.params import FlagParams

__all__ = [
    "MODEL_PATH",
    "Cue",
    "Decision",
    "DieView",
    "Evidence",
    "FlagModel",
    "FlagParams",
    "judge",
    "load_model",
]
