"""What ``bench/train_vision.py``, ``train_lite0.py`` and ``distil_value.py`` train with: the
samples, their augmentation and batches, the networks and the fitting loop (training only:
PyTorch is no runtime dependency)."""
