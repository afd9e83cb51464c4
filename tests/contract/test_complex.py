"""Complex tensors end to end, and the conjugate and negative views: reading
a conjugate view back to the CPU used to recurse copy_ -> _copy_from ->
conjugate fallback -> clone -> copy_ until the stack overflowed, so each
case runs in a subprocess."""

from __future__ import annotations


def test_conjugate_and_negative_views_resolve(python):
    out = python("""
        torch.manual_seed(0)
        x = torch.randn(5, dtype=torch.complex64)
        y = x.to("flagos:1")
        checks = {
            "conj.cpu": torch.equal(y.conj().cpu(), x.conj()),
            "resolve_conj": torch.equal(y.conj().resolve_conj().cpu(), x.conj().resolve_conj()),
            "conj_physical": torch.equal(torch.conj_physical(y).cpu(), torch.conj_physical(x)),
            "neg_view": torch.equal(torch._neg_view(y).cpu(), -x),
            "neg_conj": torch.equal(torch._neg_view(y).conj().resolve_conj().resolve_neg().cpu(), -x.conj()),
            "to other device": torch.equal(y.conj().to("flagos:2").cpu(), x.conj()),
            "from cpu conj": torch.equal(torch.empty(5, dtype=torch.complex64, device="flagos:3")
                                         .copy_(x.conj()).cpu(), x.conj()),
            "clone": torch.equal(y.conj().clone().cpu(), x.conj()),
            "real conj": torch.equal(torch.arange(3.0, device="flagos:1").conj().cpu(), torch.arange(3.0)),
        }
        print(checks)
        print(all(checks.values()), torch.flagos.current_device(), torch_fl._C._fallback_counts())
    """)
    assert out.splitlines()[-1] == "True 0 {}", out
