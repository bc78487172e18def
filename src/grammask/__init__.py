"""grammask bootstrap"""
