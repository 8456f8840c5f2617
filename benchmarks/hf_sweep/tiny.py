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
         "word_embed_proj_dim", "embedding_size", "emb_size"], HIDDEN),
    **dict.fromkeys(
        ["num_hidden_layers", "n_layer", "n_layers", "num_layers", "decoder_layers", "num_decoder_layers",
         "encoder_layers", "num_encoder_layers"], LAYERS),
    **dict.fromkeys(
        ["num_attention_heads", "n_head", "n_heads", "num_heads", "decoder_attention_heads",
         "encoder_attention_heads", "attention_heads"], HEADS),
    **dict.fromkeys(["num_key_value_heads", "num_kv_heads", "n_kv_heads", "multi_query_group_num"], KV_HEADS),
    **dict.fromkeys(["head_dim", "attention_head_size", "kv_channels", "d_kv", "d_head"], HEAD_DIM),
    **dict.fromkeys(
        ["intermediate_size", "n_inner", "ffn_dim", "d_ff", "d_inner", "ffn_hidden_size", "decoder_ffn_dim",
         "encoder_ffn_dim", "inner_hidden_size", "mlp_dim", "filter_size"], 2 * HIDDEN),
    **dict.fromkeys(
        ["moe_intermediate_size", "shared_expert_intermediate_size", "expert_intermediate_size",
         "moe_ffn_hidden_size"], HIDDEN // 2),
    **dict.fromkeys(
        ["max_position_embeddings", "n_positions", "n_ctx", "max_seq_len", "max_sequence_length",
         "seq_length", "max_length"], 4 * SEQ),
    **dict.fromkeys(["num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts"], 4),
    **dict.fromkeys(["num_experts_per_tok", "num_experts_per_token", "moe_topk", "moe_k"], 2),
    **dict.fromkeys(["n_shared_experts", "num_shared_experts", "n_group", "topk_group"], 1),
    "rotary_dim": HEAD_DIM // 2,  # partial rotary (GPT-J, CodeGen): at most head_dim
    # Multi-head latent attention (DeepSeek-style).
    "kv_lora_rank": 16, "q_lora_rank": 32, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8,
    "v_head_dim": HEAD_DIM,
    # State-space layers.
    **dict.fromkeys(["state_size", "mamba_d_state", "ssm_state_size", "d_state"], 8),
    **dict.fromkeys(["mamba_n_heads", "mamba_num_heads"], 4),
    **dict.fromkeys(["mamba_d_head", "mamba_head_dim"], 32),
    "vocab_size": VOCAB,
}
# Sizes that may be set even where the class default is None (None = "derive it" elsewhere).
DERIVED_OK = ("head_dim", "num_key_value_heads", "intermediate_size", "num_experts", "n_routed_experts",
              "num_local_experts", "moe_intermediate_size")
# Sub-configs are shrunk the same way (vision towers of multimodal LMs too).
SUB_CONFIG_HINTS = ("_config",)
TOKEN_IDS = {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "decoder_start_token_id": 1,
             "sep_token_id": 2, "cls_token_id": 1, "mask_token_id": 3, "unk_token_id": 3}
# The few constraints a size rename cannot satisfy (checked by the config class).
QUIRKS: dict[str, dict[str, Any]] = {
    "gpt_neo": {"attention_types": [[["global", "local"], LAYERS // 2]]},  # one entry per layer
    "zaya": {"num_experts_per_tok": 1},  # "supports num_experts_per_tok=1 only"
}


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


def tiny_kwargs(config_class) -> dict[str, Any]:
    """Constructor overrides that shrink `config_class` (recursing into sub-configs)."""
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
    sub_configs = getattr(config_class, "sub_configs", None) or {}
    for name, sub_class in sub_configs.items():
        if (isinstance(sub_class, type) and hasattr(sub_class, "model_type") and sub_class.__name__ != "AutoConfig"
                and SIZES.keys() & _field_names(sub_class).keys()):
            try:
                kwargs[name] = sub_class(**tiny_kwargs(sub_class))
            except Exception:  # noqa: BLE001 - keep the class default for this sub-config
                pass
    if isinstance(defaults.get("layer_types"), list) and defaults["layer_types"]:
        # Keep one layer of each kind (sliding and full attention, say) where possible.
        kinds = list(dict.fromkeys(defaults["layer_types"]))[:LAYERS]
        kwargs["layer_types"] = (kinds + [kinds[0]] * LAYERS)[:LAYERS]
    return kwargs


def config_class_of(model_type: str):
    """The config the causal-LM class takes (a text config for some multimodal types)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    own = getattr(causal_lm_class(model_type), "config_class", None)
    return own if isinstance(own, type) and hasattr(own, "model_type") else CONFIG_MAPPING[model_type]


def tiny_config(model_type: str, **overrides):
    """The architecture's config with tiny sizes, zero dropout and in-vocabulary token ids;
    `overrides` (config attributes the class has) go last."""
    config_class = config_class_of(model_type)
    kwargs = tiny_kwargs(config_class)
    known = _field_names(config_class)
    kwargs.update({k: v for k, v in {**QUIRKS.get(model_type, {}), **overrides}.items() if k in known})
    return config_class(**kwargs)


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
    return model.float()


def vocab_of(model: torch.nn.Module) -> int:
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    emb = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    sizes = [getattr(config, "vocab_size", None)]
    if emb is not None and hasattr(emb, "num_embeddings"):
        sizes.append(emb.num_embeddings)
    return min(s for s in sizes if s) if any(sizes) else VOCAB


def example_batch(model: torch.nn.Module, seed: int = 0) -> torch.Tensor:
    """Token ids [BATCH, SEQ] avoiding the special ids 0..3."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(4, vocab_of(model), (BATCH, SEQ), generator=gen)


def all_model_types() -> list[str]:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return list(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
