"""What other libraries need to know about the flagos device, taught at import.

``hf``: accelerate, transformers and diffusers (docs/huggingface.md).
"""
