"""Reviewing a draft or submission: every citation place answered, uncited claims, papers it fails to cite."""
