"""A character model trained the way minGPT's Trainer and chargpt project do it: a Dataset
subclass, a DataLoader over RandomSampler(replacement=True, num_samples=10**10), an iterator
refilled on StopIteration, configure_optimizers splitting decay / no-decay parameters by module
type through named_modules(), callbacks on batch end, torch.save of the state dict. kael's own
code; only its imports (backend.py) differ between kael and PyTorch.

    /usr/bin/python3 mingpt_style_trainer.py --max_iters=200 --device=cpu --log_path=loss.txt
"""
import math
import sys
import time
from collections import defaultdict

import configurator
from backend import F, nn, torch
from backend import torch_utils_data

DataLoader, Dataset = torch_utils_data.DataLoader, torch_utils_data.Dataset

text_path = "/usr/share/common-licenses/GPL-3"
device = "cpu"
max_iters = 200
batch_size = 16
block_size = 32
n_layer, n_head, n_embd = 2, 4, 64
learning_rate = 5e-4
weight_decay = 0.1
grad_norm_clip = 1.0
seed = 3407
log_path = ""
out_path = ""
configurator.override(globals(), sys.argv[1:])


class CharDataset(Dataset):
    def __init__(self, data, block):
        chars = sorted(set(data))
        self.stoi = {ch: i for i, ch in enumerate(chars)}
        self.itos = {i: ch for i, ch in enumerate(chars)}
        self.vocab_size, self.block, self.data = len(chars), block, data

    def __len__(self):
        return len(self.data) - self.block

    def __getitem__(self, idx):
        chunk = [self.stoi[s] for s in self.data[idx:idx + self.block + 1]]
        x = torch.tensor(chunk[:-1], dtype=torch.long)
        y = torch.tensor(chunk[1:], dtype=torch.long)
        return x, y


class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                           (x + 0.044715 * torch.pow(x, 3.0))))


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                             .view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(n_embd, dim=2)
        k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
        q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
        v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(n_embd), SelfAttention()
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(n_embd, 4 * n_embd), act=NewGELU(),
                                      c_proj=nn.Linear(4 * n_embd, n_embd)))
        m = self.mlp
        self.mlpf = lambda x: m.c_proj(m.act(m.c_fc(x)))  # noqa: E731

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlpf(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd), wpe=nn.Embedding(block_size, n_embd),
            h=nn.ModuleList([Block() for _ in range(n_layer)]), ln_f=nn.LayerNorm(n_embd)))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))
        print("number of parameters: %.2fM" % (sum(p.numel() for p in self.transformer.parameters())
                                               / 1e6,))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
        elif isinstance(module, nn.LayerNorm):
            torch.nn.init.zeros_(module.bias)
            torch.nn.init.ones_(module.weight)

    def configure_optimizers(self):
        decay, no_decay = set(), set()
        whitelist, blacklist = (torch.nn.Linear,), (torch.nn.LayerNorm, torch.nn.Embedding)
        for mn, m in self.named_modules():
            for pn, p in m.named_parameters():
                fpn = "%s.%s" % (mn, pn) if mn else pn
                if pn.endswith("bias"):
                    no_decay.add(fpn)
                elif pn.endswith("weight") and isinstance(m, whitelist):
                    decay.add(fpn)
                elif pn.endswith("weight") and isinstance(m, blacklist):
                    no_decay.add(fpn)
        param_dict = {pn: p for pn, p in self.named_parameters()}
        assert len(decay & no_decay) == 0 and len(param_dict.keys() - (decay | no_decay)) == 0
        groups = [{"params": [param_dict[pn] for pn in sorted(decay)],
                   "weight_decay": weight_decay},
                  {"params": [param_dict[pn] for pn in sorted(no_decay)], "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=(0.9, 0.95))

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device).unsqueeze(0)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        return logits, loss


class Trainer:
    def __init__(self, model, dataset):
        self.model, self.dataset = model.to(device), dataset
        self.callbacks = defaultdict(list)
        self.iter_num, self.iter_time, self.iter_dt = 0, 0.0, 0.0

    def add_callback(self, onevent, callback):
        self.callbacks[onevent].append(callback)

    def run(self):
        model = self.model
        self.optimizer = model.configure_optimizers()
        loader = DataLoader(self.dataset, sampler=torch.utils.data.RandomSampler(
            self.dataset, replacement=True, num_samples=int(1e10)), shuffle=False,
            pin_memory=True, batch_size=batch_size, num_workers=0)
        model.train()
        self.iter_time = time.time()
        data_iter = iter(loader)
        while True:
            try:
                batch = next(data_iter)
            except StopIteration:
                data_iter = iter(loader)
                batch = next(data_iter)
            x, y = [t.to(device) for t in batch]
            logits, self.loss = model(x, y)
            model.zero_grad(set_to_none=True)
            self.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_norm_clip)
            self.optimizer.step()
            for callback in self.callbacks["on_batch_end"]:
                callback(self)
            self.iter_num += 1
            now = time.time()
            self.iter_dt, self.iter_time = now - self.iter_time, now
            if self.iter_num >= max_iters:
                break


torch.manual_seed(seed)
with open(text_path, encoding="utf-8") as file:
    train_dataset = CharDataset(file.read(), block_size)
model = GPT(train_dataset.vocab_size)
trainer = Trainer(model, train_dataset)
log = open(log_path, "a") if log_path else None


def batch_end_callback(trainer):
    if log is not None:
        log.write(f"{trainer.iter_num} {trainer.loss.item():.6f} {trainer.iter_dt * 1000:.2f}\n")
    if trainer.iter_num % 50 == 0:
        print(f"iter_dt {trainer.iter_dt * 1000:.2f}ms; iter {trainer.iter_num}: "
              f"train loss {trainer.loss.item():.5f}")
        model.eval()
        with torch.no_grad():
            context = "This "
            x = torch.tensor([train_dataset.stoi[s] for s in context], dtype=torch.long)[
                None, ...].to(device)
            for _ in range(20):
                logits, _ = model(x[:, -block_size:])
                probs = F.softmax(logits[:, -1, :], dim=-1)
                x = torch.cat((x, torch.multinomial(probs, num_samples=1)), dim=1)
            print("".join(train_dataset.itos[int(i)] for i in x[0]))
        model.train()


trainer.add_callback("on_batch_end", batch_end_callback)
trainer.run()
if out_path:
    torch.save(model.state_dict(), out_path)
