"""grammar front end"""
