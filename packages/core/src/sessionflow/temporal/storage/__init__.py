"""Payload storage: the payload store and its drivers (a local folder, S3), bodies by
reference, the data converter's compact JSON, the codec and encryption, and clean-up.

Public names are in `sessionflow.temporal`. The modules are private.
"""
