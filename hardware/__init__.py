"""Frame sources, buttons and the clock: the edges of dicepad, each with a first-class fake.

- :mod:`hardware.sources` — ``open_source(spec)`` / :class:`~hardware.sources.SourceOpener`:
  ``demo``, ``picamera2``, ``opencv:N``, ``files:DIR``, ``faulty:PLAN:SPEC``, ``none``;
- :mod:`hardware.frames` — the :class:`~hardware.frames.FrameSource` contract and
  :class:`~hardware.frames.Frame`;
- :mod:`hardware.supervisor` — :class:`~hardware.supervisor.CameraSupervisor`: stalls, errors,
  garbage and reconnects, published as a :class:`~hardware.supervisor.CameraStatus`;
- :mod:`hardware.faulty` — injected faults for tests and rehearsals;
- :mod:`hardware.recorder` — record frames as JPEGs for a later ``files:DIR`` replay;
- :mod:`hardware.buttons` — the bank/undo buttons and status LED (gpiozero, optional);
- :mod:`hardware.clock` — the real clock and :class:`~hardware.clock.ManualClock`;
- :mod:`hardware.closing` — the context-manager mixin every closeable edge shares.

Nothing is imported here, so ``import hardware.buttons`` does not pull in OpenCV.
"""
