"""A small CUDA-only training script, written the way many tutorials write one."""
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def main(steps=20):
    torch.manual_seed(0)
    model = Net().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = torch.randn(64, 20).pin_memory()
    target = torch.randint(0, 4, (64,))
    for step in range(steps):
        x, y = data.cuda(non_blocking=True), target.to("cuda")
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if next(model.parameters()).is_cuda:
        print("trained on cuda")  # messages that mention CUDA are left alone
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
