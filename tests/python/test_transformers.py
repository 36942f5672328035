"""hurray.transformers: Hugging Face models saved as .hrry and loaded back, compared
with transformers' own save_pretrained / AutoModelForCausalLM.from_pretrained of the
same weights (safetensors): the logits must be identical. Real models built from small
configs on the CPU: Llama with tied embeddings, Qwen2, GPT-2 and a mixture of experts
(Qwen2-MoE)."""

import json
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import hurray  # noqa: E402
import hurray.transformers as ht  # noqa: E402
from hurray._cli import main  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")
SMALL = dict(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)


def configs():
    return {
        "llama-tied": transformers.LlamaConfig(**SMALL, tie_word_embeddings=True),
        "qwen2": transformers.Qwen2Config(**SMALL, tie_word_embeddings=False),
        "gpt2": transformers.GPT2Config(vocab_size=96, n_embd=32, n_layer=2, n_head=4,
                                        n_positions=64),
        "qwen2-moe": transformers.Qwen2MoeConfig(**SMALL, moe_intermediate_size=32,
                                                 shared_expert_intermediate_size=32,
                                                 num_experts=4, num_experts_per_tok=2),
    }


@pytest.fixture(scope="module", params=sorted(configs()))
def model(request, tmp_path_factory):
    """(name, transformers' own load of the model saved by transformers, its
    safetensors directory)."""
    torch.manual_seed(0)
    m = transformers.AutoModelForCausalLM.from_config(configs()[request.param]).eval()
    st = tmp_path_factory.mktemp(request.param) / "st"
    m.save_pretrained(st)
    ref = transformers.AutoModelForCausalLM.from_pretrained(st).eval()
    return request.param, ref, st


def logits(m, dtype=None):
    x = torch.tensor([[1, 5, 9, 2, 7, 3, 11, 4]])
    with torch.no_grad():
        return m(x).logits


def test_save_then_load_gives_the_same_logits(model, tmp_path):
    name, ref, _ = model
    ht.save_pretrained(ref, tmp_path / "h")
    assert sorted(p.name for p in (tmp_path / "h").iterdir()) == \
        ["config.json", "generation_config.json", "model.hrry"]
    got = ht.from_pretrained(tmp_path / "h")
    assert type(got) is type(ref) and not got.training
    assert torch.equal(logits(got), logits(ref)), name
    assert got.generation_config.to_dict() == ref.generation_config.to_dict()


def test_tied_weights_are_stored_once_and_stay_tied(tmp_path):
    torch.manual_seed(0)
    m = transformers.LlamaForCausalLM(configs()["llama-tied"]).eval()
    ht.save_pretrained(m, tmp_path / "h")
    with hurray.open(tmp_path / "h" / "model.hrry") as f:
        assert f.views == {"lm_head.weight": "model.embed_tokens.weight"}  # stored once
    got = ht.from_pretrained(tmp_path / "h")
    assert got.lm_head.weight.data_ptr() == got.model.embed_tokens.weight.data_ptr()
    assert torch.equal(logits(got), logits(m))


def test_loaded_weights_are_maps_of_the_file_not_copies(tmp_path):
    torch.manual_seed(0)
    m = transformers.Qwen2ForCausalLM(configs()["qwen2"]).eval()
    ht.save_pretrained(m, tmp_path / "h")
    got = ht.from_pretrained(tmp_path / "h")
    with hurray.open(tmp_path / "h" / "model.hrry", mmap="r") as f:
        assert f["lm_head.weight"].is_mapped if hasattr(f["lm_head.weight"], "is_mapped") \
            else True
    maps = open("/proc/self/maps").read() if sys.platform.startswith("linux") else ""
    if maps:
        ptr = got.lm_head.weight.data_ptr()
        mapped = [line for line in maps.splitlines() if line.endswith("model.hrry")]
        assert any(int(r.split()[0].split("-")[0], 16) <= ptr < int(r.split()[0].split("-")[1], 16)
                   for r in mapped), "lm_head.weight is not inside the file's mapping"


@pytest.mark.parametrize("dtype", [torch.bfloat16, "float16"])
def test_dtype_is_honoured_as_transformers_does(model, tmp_path, dtype):
    name, ref, st = model
    ht.save_pretrained(ref, tmp_path / "h")
    got = ht.from_pretrained(tmp_path / "h", dtype=dtype)
    want = transformers.AutoModelForCausalLM.from_pretrained(st, dtype=dtype).eval()
    assert got.dtype == want.dtype
    assert torch.equal(logits(got), logits(want)), name
    legacy = ht.from_pretrained(tmp_path / "h", torch_dtype=dtype)  # the old name
    assert legacy.dtype == want.dtype


def test_sharded_save_writes_an_index_and_loads_back(tmp_path):
    torch.manual_seed(0)
    m = transformers.Qwen2ForCausalLM(configs()["qwen2"]).eval()
    ht.save_pretrained(m, tmp_path / "h", max_shard_size="20KB")
    files = sorted(p.name for p in (tmp_path / "h").iterdir())
    shards = [f for f in files if f.startswith("model-")]
    assert len(shards) > 2 and "model.hrry.index.json" in files and "model.hrry" not in files
    index = json.loads((tmp_path / "h" / "model.hrry.index.json").read_text())
    assert set(index["weight_map"]) == set(m.state_dict())
    assert set(index["weight_map"].values()) == set(shards)
    assert torch.equal(logits(ht.from_pretrained(tmp_path / "h")), logits(m))
    # saved again whole: the shards of the first save are gone
    ht.save_pretrained(m, tmp_path / "h")
    assert sorted(p.name for p in (tmp_path / "h").iterdir()) == \
        ["config.json", "generation_config.json", "model.hrry"]


def test_a_converted_model_directory_loads_with_the_same_logits(model, tmp_path):
    name, ref, st = model
    (st / "tokenizer_config.json").write_text('{"model_max_length": 64}')  # a non-weight file
    out = tmp_path / "converted"
    assert main(["convert", "-q", str(st), str(out)]) == 0
    assert (out / "tokenizer_config.json").read_text() == '{"model_max_length": 64}'
    assert (out / "config.json").read_bytes() == (st / "config.json").read_bytes()
    assert not list(out.glob("*.safetensors*"))
    got = ht.from_pretrained(out)
    assert torch.equal(logits(got), logits(ref)), name


def test_missing_weights_are_initialised_and_reported(tmp_path):
    torch.manual_seed(0)
    m = transformers.LlamaForCausalLM(configs()["llama-tied"]).eval()
    ht.save_pretrained(m, tmp_path / "h")
    got, info = ht.from_pretrained(tmp_path / "h", output_loading_info=True,
                                   model_class=transformers.AutoModelForSequenceClassification,
                                   num_labels=3)
    assert type(got) is transformers.LlamaForSequenceClassification
    assert "score.weight" in info["missing_keys"]
    w = got.score.weight
    assert torch.isfinite(w).all() and w.abs().sum() > 0 and w.std() < 1  # initialised
    assert torch.equal(got.model.embed_tokens.weight, m.model.embed_tokens.weight)


def test_device_map_cpu(tmp_path):
    torch.manual_seed(0)
    m = transformers.LlamaForCausalLM(configs()["llama-tied"]).eval()
    ht.save_pretrained(m, tmp_path / "h")
    got = ht.from_pretrained(tmp_path / "h", device_map="cpu")
    assert got.device.type == "cpu" and torch.equal(logits(got), logits(m))


def test_refusals_name_what_to_do(tmp_path):
    torch.manual_seed(0)
    m = transformers.LlamaForCausalLM(configs()["llama-tied"])
    ht.save_pretrained(m, tmp_path / "h")
    with pytest.raises(FileNotFoundError, match="hurray convert MODEL_DIR OUT_DIR"):
        ht.from_pretrained(tmp_path)  # a folder without weights
    with pytest.raises(ValueError, match="max_shard_size"):
        ht.save_pretrained(m, tmp_path / "x", max_shard_size="lots")
    with pytest.raises(ValueError, match="dtype='float99' is neither 'auto' nor"):
        ht.from_pretrained(tmp_path / "h", dtype="float99")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "model.hrry.index.json").write_text('{"weight_map": {"w": "../x.hrry"}}')
    with pytest.raises(ValueError, match="not a file of"):
        ht.from_pretrained(tmp_path / "bad")
