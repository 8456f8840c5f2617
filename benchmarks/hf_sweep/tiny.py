"""Tiny random-weight Hugging Face causal LMs, built from their config classes alone.

``tiny_config(model_type)`` takes the architecture's config class and shrinks every
size it knows by name (config attribute names differ between architectures: hidden
size is ``hidden_size``, ``n_embd``, ``d_model``...), recursing into sub-configs
(``text_config``, ``vision_config``...). Dropout is set to 0 so eager and compiled
training steps see the same computation. Nothing is downloaded (HF_HUB_OFFLINE=1).
``build_model`` instantiates the causal-LM class with seeded random weights and
``example_batch`` gives a fixed batch of token ids.

Shared by benchmarks/hf_sweep/sweep.py and test/python/test_hf_models.py.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch  # noqa: E402

HIDDEN, LAYERS, HEADS, KV_HEADS, HEAD_DIM = 64, 2, 4, 2, 16
VOCAB, SEQ, BATCH = 256, 16, 2

# Sizes by the attribute names architectures use for them. Only attributes the
# config class has are set. Order does not matter.
SIZES: dict[str, int] = {
    **dict.fromkeys(
        ["hidden_size", "n_embd", "n_embed", "d_model", "embed_dim", "dim", "hidden_dim", "model_dim",
         "word_embed_proj_dim", "embedding_size", "emb_size", "hidden_size_global"], HIDDEN),
    **dict.fromkeys(
        ["num_hidden_layers", "n_layer", "n_layers", "num_layers", "decoder_layers", "num_decoder_layers",
         "encoder_layers", "num_encoder_layers"], LAYERS),
    **dict.fromkeys(
        ["num_attention_heads", "n_head", "n_heads", "num_heads", "decoder_attention_heads",
         "encoder_attention_heads", "attention_heads"], HEADS),
    **dict.fromkeys(["num_key_value_heads", "num_kv_heads", "n_kv_heads", "multi_query_group_num", "kv_n_heads"],
                   KV_HEADS),
    **dict.fromkeys(["head_dim", "attention_head_size", "kv_channels", "d_kv", "d_head", "dim_head"], HEAD_DIM),
    **dict.fromkeys(
        ["intermediate_size", "n_inner", "ffn_dim", "d_ff", "dim_ff", "d_inner", "ffn_hidden_size", "decoder_ffn_dim",
         "encoder_ffn_dim", "inner_hidden_size", "mlp_dim", "filter_size"], 2 * HIDDEN),
    **dict.fromkeys(
        ["moe_intermediate_size", "shared_expert_intermediate_size", "expert_intermediate_size",
         "moe_ffn_hidden_size", "expert_ffn_hidden_size"], HIDDEN // 2),
    **dict.fromkeys(
        ["max_position_embeddings", "n_positions", "n_ctx", "max_seq_len", "max_sequence_length",
         "seq_length", "max_length"], 4 * SEQ),
    **dict.fromkeys(["num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts"], 4),
    **dict.fromkeys(["num_experts_per_tok", "num_experts_per_token", "moe_topk", "moe_k"], 2),
    **dict.fromkeys(["n_shared_experts", "num_shared_experts", "n_group", "topk_group"], 1),
    "zero_expert_num": 2,  # LongCat's identity experts
    "rotary_dim": HEAD_DIM // 2,  # partial rotary (GPT-J, CodeGen): at most head_dim
    # Multi-head latent attention (DeepSeek-style).
    "kv_lora_rank": 16, "q_lora_rank": 32, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8,
    "v_head_dim": HEAD_DIM,
    # State-space layers.
    **dict.fromkeys(["state_size", "mamba_d_state", "ssm_state_size", "d_state"], 8),
    **dict.fromkeys(["mamba_n_heads", "mamba_num_heads"], 4),
    **dict.fromkeys(["mamba_d_head", "mamba_head_dim"], 32),
    **dict.fromkeys(["n_groups", "mamba_n_groups"], 1),
    # Linear attention (GatedDeltaNet): value heads a multiple of key heads.
    "linear_num_key_heads": 2, "linear_num_value_heads": 4,
    **dict.fromkeys(["linear_key_head_dim", "linear_value_head_dim"], HEAD_DIM),  # SSM groups must divide the SSM heads
    # Per-layer-input embeddings (Gemma 3n/4) and KV sharing (off: 2 layers cannot share).
    "vocab_size_per_layer_input": VOCAB, "hidden_size_per_layer_input": HEAD_DIM, "num_kv_shared_layers": 0,
    **dict.fromkeys(["vocab_size", "encoder_hash_byte_group_vocab"], VOCAB),
}
# Sizes that may be set even where the class default is None (None = "derive it" elsewhere).
DERIVED_OK = ("head_dim", "num_key_value_heads", "intermediate_size", "num_experts", "n_routed_experts",
              "num_local_experts", "moe_intermediate_size", "num_experts_per_tok", "n_shared_experts",
              "num_shared_experts", "n_group", "topk_group")
# Per-layer lists (layer kinds of hybrid models) are resized to the layer count, keeping one
# layer of each kind: by these names, or any list of strings as long as the default layer count.
PER_LAYER = ("layer_types", "layers_block_type", "block_types")
LAYER_COUNTS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers")
MAX_LAYERS = 4  # more layers only to keep up to this many distinct layer kinds
# Sub-configs are shrunk the same way (vision towers of multimodal LMs too).
SUB_CONFIG_HINTS = ("_config",)
TOKEN_IDS = {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "decoder_start_token_id": 1,
             "sep_token_id": 2, "cls_token_id": 1, "mask_token_id": 3, "unk_token_id": 3}
# The few constraints a size rename cannot satisfy (checked by the config class or the
# model). "sub.attr" keys go to the sub-config `sub`.
QUIRKS: dict[str, dict[str, Any]] = {
    "gpt_neo": {"attention_types": [[["global", "local"], LAYERS // 2]]},  # one entry per layer
    "zaya": {"num_experts_per_tok": 1},  # "supports num_experts_per_tok=1 only"
    "lfm2_moe": {"layer_types": ["conv", "full_attention"], "num_dense_layers": 1},  # no default layer_types
    "reformer": {"is_decoder": True},  # ReformerModelWithLMHead asserts it
    # input_ids are [batch * num_codebooks, seq]; the sweep's batch is 2.
    "musicgen": {"num_codebooks": 1}, "musicgen_melody": {"num_codebooks": 1},
    # The default rope_parameters has no entry per layer type (the model indexes by it).
    "cohere_compass_text": {"rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 10000.0}}},
    # GIT's loss drops its image tokens from the logits: it trains on an image (extra_inputs).
    "git": {"vision_config.image_size": 32, "vision_config.patch_size": 8},
    "dbrx": {"attn_config.clip_qkv": 8.0},
    # PhiMoE's training router (sparsemixer) Gumbel-samples among the experts whose score is
    # within 2 * router_jitter_noise (relative) of the best, and draws uniform noise for Heun's
    # multiplier: trnc's Philox stream is not eager's, so the two steps would route differently.
    # 0 leaves one candidate: the sampling (still compiled) always picks the top expert and the
    # step is deterministic. The price: sparsemixer's router gradient (nonzero only where it
    # sampled among several) is exactly 0, in eager as in trnc; experts and attention still train.
    "phimoe": {"router_jitter_noise": 0.0},
    "longcat_flash": {"head_dim": 8},  # its MLA rotary dim: = qk_rope_head_dim
    # Each layer kind has its own full-size attention sizes (per_layer_config): one kind only.
    **dict.fromkeys(["dots3_note", "dots3_note_text"], {"layer_types": ["indexed_attention"] * LAYERS}),
    # Qwen4-Exp's indexed-attention layers have no default indexer sizes.
    **dict.fromkeys(["qwen4_exp", "qwen4_exp_text"], {
        f"{prefix}{k}": v for prefix in ("", "text_config.") for k, v in {
            "indexer_n_heads": 2, "indexer_kv_heads": 1, "indexer_head_dim": HEAD_DIM, "indexer_budget": 8,
            "indexer_compress_ratio": 4}.items()}),  # DbrxAttention clamps with it unconditionally
    # The shared transformer block is tied across hybrid layers: it needs two of them.
    "zamba": {"layers_block_type": ["linear_attention", "hybrid", "hybrid"], "num_hidden_layers": 3},
    # The assistant shares every layer's KV with the backbone; no per-layer inputs.
    **dict.fromkeys(["gemma4_assistant", "gemma4_unified_assistant"], {
        "backbone_hidden_size": HIDDEN, "text_config.hidden_size_per_layer_input": 0,
        "text_config.vocab_size_per_layer_input": 0, "text_config.num_kv_shared_layers": LAYERS}),
}
# Reformer: axial position factors sum to hidden and multiply to the sequence; chunks divide it.
# LSH attention hashes with torch.randn rotations drawn on every call (eager differs from eager
# by 0.02; trnc's Philox stream is not eager's): one LSH chunk spanning the sequence, no
# neighbour chunks, makes every query see every key whatever the buckets, so the hashing,
# sort, gather and unsort still run but the output no longer depends on the draw.
QUIRKS["reformer"].update({"axial_pos_embds_dim": [HIDDEN // 2, HIDDEN // 2], "axial_pos_shape": [4, SEQ // 4],
                           "local_attn_chunk_length": 4, "lsh_attn_chunk_length": SEQ, "num_buckets": 4,
                           "lsh_num_chunks_before": 0, "lsh_num_chunks_after": 0})
# Config attributes the class has no field for but the model reads: model type -> config -> None.
POST_CONFIG: dict[str, Any] = {
    "dbrx": lambda config: setattr(config.attn_config, "rope_theta", 10000.0),  # read by DbrxAttention
}
# Architectures that are no standalone causal LM: model type -> why (recorded as skipped).
NOT_STANDALONE: dict[str, str] = dict.fromkeys(
    ["gemma4_assistant", "gemma4_unified_assistant"],
    "a drafter: forward needs the target model's inputs_embeds and shared_kv_states")
# Set-up after building that a config cannot express: model type -> model -> None.
POST_BUILD: dict[str, Any] = {
    "xmod": lambda model: model.set_default_language("en_XX"),  # per-language adapters
    "afmoe": lambda model: _random_routers(model),
}


def _random_routers(model: torch.nn.Module, seed: int = 0) -> None:
    """AFMoE zero-initialises its router gate (as a checkpoint-less model would start
    training): every token's expert scores tie exactly, and topk's order among exact ties
    is unspecified (eager's differs from trnc's first-occurrence), so the sweep would
    measure tie order, not the compiler. Normal weights (std = initializer_range, like
    other MoE routers) give distinct scores; every tensor is seeded here."""
    gen = torch.Generator().manual_seed(seed)
    std = model.config.initializer_range
    with torch.no_grad():
        for name, module in model.named_modules():
            if name.endswith("router") and isinstance(getattr(module, "gate", None), torch.nn.Linear):
                w = module.gate.weight
                w.copy_(torch.randn(w.shape, generator=gen) * std)


def _field_names(config_class) -> dict[str, Any]:
    """Attribute name -> default of a config class (dataclass fields, else an instance)."""
    if dataclasses.is_dataclass(config_class):
        out = {}
        for f in dataclasses.fields(config_class):
            if f.default is not dataclasses.MISSING:
                out[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
                out[f.name] = f.default_factory()  # type: ignore[misc]
            else:
                out[f.name] = None
        return out
    return dict(vars(config_class()))


def _is_dropout(name: str) -> bool:
    return "dropout" in name or "pdrop" in name or name in ("drop_rate", "attn_drop", "proj_drop")


def tiny_kwargs(config_class, sub_overrides: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Constructor overrides that shrink `config_class` (recursing into sub-configs);
    `sub_overrides` maps a sub-config name to attributes set on it last."""
    defaults = _field_names(config_class)
    kwargs: dict[str, Any] = {}
    for name, default in defaults.items():
        if name in SIZES and (default is None or isinstance(default, int)) and not isinstance(default, bool):
            if default is None and name not in DERIVED_OK:
                continue  # None usually means "derive it": leave derivation to the class
            kwargs[name] = SIZES[name]
        elif _is_dropout(name) and isinstance(default, float):
            kwargs[name] = 0.0
        elif name in TOKEN_IDS and isinstance(default, (int, list)) and not isinstance(default, bool):
            kwargs[name] = TOKEN_IDS[name]
    if "qk_rope_head_dim" in defaults:  # MLA: head_dim is the rotary part, kv heads = heads
        kwargs.pop("head_dim", None)
        if "num_key_value_heads" in kwargs:
            kwargs["num_key_value_heads"] = HEADS
    for name, sub_class in _sub_config_classes(config_class).items():
        if SIZES.keys() & _field_names(sub_class).keys() or name in (sub_overrides or {}):
            try:
                kwargs[name] = sub_class(**{**tiny_kwargs(sub_class), **(sub_overrides or {}).get(name, {})})
            except Exception:  # noqa: BLE001 - keep the class default for this sub-config
                pass
    kwargs.update(_per_layer_kwargs(config_class, defaults, kwargs))
    _consistent_ssm(defaults, kwargs)
    return kwargs


def _sub_config_classes(config_class) -> dict[str, type]:
    """Sub-config name -> config class; an AutoConfig slot resolves to its default model type."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    specs = getattr(config_class, "sub_configs_defaults", None) or {}
    out = {}
    for name, sub_class in (getattr(config_class, "sub_configs", None) or {}).items():
        if isinstance(sub_class, type) and sub_class.__name__ == "AutoConfig":
            model_type = getattr(specs.get(name), "model_type", None)
            sub_class = CONFIG_MAPPING[model_type] if model_type in CONFIG_MAPPING else None
        if isinstance(sub_class, type) and hasattr(sub_class, "model_type"):
            out[name] = sub_class
    return out


def _default_values(config_class) -> dict[str, Any]:
    """Attribute values of a default instance (what __post_init__ derives from None)."""
    try:
        return dict(vars(config_class()))
    except Exception:  # noqa: BLE001 - a class that needs arguments: its declared defaults
        return _field_names(config_class)


def _per_layer_kwargs(config_class, defaults: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Layer-kind lists resized to the layer count, one layer of each kind (up to MAX_LAYERS
    layers where a model has more kinds; the layer count follows)."""
    counts = [n for n in LAYER_COUNTS if n in kwargs]
    if not counts:
        return {}
    values = _default_values(config_class)
    full = values.get(counts[0])
    lists = {}
    for name, value in values.items():
        if (name in defaults and isinstance(value, list) and value and all(isinstance(v, str) for v in value)
                and (name in PER_LAYER or len(value) == full)):
            lists[name] = list(dict.fromkeys(value))
    if not lists:
        return {}
    layers = max(LAYERS, min(MAX_LAYERS, max(len(k) for k in lists.values())))
    out = {name: (kinds + [kinds[0]] * layers)[:layers] for name, kinds in lists.items()}
    out.update(dict.fromkeys(counts, layers))
    return out


def _consistent_ssm(defaults: dict[str, Any], kwargs: dict[str, Any]) -> None:
    """Mamba-2 style blocks: SSM heads * head dim == hidden * expand."""
    expand = defaults.get("expand")
    if isinstance(expand, int) and "n_groups" in defaults and "num_heads" in kwargs and "head_dim" in defaults:
        kwargs["head_dim"] = HIDDEN * expand // kwargs["num_heads"]


def config_class_of(model_type: str):
    """The config the causal-LM class takes (a text config for some multimodal types)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    own = getattr(causal_lm_class(model_type), "config_class", None)
    return own if isinstance(own, type) and hasattr(own, "model_type") else CONFIG_MAPPING[model_type]


def tiny_config(model_type: str, **overrides):
    """The architecture's config with tiny sizes, zero dropout and in-vocabulary token ids;
    `overrides` (config attributes the class has) go last."""
    config_class = config_class_of(model_type)
    quirks = {**QUIRKS.get(model_type, {}), **overrides}
    sub: dict[str, dict[str, Any]] = {}
    for key, value in quirks.items():
        if "." in key:
            name, attr = key.split(".", 1)
            sub.setdefault(name, {})[attr] = value
    kwargs = tiny_kwargs(config_class, sub)
    known = _field_names(config_class)
    kwargs.update({k: v for k, v in quirks.items() if k in known})
    config = config_class(**kwargs)
    if model_type in POST_CONFIG:
        POST_CONFIG[model_type](config)
    return config


def causal_lm_class(model_type: str):
    from transformers.models.auto import modeling_auto
    import transformers

    return getattr(transformers, modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[model_type])


def build_model(model_type: str, seed: int = 0, attn_implementation: str | None = None,
                experts_implementation: str | None = None, **overrides) -> torch.nn.Module:
    """Seeded random weights, float32; attention and MoE experts as transformers picks
    them by default (SDPA, grouped_mm) unless the `*_implementation` arguments say."""
    config = tiny_config(model_type, **overrides)
    torch.manual_seed(seed)
    cls = causal_lm_class(model_type)
    kwargs = {k: v for k, v in (("attn_implementation", attn_implementation),
                                ("experts_implementation", experts_implementation)) if v}
    try:
        model = cls._from_config(config, dtype=torch.float32, **kwargs)
    except (TypeError, ValueError):
        model = cls(config)
    if model_type in POST_BUILD:
        POST_BUILD[model_type](model)
    return model.float()


def vocab_of(model: torch.nn.Module) -> int:
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    emb = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    sizes = [getattr(config, "vocab_size", None)]
    if emb is not None and hasattr(emb, "num_embeddings"):
        sizes.append(emb.num_embeddings)
    return min(s for s in sizes if s) if any(sizes) else VOCAB


def labels_for(model_type: str, ids: torch.Tensor) -> torch.Tensor:
    """Causal-LM labels for `ids` (MusicGen's decoder wants [batch, seq, codebooks])."""
    return ids.unsqueeze(-1) if model_type in ("musicgen", "musicgen_melody") else ids


def extra_inputs(model_type: str, model: torch.nn.Module, seed: int = 0) -> dict[str, torch.Tensor]:
    """Inputs besides input_ids an architecture needs to train (GIT: pixel_values)."""
    if model_type != "git":
        return {}
    size = model.config.vision_config.image_size
    gen = torch.Generator().manual_seed(seed)
    return {"pixel_values": torch.randn(BATCH, 3, size, size, generator=gen)}


def example_batch(model: torch.nn.Module, seed: int = 0) -> torch.Tensor:
    """Token ids [BATCH, SEQ] avoiding the special ids 0..3."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(4, vocab_of(model), (BATCH, SEQ), generator=gen)


def all_model_types() -> list[str]:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return list(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
