"""attn from Python: translation, scoring, classification, training and weights.

    import attn
    translator = attn.Translator("runs/ende")
    translator.translate_batch(["Hello world."])[0].hypotheses[0]

The classes are attn's C++ (the extension attn._attn) over the same code as the attn binary, so
their results are the binary's. docs/python.md describes every function.
"""
from ._attn import (Classifier, Error, Model, TranslationResult, Translator, load_model,  # noqa: F401
                    save_model)
from ._training import train  # noqa: F401

__all__ = ["Classifier", "Error", "Model", "TranslationResult", "Translator", "load_model", "save_model", "train"]
