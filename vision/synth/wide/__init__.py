"""Wide scenes: many dice styles on many surfaces, seen by a camera at a slant under lamps --
the domain randomisation the reader trains on. :mod:`.scene` draws a random scene's values,
:mod:`.dice` draws each die in perspective, :mod:`.draw` renders the whole frame; the API is
re-exported by :mod:`vision.synth`."""
