#!/usr/bin/env python3
"""Trims LiteLLM's model_prices_and_context_window.json to what Switchboard reads.

Usage: scripts/vendor-model-catalogue.py SOURCE.json VERSION > crates/models/data/model_prices_and_context_window.json

SOURCE is the file from a LiteLLM release (the `litellm` wheel on PyPI ships it as
`litellm/model_prices_and_context_window_backup.json`; the repository keeps it at its root). Only
chat models of the presets' APIs and the most used OpenAI-compatible clouds are kept, with the fields
crates/models/src/catalogue.rs reads; the format stays LiteLLM's, so a refreshed upstream file
parses with the same code. Write the date and VERSION into crates/models/data/SNAPSHOT.
"""
import json
import sys

# The presets' APIs and the OpenAI-compatible clouds people add most; a refresh from the app
# brings every provider LiteLLM lists (Together, Fireworks, DeepInfra, ...).
PROVIDERS = {"openai", "anthropic", "gemini", "deepseek", "mistral", "groq", "xai", "ollama"}
MODES = {"chat", "responses"}
FIELDS = [
    "mode", "max_input_tokens", "max_output_tokens", "max_tokens",
    "input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost",
    "cache_creation_input_token_cost", "output_cost_per_reasoning_token",
    "supports_function_calling", "supports_vision", "supports_pdf_input", "supports_reasoning",
]

source = json.load(open(sys.argv[1]))
out = {}
for name, entry in sorted(source.items()):
    if not isinstance(entry, dict) or entry.get("litellm_provider") not in PROVIDERS:
        continue
    if entry.get("mode") not in MODES:
        continue
    out[name] = {k: entry[k] for k in FIELDS if k in entry}
# One model per line: small, and a refresh's diff shows which models changed.
sys.stdout.write("{\n")
sys.stdout.write(",\n".join(
    f"{json.dumps(name)}: {json.dumps(entry, sort_keys=True, separators=(',', ':'))}" for name, entry in out.items()
))
sys.stdout.write("\n}\n")
print(f"{len(out)} models from LiteLLM {sys.argv[2]}", file=sys.stderr)
