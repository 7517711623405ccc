"""The release: the describer (private table and profile in, Description out), the Description, the manifest.
The describer is the boundary's front door: it takes the private table, encodes it and runs the engine.
Hands on the Description (JSON, shareable as it is) and the manifest; all that follows is post-processing.
"""
