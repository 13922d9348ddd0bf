#!/usr/bin/env python3
"""Trims LiteLLM's model_prices_and_context_window.json to what Switchboard reads.

Usage: scripts/vendor-model-catalogue.py SOURCE.json VERSION > crates/models/data/model_prices_and_context_window.json

SOURCE is the file from a LiteLLM release (the `litellm` wheel on PyPI ships it as
`litellm/model_prices_and_context_window_backup.json`; the repository keeps it at its root). Only
chat models of the providers Switchboard's presets reach are kept, with the fields
crates/models/src/catalogue.rs reads; the format stays LiteLLM's, so a refreshed upstream file
parses with the same code. Write the date and VERSION into crates/models/data/SNAPSHOT.
"""
import json
import sys

PROVIDERS = {
    "openai", "anthropic", "gemini", "openrouter", "deepseek", "mistral", "groq", "xai",
    "together_ai", "fireworks_ai", "perplexity", "deepinfra", "cerebras", "ollama",
}
MODES = {"chat", "responses"}
FIELDS = [
    "litellm_provider", "mode", "max_input_tokens", "max_output_tokens", "max_tokens",
    "input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost",
    "cache_creation_input_token_cost", "output_cost_per_reasoning_token",
    "supports_function_calling", "supports_vision", "supports_pdf_input", "supports_reasoning",
    "supports_prompt_caching",
]

source = json.load(open(sys.argv[1]))
out = {}
for name, entry in sorted(source.items()):
    if not isinstance(entry, dict) or entry.get("litellm_provider") not in PROVIDERS:
        continue
    if entry.get("mode") not in MODES:
        continue
    out[name] = {k: entry[k] for k in FIELDS if k in entry}
json.dump(out, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
print(f"{len(out)} models from LiteLLM {sys.argv[2]}", file=sys.stderr)
