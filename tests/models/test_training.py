"""A short training loop as users write it: a transformer encoder with AdamW,
gradient clipping (clip_grad_norm_) and a cross-entropy loss, on flagos; the
parameters after the steps match the CPU's."""

from __future__ import annotations

import copy

import torch

import torch_fl

from .common import assert_close, dispatch, devices_of


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(32, 16)
        self.encoder = torch.nn.TransformerEncoder(
            torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True),
            num_layers=2, enable_nested_tensor=False)
        self.head = torch.nn.Linear(16, 5)

    def forward(self, tokens, padding_mask):
        hidden = self.encoder(self.embed(tokens), src_key_padding_mask=padding_mask)
        return self.head(hidden.mean(dim=1))


def train(model, device: str, steps: int = 3):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    data = torch.Generator().manual_seed(3)
    losses = []
    for _ in range(steps):
        tokens = torch.randint(0, 32, (4, 6), generator=data).to(device)
        padding = torch.zeros(4, 6, dtype=torch.bool)
        padding[:, 5] = True
        labels = torch.randint(0, 5, (4,), generator=data).to(device)
        optimizer.zero_grad()
        logits = model(tokens, padding.to(device))
        loss = torch.nn.functional.cross_entropy(logits, labels.to(logits.device))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
        optimizer.step()
        losses.append(loss.item())
    return losses


def comparable(name: str, p: torch.Tensor) -> torch.Tensor:
    """The parameter without the attention's key bias: its true gradient is zero
    (softmax ignores a shift shared by all keys), so what it gets is rounding noise
    that Adam divides by its own size, on the CPU as on any device."""
    if name.endswith("self_attn.in_proj_bias"):
        d = p.shape[0] // 3
        return torch.cat([p[:d], p[2 * d:]])
    return p


def reference():
    torch.manual_seed(0)
    model = Classifier()
    trained = copy.deepcopy(model)
    return model, trained, train(trained, "cpu")


def test_trains_on_one_device():
    model, expected, expected_losses = reference()
    ours = copy.deepcopy(model).to("flagos:1")
    losses = train(ours, "flagos:1")
    assert_close(torch.tensor(losses), torch.tensor(expected_losses), atol=1e-4, rtol=1e-4, what="losses")
    for (name, p), q in zip(ours.named_parameters(), expected.parameters()):
        assert p.device == torch.device("flagos:1")
        assert_close(comparable(name, p), comparable(name, q), atol=2e-4, rtol=2e-4, what=name)


def test_trains_split_over_two_devices():
    model, expected, expected_losses = reference()
    split = dispatch(copy.deepcopy(model), {"embed": "flagos:1", "encoder.layers.0": "flagos:1",
                                            "encoder.layers.1": "flagos:2", "head": "flagos:2"})
    assert devices_of(split) == {"flagos:1", "flagos:2"}
    losses = train(split, "flagos:1")
    assert_close(torch.tensor(losses), torch.tensor(expected_losses), atol=1e-4, rtol=1e-4, what="losses")
    for (name, p), q in zip(split.named_parameters(), expected.parameters()):
        assert_close(comparable(name, p), comparable(name, q), atol=2e-4, rtol=2e-4, what=name)


def test_gpt2_with_tied_embeddings_trains_like_the_cpu():
    """transformers' GPT-2 ties its output projection to the token embedding:
    after .to("flagos:1") the tie must hold, or the embedding's gradient loses
    the projection's half (it did, until flagos answered
    _has_compatible_shallow_copy_type)."""
    import transformers

    torch.manual_seed(0)
    config = transformers.GPT2Config(n_embd=32, n_layer=2, n_head=4, vocab_size=64, n_positions=32, attn_pdrop=0.0,
                                     resid_pdrop=0.0, embd_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    reference = transformers.GPT2LMHeadModel(config)
    ours = copy.deepcopy(reference).to("flagos:1")
    assert ours.lm_head.weight is ours.transformer.wte.weight
    ids = torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(1))
    for model, device in ((reference, "cpu"), (ours, "flagos:1")):
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
        for _ in range(2):
            optimizer.zero_grad()
            model(ids.to(device), labels=ids.to(device)).loss.backward()
            optimizer.step()
    for (name, p), q in zip(ours.named_parameters(), reference.parameters()):
        assert_close(p, q, atol=2e-4, rtol=2e-4, what=name)
