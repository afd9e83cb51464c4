"""The flagos DeviceInterface (torch_fl/_device_interface.py) that Dynamo and
Inductor ask for device, stream and property queries: registered when
torch.compile builds its Inductor backend, and answering as torch.flagos does."""

from __future__ import annotations


def test_registered_by_torch_compile_and_answers_as_torch_flagos(python):
    out = python("""
        from torch._dynamo.device_interface import DeviceGuard, get_interface_for_device
        try:
            get_interface_for_device("flagos")
            before = "registered"
        except NotImplementedError as error:
            before = "missing"  # the negative control: nothing registers it but torch.compile
        torch.compile(lambda x: x + 1)
        interface = get_interface_for_device("flagos")
        assert get_interface_for_device("flagos:2") is interface
        torch.flagos.set_device(0)
        answers = [interface.device_count() == torch.flagos.device_count(), interface.is_available(),
                   not interface.is_triton_capable()]
        with DeviceGuard(interface, 2):
            answers.append(interface.current_device() == 2)
        answers.append(interface.current_device() == 0)
        side = torch.flagos.Stream(1)
        with interface.stream(side):
            answers.append(interface.get_raw_stream(1) == side.stream_id)
        answers.append(interface.get_raw_stream(1) == torch.flagos.current_stream(1).stream_id != side.stream_id)
        answers.append(interface.Worker.get_device_properties(1).name == torch.flagos.get_device_name(1))
        answers.append(interface.get_compute_capability(1) == torch.flagos.get_device_capability(1))
        answers.append(interface.maybe_exchange_device(-1) == -1 and interface.current_device() == 0)
        print(before, all(answers), answers)
    """, timeout=600)
    assert out.split()[:2] == ["missing", "True"], out
