"""The pad: the camera's service loop and what it needs to turn a settled throw into actions.

Moved here whole from the flat ``server/pad_*.py`` modules (issue 34); each module says what it
owns.
"""
