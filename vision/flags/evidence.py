"""The verdicts on one die and the flags they make: the network's two probabilities, what the
rules beside it measured, and each flag with the cue that raised it and how sure it is.

Rules need no learning. A die rests on or against *another* die: STACKED needs another
(distinct, ``vision.flags.dice``) detection within ``FlagParams.stack_reach`` sides as well as
the model's verdict -- unless the verdict is very sure (``FlagParams.stacked_alone_threshold``):
a die squarely on top of another hides it, and the reader sees one die. What gives that stack
away is in the patch (the die below peeking out and showing side faces towards the image
centre, a longer shadow) and in its **size against the other dice** of the frame (it is nearer
the camera; a scalar of the features, and measured from the pips: ``vision.flags.size``). A lone
die the model is sure is stacked whose pips are squeezed is tilted, not on a die: COCKED
(:meth:`Evidence.alone_stack`). And a COCKED die with another die in reach leans on it: STACKED
too (``FlagParams.lean_is_stack``).

Each flag says how sure it is (:meth:`Evidence.decisions`, ``DieReading.flag_confidence``):
the network's probability when its verdict raised it, else the precision on renders of the
rule that did (``FlagParams.*_confidence``). On the clean, degraded and tray renders the
network's COCKED at 0.99 or more was right 1341 / 1344 times, STACKED 152 / 152 (``bench_synth
--only flags``: "by confidence"); a COCKED die leaning on its neighbour is STACKED 8 times in
10 (the rest lean on the rail beside it): that flag says 0.8. Dice tilted alone in the open
pad, which the network takes for dice on hidden dice, are the exception: STACKED "alone" was
right 45 of 231 times there (the re-roll is right; the name is not).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from enum import StrEnum

from vision.flags.params import FlagParams
from vision.reading import DieFlag, FaceSize


class Cue(StrEnum):
    """What raised a flag: the model's verdict, or one of the rules beside it."""

    MODEL = "model"  # the flags network's probability reached its threshold
    ALONE = "alone"  # ... its sure STACKED with no die in reach: on a die it hides
    SQUEEZE = "squeeze"  # a 4-6's pips squeezed one way, as by a tilt (COCKED)
    LEAN = "lean"  # COCKED with another die in reach: leaning on it (STACKED)
    SIZE = "size"  # larger than the flat dice beside it (STACKED)
    SIZE_LEARNT = "size-learnt"  # larger than the pad's learnt flat size (STACKED)


@dataclass(frozen=True)
class Decision:
    """One cue raising one flag, and how sure it is (0-1)."""

    flag: DieFlag
    cue: Cue
    confidence: float


@dataclass(frozen=True)
class Evidence:
    """The verdicts on one die, as probabilities, and the flags they make.

    A die tilted enough to be COCKED with another die in reach is leaning on it, so it is
    STACKED as well (``FlagParams.lean_is_stack``): on renders it adds a tenth of the dice
    leaning on a die to STACKED (with the previous model: 63 -> 72 %) at no cost to flat dice,
    whose flags it cannot change (it needs COCKED first); the games treat the two flags alike
    (RULES.md D-16, Y16, B16)."""

    cocked: float
    stacked: float
    _: KW_ONLY  # the cues by name: they are many, and a positional one could shift silently
    touching: bool = True  # another distinct die is within ``FlagParams.stack_reach`` sides
    size_ratio: float | None = None  # top face over the flat dice's, from the pips (or unknown)
    size_learnt: bool = False  # ... over the pad's learnt flat size (no flat die to compare)
    squeezed: bool = False  # the pips' layout is squeezed one way, as by a tilt (squeeze_cues)
    face: FaceSize | None = None  # the top face measured from its pips, when a cue measured it

    def decisions(self, params: FlagParams = FlagParams()) -> tuple[Decision, ...]:
        """Every cue that raises a flag on this die, with how sure it is: the model's own
        probability, or a rule's precision measured on renders (``FlagParams.*_confidence``).
        A flag raised by several cues is as sure as the surest (:meth:`confidence`)."""
        out = []
        if self.cocked >= params.cocked_threshold:
            out.append(Decision(DieFlag.COCKED, Cue.MODEL, self.cocked))
        if self.squeezed:
            out.append(Decision(DieFlag.COCKED, Cue.SQUEEZE, params.squeeze_confidence))
        cocked = bool(out)
        if self.touching and self.stacked >= params.stacked_threshold:
            out.append(Decision(DieFlag.STACKED, Cue.MODEL, self.stacked))
        if self.alone_stack(params) and not self.squeezed:
            out.append(Decision(DieFlag.STACKED, Cue.ALONE, params.alone_confidence))
        if params.lean_is_stack and self.touching and cocked:
            out.append(Decision(DieFlag.STACKED, Cue.LEAN, params.lean_confidence))
        if self.larger(params):
            if self.size_learnt:
                out.append(
                    Decision(DieFlag.STACKED, Cue.SIZE_LEARNT, params.size_learnt_confidence)
                )
            else:
                out.append(Decision(DieFlag.STACKED, Cue.SIZE, params.size_confidence))
        return tuple(out)

    def flags(self, params: FlagParams = FlagParams()) -> frozenset[DieFlag]:
        return frozenset(d.flag for d in self.decisions(params))

    def confidence(self, flag: DieFlag, params: FlagParams = FlagParams()) -> float | None:
        """How sure the flag is, in [0, 1] (the surest of the cues raising it), or None when
        no cue raises it."""
        return max((d.confidence for d in self.decisions(params) if d.flag is flag), default=None)

    def alone_stack(self, params: FlagParams = FlagParams()) -> bool:
        """The model is very sure of a stack with no other die in reach: a die squarely on a
        die it hides -- or a die tilted alone, which looks the same to it; a squeezed pip
        layout tells the tilt (a die lying on a die lies flat on it), so then it is COCKED."""
        return not self.touching and self.stacked >= params.stacked_alone_threshold

    def larger(self, params: FlagParams = FlagParams()) -> bool:
        """The size cue: the die's top face, measured from its pips (``vision.pipsize``), is
        ``FlagParams.size_ratio`` times the flat dice's or more -- nearer the camera, so on a
        die -- and the model does not rule a stack out (``FlagParams.size_gate``). A die on a
        die is one die nearer a camera many dice up: 4-8 % larger for the product's, so a
        ratio past ``FlagParams.size_ratio_max`` says a die compared with was not flat (a
        tilted 2 the model missed looks 20 % small), not that this one is stacked. Neither
        cue alone is enough at the bar's false-flag budget against the dice of the frame;
        together they catch most dice squarely on another that the model alone misses (see
        ``vision.flags.size.size_cues``). Against the pad's learnt flat size (``size_learnt``) no
        gate is needed, only ``FlagParams.size_ratio_learnt``: no neighbour that may itself be
        misjudged enters, and the learnt size is the median of many flat dice (that the frame's
        other dice bear it out, or that the model gives a lone die some chance of a stack, is
        checked where it is measured: ``vision.flags.size._learnt_size_borne_out``). Measured
        against it, the flat dice of 2 x 100 cameras' renders (clean / degraded / tray, each
        camera's size learnt from three rolls) came out at most 1.024 / 1.030 / 1.024 times it
        (1001 / 586 / 1507 dice), and 12 of the 13 dice squarely on a die that the model and
        the gated cue missed, and whose pips measured well, at 1.047-1.072 (one at 1.025)."""
        if not (
            params.size_ratio > 0.0
            and self.size_ratio is not None
            and self.size_ratio <= params.size_ratio_max
        ):
            return False
        if self.size_learnt:
            return 0.0 < params.size_ratio_learnt <= self.size_ratio
        return self.size_ratio >= params.size_ratio and self.stacked >= params.size_gate
