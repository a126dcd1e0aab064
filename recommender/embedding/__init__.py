"""Sentence encoders shipped in Python packages (PyTorch or ONNX Runtime) and the cache of their embeddings."""
