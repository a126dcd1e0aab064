"""Offline evaluation: query sets (`queries`), ranking metrics (`metrics`), method comparison (`evaluate`)."""
