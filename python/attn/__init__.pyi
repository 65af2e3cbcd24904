# Type stubs of the package attn (the extension attn._attn and attn._training), for editors.
# docs/python.md describes every argument; None for an option means the binary's default.
from os import PathLike
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

Source = Union[str, Sequence[str], Sequence[int]]  # text, SentencePiece pieces, or token ids

class Error(RuntimeError):
    """An error of attn's (the binary prints it as 'error: ...' and exits non-zero)."""

class TranslationResult:
    hypotheses: List[Any]  # best first: str for text sources, token lists for piece/id sources
    tokens: List[List[str]]  # the SentencePiece pieces of each hypothesis
    ids: List[List[int]]  # their ids (no bos, no eos)
    scores: List[float]  # log-prob over the length penalty (with return_scores)
    logprobs: List[float]  # total log-prob (with return_scores)
    alignment: List[npt.NDArray[np.int64]]  # [links, 2] (source, target) pairs (with return_alignment)
    attention: List[npt.NDArray[np.float32]]  # [target tokens, source tokens] (with return_attention)

class Translator:
    model_dirs: List[str]
    def __init__(
        self,
        model_dir: Union[str, PathLike, Sequence[Union[str, PathLike]]],
        precision: Optional[str] = None,  # fp32, bf16, int8; None: the model's own
        threads: Optional[int] = None,
        ensemble_weights: Optional[str] = None,  # "0.6,0.4" for two model_dirs
        shortlist: Optional[Union[str, PathLike]] = None,  # a file of attn shortlist, used by every translation
    ) -> None: ...
    def translate_batch(
        self,
        sources: Sequence[Source],
        target_prefix: Optional[Sequence[Optional[Source]]] = None,
        max_batch_size: int = 32,
        batch_type: str = "examples",  # or "tokens"
        return_scores: bool = False,
        return_alignment: bool = False,
        return_attention: bool = False,
        *,
        beam_size: Optional[int] = None,  # 4
        num_hypotheses: Optional[int] = None,  # 1
        length_penalty: Optional[float] = None,  # 0.6
        max_decoding_length: Optional[int] = None,  # source length + 50
        max_length: Optional[int] = None,  # the same as max_decoding_length
        min_decoding_length: Optional[int] = None,
        max_len_a: Optional[float] = None,
        max_len_b: Optional[int] = None,
        sampling_topk: Optional[int] = None,
        sampling_topp: Optional[float] = None,
        sampling_temperature: Optional[float] = None,
        seed: Optional[int] = None,
        no_repeat_ngram_size: Optional[int] = None,
        repetition_penalty: Optional[float] = None,
        alignment_layer: Optional[int] = None,
        on_long: Optional[str] = None,  # split, truncate, error
    ) -> List[TranslationResult]: ...
    def translate_file(
        self,
        input_path: str,
        output_path: str,
        progress: Optional[bool] = None,  # None: when stderr is a terminal
        max_batch_size: int = 32,
        batch_type: str = "examples",
        **options: Any,  # translate_batch's decoding options
    ) -> None: ...
    def score_batch(
        self, sources: Sequence[Union[str, Sequence[int]]], targets: Sequence[Union[str, Sequence[int]]],
        max_batch_size: int = 32,
    ) -> List[float]: ...

class Classifier:
    labels: List[str]
    def __init__(self, model_dir: str, precision: Optional[str] = None, threads: Optional[int] = None) -> None: ...
    def classify_batch(
        self, texts: Sequence[str], top_k: int = 1, max_batch_size: int = 256
    ) -> List[List[Tuple[str, float]]]: ...

class Model:
    model_dir: str
    config: Dict[str, Any]
    def weights(self, writable: bool = False) -> Dict[str, npt.NDArray[np.float32]]: ...

def load_model(model_dir: str) -> Model: ...
def save_model(model_dir: str, config: Dict[str, Any], weights: Dict[str, npt.ArrayLike]) -> None: ...
def train(
    config: Union[None, str, PathLike, Dict[str, Any]] = None,
    callback: Optional[Callable[[Dict[str, Any]], None]] = None,
    resume: bool = False,
    **overrides: Any,
) -> str: ...
