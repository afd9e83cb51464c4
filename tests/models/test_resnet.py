"""CNN classifiers train on flagos with no op on the CPU: transformers'
ResNetForImageClassification and a torchvision-style ResNet (conv, batch
norm, ReLU, a max-pooling stem, basic blocks), forward + backward + optimizer
steps in training mode (batch statistics, running statistics updated), then
evaluation (running statistics), on flagos:1 while flagos:0 is current, and
split over flagos:1 and flagos:2 with accelerate's dispatch_model; every
loss, parameter and running statistic matches the CPU's."""

from __future__ import annotations

import copy

import torch

import torch_fl

from .common import assert_close, devices_of, dispatch


def hf_resnet():
    import transformers

    torch.manual_seed(0)
    config = transformers.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], num_labels=3)
    return transformers.ResNetForImageClassification(config)


class BasicBlock(torch.nn.Module):
    """torchvision's BasicBlock: two 3x3 conv-BN, a projection when the shape changes."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(cout)
        self.conv2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False),
                                                  torch.nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(out)) + identity)


class TinyResNet(torch.nn.Module):
    """torchvision's ResNet layout (7x7/2 conv, BN, ReLU, 3x3/2 max pool, stages, avg pool, fc), narrow."""

    def __init__(self, num_classes=3):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 7, 2, 3, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.relu = torch.nn.ReLU(inplace=True)
        self.maxpool = torch.nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = BasicBlock(8, 8, 1)
        self.layer2 = BasicBlock(8, 16, 2)
        self.avgpool = torch.nn.AdaptiveAvgPool2d((1, 1))
        self.fc = torch.nn.Linear(16, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def tv_resnet():
    torch.manual_seed(0)
    return TinyResNet()


def logits_of(model, images, labels):
    out = model(images) if isinstance(model, TinyResNet) else model(pixel_values=images).logits
    return out, torch.nn.functional.cross_entropy(out, labels.to(out.device))


def run(model, device, optimizer_cls, steps=2):
    """`steps` training steps, then the evaluation logits; returns (losses, eval logits)."""
    optimizer = optimizer_cls(model.parameters())
    data = torch.Generator().manual_seed(1)
    model.train()
    losses = []
    for _ in range(steps):
        images = torch.randn(4, 3, 16, 16, generator=data)
        labels = torch.randint(0, 3, (4,), generator=data)
        optimizer.zero_grad()
        _, loss = logits_of(model, images.to(device), labels.to(device))
        loss.backward()
        optimizer.step()
        losses.append(loss.detach().cpu())
    model.eval()
    with torch.no_grad():
        logits, _ = logits_of(model, torch.randn(2, 3, 16, 16, generator=data).to(device), torch.zeros(2, dtype=torch.long))
    return torch.stack(losses), logits.cpu()


def sgd(params):
    return torch.optim.SGD(params, lr=0.1, momentum=0.9)


def adamw(params):
    return torch.optim.AdamW(params, lr=1e-2, weight_decay=0.01)


def compare(ours, reference, result, expected):
    assert_close(result[0], expected[0], atol=1e-4, rtol=1e-4, what="losses")
    assert_close(result[1], expected[1], atol=1e-4, rtol=1e-4, what="eval logits")
    for (name, p), q in zip(ours.state_dict().items(), reference.state_dict().values()):
        assert_close(p, q, atol=2e-4, rtol=2e-4, what=name)  # parameters, running stats, batch counts


def check(build, optimizer_cls, device_map=None):
    reference = build()
    model = copy.deepcopy(reference)
    expected = run(reference, "cpu", optimizer_cls)
    if device_map is None:
        model = model.to("flagos:1")
        assert devices_of(model) == {"flagos:1"}
    else:
        model = dispatch(model, device_map)
        assert devices_of(model) == {"flagos:1", "flagos:2"}
    torch_fl.sim.reset_stats()
    result = run(model, "flagos:1", optimizer_cls)
    launched = torch_fl.sim.stats()["op_launches"]
    for op in ("aclnnBatchNorm", "aclnnBatchNormBackward", "aclnnMaxPool2dWithIndices",
               "aclnnMaxPool2dWithIndicesBackward"):
        assert launched.get(op, 0) >= 1, (op, launched)
    compare(model, reference, result, expected)


def test_hf_resnet_trains_on_one_device():
    check(hf_resnet, sgd)


def test_hf_resnet_trains_split_over_two_devices():
    check(hf_resnet, adamw, {"resnet.embedder": "flagos:1", "resnet.encoder.stages.0": "flagos:1",
                             "resnet.encoder.stages.1": "flagos:2", "resnet.pooler": "flagos:2",
                             "classifier": "flagos:2"})


def test_torchvision_style_resnet_trains_on_one_device():
    check(tv_resnet, adamw)


def test_torchvision_style_resnet_trains_split_over_two_devices():
    check(tv_resnet, sgd, {"conv1": "flagos:1", "bn1": "flagos:1", "relu": "flagos:1", "maxpool": "flagos:1",
                           "layer1": "flagos:1", "layer2": "flagos:2", "avgpool": "flagos:2", "fc": "flagos:2"})
