"""End to end with SmolLM2-135M-Instruct through llama-cpp-python (n_threads=1).

Oracles: ``json.loads`` + ``jsonschema`` for schema outputs, Python ``regex``
for regex outputs, ``support/ast_reference.py``'s ReferenceRecognizer over the GBNF
grammar's AST for GBNF outputs.  Greedy decoding keeps runs reproducible;
max_tokens stays small so the whole file runs in well under two minutes on
two cores.
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest
import llama_cpp
import regex

import grammask
from grammask.grammar.gbnf import parse_gbnf
from grammask.integrations import IncompleteOutputWarning
from support.paths import workload
from support.ast_reference import ReferenceRecognizer

from grammask.integrations.llama_cpp import (
    GrammaskLogitsProcessor,
    compile_for,
    default_model_path,
    generate,
    load_model,
    vocabulary_for,
)

PERSON_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 30},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "city": {"type": "string", "minLength": 1, "maxLength": 30},
    },
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}

PEOPLE = [
    ("Alice", 31, "Paris"), ("Bob", 45, "Berlin"), ("Carmen", 27, "Madrid"), ("Dmitri", 52, "Moscow"),
    ("Emeka", 38, "Lagos"), ("Fatima", 23, "Cairo"), ("Giulia", 64, "Rome"), ("Hiro", 41, "Osaka"),
    ("Ingrid", 35, "Oslo"), ("Jorge", 29, "Lima"), ("Kofi", 57, "Accra"), ("Lena", 19, "Vienna"),
    ("Mateo", 33, "Bogota"), ("Nadia", 48, "Warsaw"), ("Omar", 26, "Amman"), ("Priya", 39, "Delhi"),
    ("Quentin", 61, "Lyon"), ("Rosa", 22, "Havana"), ("Sven", 44, "Malmo"), ("Tariq", 30, "Doha"),
]


@pytest.fixture(scope="module")
def llm():
    return load_model(default_model_path(), n_ctx=1024)


@pytest.fixture(scope="module")
def person_compiled(llm):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled, is_json = compile_for(llm, PERSON_SCHEMA)
    assert is_json
    return compiled


def test_default_model_is_found_without_importing_its_package():
    assert default_model_path().endswith("SmolLM2-135M-Instruct.Q4_1.gguf")


def test_vocabulary_eos_ids_include_the_models_end_of_turn(llm):
    vocab = vocabulary_for(llm)
    assert vocab is vocabulary_for(llm)
    assert llm.token_eos() in vocab.eos_token_ids
    assert vocab.size == llm.n_vocab()


def test_20_prompts_give_schema_valid_json(llm, person_compiled):
    import jsonschema
    validator = jsonschema.Draft202012Validator(PERSON_SCHEMA)
    n_exact = 0
    for name, age, city in PEOPLE:
        prompt = (f"{name} is {age} years old and lives in {city}. "
                  f"Extract name, age and city as a JSON object.")
        result = generate(llm, person_compiled, prompt, max_tokens=64, json_output=True)
        document = json.loads(result.text)
        assert validator.is_valid(document), result.text
        assert result.complete and result.finish_reason == "stop"
        assert result.engine.is_finished()
        assert result.data == document
        assert result.text.endswith("}"), "the output ends at the close of the root object"
        assert result.text.startswith("{"), "no leading whitespace"
        assert document["name"]  # minLength 1 holds in the model's output
        n_exact += document == {"name": name, "age": age, "city": city}
    assert n_exact >= 10, "the model should copy most facts correctly under the schema"


def test_schema_dict_gives_parsed_data(llm):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = generate(llm, PERSON_SCHEMA, "Ada Lovelace, 36, lived in London. Give her as JSON.",
                          max_tokens=64, schema_options={"whitespace": "compact"})
    assert result.complete
    assert result.data == json.loads(result.text)
    assert result.text == json.dumps(result.data, separators=(",", ":"), ensure_ascii=False)
    assert set(result.data) == {"name", "age", "city"}


def test_gbnf_list_outputs_are_sentences_of_the_grammar(llm):
    text = workload("gbnf", "list.gbnf").read_text(encoding="utf-8")
    reference = ReferenceRecognizer(parse_gbnf(text))
    grammar = grammask.Grammar.from_gbnf(text)
    n_complete = 0
    for topic in ["fruits", "colours", "planets"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IncompleteOutputWarning)
            result = generate(llm, grammar, f"List three {topic}, one per line.", max_tokens=40)
        data = result.engine.output_bytes()
        if result.complete:
            assert reference.accepts(data), data
            n_complete += 1
        else:
            assert reference.viable_prefix(data) and not reference.accepts(data), data
        assert result.text.startswith("- ")
    assert n_complete >= 1


def test_gbnf_chess_outputs_are_viable(llm):
    text = workload("gbnf", "chess.gbnf").read_text(encoding="utf-8")
    reference = ReferenceRecognizer(parse_gbnf(text))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteOutputWarning)
        result = generate(llm, grammask.Grammar.from_gbnf(text), "Write the moves of a short chess game.",
                          max_tokens=40)
    data = result.engine.output_bytes()
    assert data.startswith(b"1. ")
    assert reference.accepts(data) if result.complete else reference.viable_prefix(data)


def test_truncation_caveat_is_reported(llm, person_compiled):
    with pytest.warns(IncompleteOutputWarning, match="valid prefix"):
        result = generate(llm, person_compiled, "Alice is 31 and lives in Paris. As JSON please.",
                          max_tokens=4)
    assert not result.complete and result.finish_reason == "length"
    assert result.data is None
    assert not result.engine.is_finished() and not result.engine.can_end()
    assert result.n_tokens == 4
    assert result.text.startswith("{")
    with pytest.raises(json.JSONDecodeError):
        json.loads(result.text)


def test_grammar_end_stops_generation_with_eos(llm):
    grammar = grammask.Grammar.from_regex("(yes|no)")
    result = generate(llm, grammar, "Is Paris in France? Answer yes or no.", max_tokens=10)
    assert result.text in ("yes", "no")
    assert result.complete and result.finish_reason == "stop"
    assert result.n_tokens <= 2


def test_processor_in_create_completion_and_reuse_across_calls(llm):
    compiled, _ = compile_for(llm, grammask.Grammar.from_regex("[A-Z][a-z]{2,8}, [A-Z][a-z]{2,8}"))
    processor = GrammaskLogitsProcessor(compiled, max_tokens=12)
    pattern = regex.compile("[A-Z][a-z]{2,8}, [A-Z][a-z]{2,8}")
    for prompt in ["Two cities: ", "Two names of people: ", "Two cities: "]:
        llm.create_completion(prompt, max_tokens=13, temperature=0.0,
                              logits_processor=llama_cpp.LogitsProcessorList([processor]))
        processor.raise_if_failed()
        output = processor.engine.output_bytes().decode()
        assert pattern.fullmatch(output, partial=True), output
        assert processor.prompt_length == len(llm.tokenize(prompt.encode()))
        assert len(processor.generated_token_ids) <= 12


def test_processor_masks_a_strided_view_in_place(llm):
    compiled, _ = compile_for(llm, grammask.Grammar.from_regex("[0-9]{3}"))
    processor = GrammaskLogitsProcessor(compiled)
    n_vocab = llm.n_vocab()
    records = np.zeros(n_vocab, dtype=np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)],
                                               align=True))
    records["logit"] = np.linspace(0.0, 1.0, n_vocab, dtype=np.float32)
    scores = records["logit"]
    assert not scores.flags["C_CONTIGUOUS"]
    prompt = np.asarray(llm.tokenize(b"Three digits: "), dtype=np.int32)
    returned = processor(prompt, scores)
    processor.raise_if_failed()
    allowed = np.flatnonzero(np.isfinite(records["logit"]))
    pieces = [vocabulary_for(llm).token_bytes[token_id] for token_id in allowed]
    assert returned is scores
    assert pieces and all(regex.fullmatch("[0-9]{1,3}", piece.decode()) for piece in pieces)


def test_an_error_in_the_callback_stops_generation_and_is_reraised(llm):
    compiled, _ = compile_for(llm, grammask.Grammar.from_regex("[0-9]+"))
    processor = GrammaskLogitsProcessor(compiled)
    prompt = llm.tokenize(b"Digits: ")
    letter = llm.tokenize(b"hello", add_bos=False)[0]
    scores = np.zeros(llm.n_vocab(), dtype=np.float32)
    processor(np.asarray(prompt, dtype=np.int32), scores)
    scores = np.zeros(llm.n_vocab(), dtype=np.float32)
    processor(np.asarray(prompt + [letter], dtype=np.int32), scores)
    assert isinstance(processor.error, grammask.TokenRejected)
    assert set(np.flatnonzero(np.isfinite(scores)).tolist()) == set(vocabulary_for(llm).eos_token_ids)
    with pytest.raises(grammask.TokenRejected):
        processor.raise_if_failed()


def test_generate_rejects_stop_strings(llm, person_compiled):
    with pytest.raises(TypeError, match="stop"):
        generate(llm, person_compiled, "x", stop=["}"])


def _load_example(name: str):
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, os.path.dirname(path)


@pytest.mark.parametrize("name, schema_file", [("extract_person", "person.json"),
                                               ("list_of_objects", "books.json"),
                                               ("function_call", "tool_call.json")])
def test_json_examples_produce_valid_documents(llm, capsys, name, schema_file):
    import jsonschema
    module, folder = _load_example(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = module.main([], llm=llm)
    assert result.complete, result.text
    with open(os.path.join(folder, "schemas", schema_file), encoding="utf-8") as handle:
        jsonschema.validate(json.loads(result.text), json.load(handle))
    assert capsys.readouterr().out.strip()


def test_gbnf_example_output_is_a_viable_sentence_prefix(llm, capsys):
    module, _ = _load_example("gbnf_grammar")
    path = module.default_grammar()
    reference = ReferenceRecognizer(parse_gbnf(open(path, encoding="utf-8").read()))
    result = module.main(["--max-tokens", "40"], llm=llm)
    data = result.engine.output_bytes()
    assert reference.accepts(data) if result.complete else reference.viable_prefix(data)
    assert capsys.readouterr().out.startswith("- ")


def test_json_policy_drops_leading_whitespace_only_when_optional(llm):
    vocab = vocabulary_for(llm)
    prompt = np.asarray(llm.tokenize(b"JSON: "), dtype=np.int32)
    # the policy alone: with the canonical filter a prompt ending in a space
    # makes a bare "{" non-canonical (see the next test)
    person_compiled, _ = compile_for(llm, PERSON_SCHEMA, grammask.Config(canonical=False))
    processor = GrammaskLogitsProcessor(person_compiled, end_json_at_close=True)
    scores = np.zeros(llm.n_vocab(), dtype=np.float32)
    processor(prompt, scores)
    allowed = [vocab.token_bytes[t] for t in np.flatnonzero(np.isfinite(scores))]
    assert allowed and all(data[:1] == b"{" for data in allowed)
    plain = GrammaskLogitsProcessor(person_compiled)
    scores = np.zeros(llm.n_vocab(), dtype=np.float32)
    plain(prompt, scores)
    assert any(vocab.token_bytes[t][:1] == b" " for t in np.flatnonzero(np.isfinite(scores)))
    compiled, _ = compile_for(llm, grammask.Grammar.from_regex(" +x"))
    mandatory = GrammaskLogitsProcessor(compiled, end_json_at_close=True)
    scores = np.zeros(llm.n_vocab(), dtype=np.float32)
    mandatory(prompt, scores)
    assert np.isfinite(scores).any(), "never an empty mask: the whitespace is needed here"


def test_default_canonical_filter_follows_the_prompts_last_token(llm, person_compiled):
    """The filter is on by default for the GGUF vocabulary and seeded with the
    prompt: a first token that llama.cpp would have merged with the prompt's
    last one (" {" after a trailing space) is not canonical there, and the
    policy keeps the whitespace then rather than leave no token."""
    assert person_compiled.canonical is not None
    vocab = vocabulary_for(llm)
    for text in (b"JSON: ", b"JSON:\n"):
        prompt = llm.tokenize(text)
        processor = GrammaskLogitsProcessor(person_compiled, end_json_at_close=True)
        scores = np.zeros(llm.n_vocab(), dtype=np.float32)
        processor(np.asarray(prompt, dtype=np.int32), scores)
        allowed = np.flatnonzero(np.isfinite(scores)).tolist()
        assert allowed
        # oracle: llama.cpp's own tokenization of the prompt followed by "{"
        joined = llm.tokenize(text + b"{")
        brace_is_canonical = joined[:len(prompt)] == prompt and vocab.token_bytes[joined[len(prompt)]][:1] == b"{"
        starts_with_brace = any(vocab.token_bytes[t][:1] == b"{" for t in allowed)
        assert starts_with_brace == brace_is_canonical, (text, brace_is_canonical)


FIXED_KEYS_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 30}, "age": {"type": "integer"},
                   "city": {"type": "string", "maxLength": 30}},
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}


def test_forced_tokens_are_counted_and_the_output_stays_valid(llm):
    import jsonschema
    for whitespace in ("compact", "flexible"):
        result = generate(llm, FIXED_KEYS_SCHEMA, "Alice is 31 and lives in Paris. As JSON please.",
                          max_tokens=64, force_tokens=True, schema_options={"whitespace": whitespace})
        assert result.complete, result.text
        jsonschema.validate(json.loads(result.text), FIXED_KEYS_SCHEMA)
        assert result.n_forced <= result.n_tokens and result.timings["n_forced"] == result.n_forced
        if whitespace == "compact":     # '{"name":"' and the other keys are forced
            assert result.n_forced > 0
        # one llama.cpp eval for the prompt, then one per sampled token (its forced tokens with it)
        assert result.timings["n_evals"] == 1 + result.n_tokens - result.n_forced
        # the engine accepted exactly the generated tokens: llama.cpp's own detokenizer agrees
        assert llm.detokenize(result.token_ids) == result.engine.output_bytes()
    plain = generate(llm, FIXED_KEYS_SCHEMA, "Alice is 31 and lives in Paris. As JSON please.",
                     max_tokens=64, schema_options={"whitespace": "compact"})
    assert plain.n_forced == 0 and plain.timings["n_evals"] == plain.n_tokens + 1


def test_forced_tokens_respect_max_tokens(llm):
    # With the canonical filter (the default; given explicitly here) the
    # literal's tokenization is llama.cpp's own, so its tokens are forced.
    grammar = grammask.Grammar.from_gbnf('root ::= "The answer is forty-two, said the computer: " [0-9]+')
    config = grammask.Config(canonical=True)
    literal = "The answer is forty-two, said the computer:"
    result = generate(llm, grammar, "What is the answer?", max_tokens=3, force_tokens=True, warn=False,
                      config=config)
    assert result.n_tokens == 3 and result.n_forced == 3
    assert result.finish_reason == "length" and not result.complete
    assert result.token_ids == llm.tokenize(literal.encode(), add_bos=False)[:3]
    result = generate(llm, grammar, "What is the answer?", max_tokens=40, force_tokens=True, config=config)
    assert result.complete and regex.fullmatch(literal + " [0-9]+", result.text)
    assert result.n_forced >= len(llm.tokenize(literal.encode(), add_bos=False)) - 1
    assert result.token_ids == llm.tokenize(result.text.encode(), add_bos=False)


@pytest.mark.parametrize("overlap", [True, False])
def test_generate_decodes_like_create_chat_completion(llm, person_compiled, overlap):
    # The oracle is llama-cpp-python's own loop with the processor: same
    # prompt (the model's chat handler), same sampler chain, same tokens;
    # with ``overlap`` the engine's steps run on a worker during each eval.
    prompt = "Bob is 45 and lives in Berlin. As JSON please."
    processor = GrammaskLogitsProcessor(person_compiled, max_tokens=48, end_json_at_close=True)
    llm.reset()
    llm.create_chat_completion(messages=[{"role": "user", "content": prompt}], max_tokens=49,
                               temperature=0.0,
                               logits_processor=llama_cpp.LogitsProcessorList([processor]))
    result = generate(llm, person_compiled, prompt, max_tokens=48, json_output=True, warn=False,
                      overlap=overlap)
    assert result.token_ids == processor.generated_token_ids
    assert (result.timings["ahead_s"] > 0) == overlap


def test_accept_ahead_gives_the_masks_of_accepting_in_the_call(llm):
    # Oracle: the allowed pieces are the continuations the regex allows
    # (``regex`` partial matching), whichever thread accepted the tokens.
    pattern = regex.compile("[A-Z][a-z]{2,8}, [A-Z][a-z]{2,8}")
    compiled, _ = compile_for(llm, grammask.Grammar.from_regex(pattern.pattern))
    vocab = vocabulary_for(llm)
    prompt = llm.tokenize(b"Two cities: ")
    paris, comma = llm.tokenize(b"Paris", add_bos=False), llm.tokenize(b",", add_bos=False)
    comma_rome = llm.tokenize(b", Rome", add_bos=False)

    def allowed_after(processor, ids):
        scores = np.zeros(llm.n_vocab(), dtype=np.float32)
        processor(np.asarray(ids, dtype=np.int32), scores)
        processor.raise_if_failed()
        return np.flatnonzero(np.isfinite(scores)).tolist()

    processor = GrammaskLogitsProcessor(compiled)
    try:
        allowed_after(processor, prompt)
        processor.accept_ahead(paris)                   # what the call then receives
        allowed = allowed_after(processor, prompt + paris)
        assert processor.engine.output_bytes() == b"Paris"
        processor.accept_ahead(comma_rome)              # not what the call receives: rolled back
        allowed_rolled_back = allowed_after(processor, prompt + paris + comma)
        assert processor.engine.output_bytes() == b"Paris,"
    finally:
        processor.close()
    for ids, text in ((allowed, "Paris"), (allowed_rolled_back, "Paris,")):
        pieces = {token_id: vocab.token_bytes[token_id] for token_id in ids if token_id not in vocab.eos_token_ids}
        assert pieces and all(pattern.fullmatch(text + piece.decode(), partial=True)
                              for piece in pieces.values())
        assert all(pattern.fullmatch(text + data.decode("utf-8", "ignore"), partial=True) is None
                   or token_id in pieces
                   for token_id, data in enumerate(vocab.token_bytes[:4000]) if data
                   and not vocab.is_special(token_id) and data.isascii())


def test_accept_ahead_worker_ends_with_its_processor():
    import gc
    import threading

    vocab = grammask.Vocabulary([bytes([value]) for value in range(32, 127)] + [b""], [95])
    compiled = grammask.compile(grammask.Grammar.from_regex("[a-z]+"), vocab, grammask.Config(canonical=False))
    processor = GrammaskLogitsProcessor(compiled)
    scores = np.zeros(vocab.size, dtype=np.float32)
    processor(np.asarray([0], dtype=np.int32), scores)
    processor.accept_ahead([ord("a") - 32])
    worker = processor._ahead._thread
    assert worker.is_alive() and worker in threading.enumerate()
    del processor
    gc.collect()
    worker.join(timeout=30)
    assert not worker.is_alive()
