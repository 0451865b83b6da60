"""What ``bench/train_flags.py`` trains the COCKED / STACKED network with: the samples (the
reader's detections on renders, labelled from the truth, cached), their augmentation and the
fitting loop, the network and its deployed ONNX form (training only: PyTorch is no runtime
dependency)."""
