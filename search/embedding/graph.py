"""The ONNX graph of the model, built from the packaged weights without PyTorch.

all-MiniLM-L6-v2 is a 6-layer BERT encoder (384 hidden, 12 heads, 1536 in the feed-forward
part). Its weights are read from ``model.safetensors`` (with ``safetensors``' numpy API) and its
shape from ``config.json``; the graph is written with ``onnx.helper`` using ONNX Runtime's fused
transformer operators (``com.microsoft``: EmbedLayerNormalization, Attention, BiasGelu), so no
graph optimiser is needed afterwards. Add & norm is written as two Adds and ONNX's own
LayerNormalization, not as the fused SkipLayerNormalization: ONNX Runtime 1.31's CPU kernel of
the fused form took 88 us for a 42 x 384 input where the three plain nodes take 21 us, a fifth
of the whole model's time (docs/benchmarks.md, "The model's layer norms"). ONNX Runtime 1.31
does not fuse this chain back; the session turns that fusion off all the same
(:data:`UNFUSED`), so a later version cannot.

- embeddings: word + position + token type 0 (folded into the position table: the texts are
  one segment), then LayerNorm; the padding mask becomes each row's length;
- per layer: self-attention (one projection for Q, K and V), its output projection, add & norm,
  GELU feed-forward, add & norm.

Inputs ``input_ids`` and ``attention_mask`` (int64, batch x tokens, padded on the right), output
``last_hidden_state`` (float32, batch x tokens x 384), as the PyTorch model's. The caller then
quantises the matrix products to int8 (:func:`search.embedding.model.convert`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

MS = "com.microsoft"
IR_VERSION = 8  # what opset 17 needs; newer onnx packages default past what runtimes read
# ONNX Runtime's graph optimisation that could fuse add & norm back into its slower kernel.
UNFUSED = ["SkipLayerNormFusion"]


def _weights(directory: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file  # lazy: needed once per machine, to convert

    loaded = load_file(str(directory / "model.safetensors"))
    # Some exports prefix every name with the model's ("bert."): drop it.
    return {name.removeprefix("bert."): value for name, value in loaded.items()}


def build(directory: Path) -> Any:
    """The fp32 ONNX model (an ``onnx.ModelProto``) of the weights in ``directory``."""
    from onnx import TensorProto, helper, numpy_helper  # lazy: once per machine; heavy

    config = json.loads((directory / "config.json").read_text())
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
        raise ValueError(f"{directory}: not a BERT encoder with GELU")
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    layers = int(config["num_hidden_layers"])
    eps = float(config.get("layer_norm_eps", 1e-12))
    w = _weights(directory)

    initializers: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], output: str, domain: str = "", **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, domain=domain, **attrs))
        return output

    def dense(prefix: str) -> tuple[np.ndarray, np.ndarray]:
        """A linear layer as (in x out) weight, bias."""
        return w[f"{prefix}.weight"].T.astype(np.float32), w[f"{prefix}.bias"].astype(np.float32)

    ids = node("Cast", ["input_ids"], "ids32", to=TensorProto.INT32)
    mask = node("Cast", ["attention_mask"], "mask32", to=TensorProto.INT32)
    positions = (
        w["embeddings.position_embeddings.weight"] + w["embeddings.token_type_embeddings.weight"][0]
    )
    nodes.append(
        helper.make_node(
            "EmbedLayerNormalization",
            [
                ids,
                "",
                const("word_embeddings", w["embeddings.word_embeddings.weight"]),
                const("position_embeddings", positions.astype(np.float32)),
                "",
                const("embeddings_gamma", w["embeddings.LayerNorm.weight"]),
                const("embeddings_beta", w["embeddings.LayerNorm.bias"]),
                mask,
            ],
            ["embedded", "lengths"],
            name="embeddings",
            domain=MS,
            epsilon=eps,
        )
    )
    x = "embedded"

    def add_and_norm(
        summand: str,
        residual: str,
        norm: str,
        name: str,
        bias: tuple[str, np.ndarray],
        output: str,
    ) -> str:
        """``LayerNorm(summand + residual + bias)`` (BERT's add & norm)."""
        summed = node("Add", [summand, residual], f"{name}_sum")
        biased = node("Add", [summed, const(*bias)], f"{name}_biased")
        gamma = const(f"{name}_gamma", w[f"{norm}.weight"])
        beta = const(f"{name}_beta", w[f"{norm}.bias"])
        return node("LayerNormalization", [biased, gamma, beta], output, axis=-1, epsilon=eps)

    for i in range(layers):
        p = f"encoder.layer.{i}"
        q, qb = dense(f"{p}.attention.self.query")
        k, kb = dense(f"{p}.attention.self.key")
        v, vb = dense(f"{p}.attention.self.value")
        qkv = const(f"l{i}_qkv", np.concatenate([q, k, v], axis=1))
        qkv_bias = const(f"l{i}_qkv_bias", np.concatenate([qb, kb, vb]))
        attended = node(
            "Attention", [x, qkv, qkv_bias, "lengths"], f"l{i}_attention", MS, num_heads=heads
        )
        out, out_bias = dense(f"{p}.attention.output.dense")
        projected = node("MatMul", [attended, const(f"l{i}_out", out)], f"l{i}_projected")
        x = add_and_norm(projected, x, f"{p}.attention.output.LayerNorm", f"l{i}_norm1",
                         (f"l{i}_out_bias", out_bias), f"l{i}_norm1")  # fmt: skip
        up, up_bias = dense(f"{p}.intermediate.dense")
        widened = node("MatMul", [x, const(f"l{i}_up", up)], f"l{i}_up_mm")
        activated = node("BiasGelu", [widened, const(f"l{i}_up_bias", up_bias)], f"l{i}_gelu", MS)
        down, down_bias = dense(f"{p}.output.dense")
        narrowed = node("MatMul", [activated, const(f"l{i}_down", down)], f"l{i}_down_mm")
        x = add_and_norm(narrowed, x, f"{p}.output.LayerNorm", f"l{i}_norm2",
                         (f"l{i}_down_bias", down_bias),
                         "last_hidden_state" if i == layers - 1 else f"l{i}_norm2")  # fmt: skip

    dims = ["batch", "tokens"]
    graph = helper.make_graph(
        nodes,
        "minilm",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, dims),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, dims),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, hidden])],
        initializers,
    )
    built = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)],
        producer_name="registry",
    )
    built.ir_version = IR_VERSION
    return built
