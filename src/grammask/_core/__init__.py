"""Cython core of grammask."""
