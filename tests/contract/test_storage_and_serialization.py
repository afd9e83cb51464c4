"""Storages, torch.save/torch.load and copy.deepcopy of flagos tensors, as a
torch.cuda user writes them. These crashed (SIGSEGV in c10::make_storage_impl)
while no allocator was registered with c10 for PrivateUse1, so each runs in a
subprocess."""

from __future__ import annotations


def test_storage_constructor_allocates_on_its_device(python):
    out = python("""
        torch.flagos.set_device(0)
        s = torch.UntypedStorage(8, device="flagos:1")
        print(s.device, s.nbytes(), torch.flagos.current_device())
        print(torch.flagos.memory_allocated(1) >= 8, torch.flagos.memory_allocated(0))
    """)
    assert out.splitlines()[0] == "flagos:1 8 0"
    assert out.splitlines()[1] == "True 0"


def test_storage_clone_and_typed_storage(python):
    out = python("""
        t = torch.arange(6.0, device="flagos:2")
        clone = t.untyped_storage().clone()
        print(clone.device, clone.nbytes())
        u = torch.empty(0, device="flagos:2").set_(clone).view(6)
        print(u.cpu().tolist())
        print(t.storage().clone().device)
    """)
    lines = out.splitlines()
    assert lines[0] == "flagos:2 24"
    assert lines[1] == "[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]"
    assert lines[2] == "flagos:2"


def test_deepcopy_of_tensors_state_dicts_and_modules(python):
    out = python("""
        import copy
        torch.flagos.set_device(0)
        t = torch.arange(4.0, device="flagos:1")
        c = copy.deepcopy(t)
        print(c.device, c.cpu().tolist(), c.data_ptr() != t.data_ptr())
        model = torch.nn.Linear(3, 2).to("flagos:3")
        sd = copy.deepcopy(model.state_dict())
        print(sorted(str(v.device) for v in sd.values()))
        m2 = copy.deepcopy(model)
        x = torch.ones(1, 3, device="flagos:3")
        print(torch.equal(m2(x).cpu(), model(x).cpu()), torch.flagos.current_device())
    """)
    lines = out.splitlines()
    assert lines[0] == "flagos:1 [0.0, 1.0, 2.0, 3.0] True"
    assert lines[1] == "['flagos:3', 'flagos:3']"
    assert lines[2] == "True 0"


def test_save_and_load_with_every_map_location(python, tmp_path):
    path = tmp_path / "checkpoint.pt"
    out = python(f"""
        path = {str(path)!r}
        torch.flagos.set_device(0)
        model = torch.nn.Linear(3, 2).to("flagos:1")
        torch.save({{"model": model.state_dict(), "step": torch.tensor(7, device="flagos:2")}}, path)
        expected = model.weight.cpu()
        for where in (None, "cpu", "flagos:2", torch.device("flagos", 3), {{"flagos:1": "flagos:0", "flagos:2": "cpu"}},
                      lambda storage, location: storage):
            state = torch.load(path) if where is None else torch.load(path, map_location=where)
            weight, step = state["model"]["weight"], state["step"]
            print(weight.device, step.device, torch.equal(weight.cpu(), expected), int(step))
        print(torch.flagos.current_device())
    """)
    lines = out.splitlines()
    assert lines == [
        "flagos:1 flagos:2 True 7",   # where it was saved from
        "cpu cpu True 7",
        "flagos:2 flagos:2 True 7",
        "flagos:3 flagos:3 True 7",
        "flagos:0 cpu True 7",
        "cpu cpu True 7",             # a callable gets the CPU storage, as with CUDA
        "0",
    ]


def test_pickle_round_trip(python):
    out = python("""
        import pickle
        t = torch.arange(3, device="flagos:1")
        r = pickle.loads(pickle.dumps(t))
        print(r.device, r.cpu().tolist())
    """)
    assert out.strip() == "flagos:1 [0, 1, 2]"
