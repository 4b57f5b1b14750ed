"""Trains the small GPT of gpt_model.py on a character-level text, written the way nanoGPT's
train.py is: global settings overridden by --key=value, np.memmap batches, a device_type-chosen
autocast context, GradScaler, torch.compile, estimate_loss under no_grad, checkpoints with
torch.save, lr warmup and cosine decay, gradient accumulation, and DistributedDataParallel when
a launcher set RANK (the micro-steps split across the processes, require_backward_grad_sync on
the last, the loss averaged over the ranks). Batch i of the run is drawn from its own seed, so
a run over N processes sees the global batches one process sees. Only its imports
(backend.py) differ between kael and PyTorch.

    /usr/bin/python3 train_char_gpt.py --device=cpu --max_iters=200 --out_dir=out-char
    kael-run --standalone --nproc_per_node=2 train_char_gpt.py --gradient_accumulation_steps=2
    KAEL_PORTING_BACKEND=torch /usr/bin/python3 train_char_gpt.py --device=cpu ...
"""
import math
import os
import pickle
import sys
import time
from contextlib import nullcontext

import numpy as np

import configurator
from backend import torch
from gpt_model import GPT, ModelArgs

# settings (every one may be given as --name=value)
out_dir = "out-char"
text_path = "/usr/share/common-licenses/GPL-3"
eval_interval = 50
eval_iters = 10
log_interval = 10
always_save_checkpoint = True
gradient_accumulation_steps = 1  # micro-steps per iteration, split across DDP processes
batch_size = 16  # per micro-step
block_size = 64
n_layer, n_head, n_embd, dropout, bias = 2, 4, 64, 0.0, False
learning_rate = 1e-3
max_iters = 200
weight_decay = 1e-1
beta1, beta2 = 0.9, 0.99
grad_clip = 1.0
decay_lr = True
warmup_iters = 20
lr_decay_iters = 200
min_lr = 1e-4
device = "cpu"
dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float32"
compile = False
seed = 1337
log_path = ""  # where to append "iter loss" lines (for comparing curves)
backend = "gloo"  # DDP's backend ("nccl" for cuda devices)

configurator.override(globals(), sys.argv[1:])

ddp = int(os.environ.get("RANK", -1)) != -1  # started by kael-run / torchrun?
if ddp:
    torch.distributed.init_process_group(backend=backend)
    ddp_rank = int(os.environ["RANK"])
    ddp_local_rank = int(os.environ["LOCAL_RANK"])
    ddp_world_size = int(os.environ["WORLD_SIZE"])
    if device.startswith("cuda"):
        device = f"cuda:{ddp_local_rank}"
    master_process = ddp_rank == 0
    assert gradient_accumulation_steps % ddp_world_size == 0
    gradient_accumulation_steps //= ddp_world_size
else:
    ddp_rank, ddp_world_size, master_process = 0, 1, True

if master_process:
    os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(seed)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
device_type = "cuda" if "cuda" in device else "cpu"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = nullcontext() if dtype == "float32" else torch.amp.autocast(device_type=device_type,
                                                                   dtype=ptdtype)

# data: characters of a text file, encoded once into uint16 files next to the checkpoints
train_path, val_path = os.path.join(out_dir, "train.bin"), os.path.join(out_dir, "val.bin")
meta_path = os.path.join(out_dir, "meta.pkl")
if master_process and not os.path.exists(meta_path):
    with open(text_path, encoding="utf-8") as file:
        text = file.read()
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    ids = np.array([stoi[ch] for ch in text], dtype=np.uint16)
    split = int(0.9 * len(ids))
    ids[:split].tofile(train_path)
    ids[split:].tofile(val_path)
    with open(meta_path, "wb") as file:
        pickle.dump({"vocab_size": len(chars), "stoi": stoi,
                     "itos": {i: ch for ch, i in stoi.items()}}, file)
if ddp:
    torch.distributed.barrier()  # the master has written the data
with open(meta_path, "rb") as file:
    meta = pickle.load(file)
eval_drawn = {"train": 0, "val": 0}


def get_batch(split, index=None):
    """Training batch `index`, or (index None) split's next evaluation batch; each from its
    own seed, so every process draws the batches a single process would."""
    purpose = 0
    if index is None:
        index, purpose = eval_drawn[split], 1 + (split == "val")
        eval_drawn[split] += 1
    data = np.memmap(train_path if split == "train" else val_path, dtype=np.uint16, mode="r")
    generator = torch.Generator().manual_seed(seed * 1000003 + index * 3 + purpose)
    ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64))
                     for i in ix])
    if device_type == "cuda":
        x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device,
                                                                               non_blocking=True)
    else:
        x, y = x.to(device), y.to(device)
    return x, y


model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size,
                  bias=bias, vocab_size=meta["vocab_size"], dropout=dropout)
model = GPT(ModelArgs(**model_args))
model.to(device)
print(f"number of parameters: {model.num_params() / 1e6:.2f}M")
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
if compile:
    print("compiling the model...")
    model = torch.compile(model)
if ddp:
    model = torch.nn.parallel.DistributedDataParallel(
        model, device_ids=[ddp_local_rank] if device_type == "cuda" else None)
raw_model = model.module if ddp else model


@torch.no_grad()
def estimate_loss():
    """On the master process only: through raw_model, since a DDP forward may talk to the
    other processes (torch's broadcasts the buffers)."""
    out = {}
    raw_model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            with ctx:
                logits, loss = raw_model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    raw_model.train()
    return out


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (learning_rate - min_lr)


log = open(log_path, "a") if log_path and master_process else None
micro_steps = gradient_accumulation_steps * ddp_world_size  # the global batch's micro-batches


def train_batch(iteration, micro):
    """This process's micro-step `micro` of iteration: the global batches split by rank."""
    return get_batch("train", iteration * micro_steps + ddp_rank * gradient_accumulation_steps
                     + micro)


X, Y = train_batch(0, 0)
t0 = time.time()
iter_num, best_val_loss = 0, 1e9
while True:
    lr = get_lr(iter_num) if decay_lr else learning_rate
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    if (iter_num % eval_interval == 0 or iter_num == max_iters) and master_process:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        if losses["val"] < best_val_loss or always_save_checkpoint:
            best_val_loss = losses["val"]
            if iter_num > 0 and master_process:
                checkpoint = {"model": raw_model.state_dict(), "optimizer": optimizer.state_dict(),
                              "model_args": model_args, "iter_num": iter_num,
                              "best_val_loss": best_val_loss, "meta_path": meta_path}
                print(f"saving checkpoint to {out_dir}")
                torch.save(checkpoint, os.path.join(out_dir, "ckpt.pt"))
    if iter_num == max_iters:
        break
    loss_accum = 0.0
    for micro_step in range(gradient_accumulation_steps):
        if ddp:  # gradients are averaged across the processes on the last micro-step only
            model.require_backward_grad_sync = micro_step == gradient_accumulation_steps - 1
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        loss_accum += loss.detach()
        last = micro_step == gradient_accumulation_steps - 1  # the next batch while it works
        X, Y = train_batch(iter_num + last, 0 if last else micro_step + 1)
        scaler.scale(loss).backward()
    if ddp:  # the mean over the processes (SUM: torch 1.13's gloo has no AVG)
        torch.distributed.all_reduce(loss_accum)
        loss_accum = loss_accum / ddp_world_size
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    t1 = time.time()
    dt, t0 = t1 - t0, t1
    lossf = loss_accum.item()
    if log is not None:
        log.write(f"{iter_num} {lossf:.6f} {dt * 1000:.2f}\n")
    if iter_num % log_interval == 0 and master_process:
        print(f"iter {iter_num}: loss {lossf:.4f}, time {dt * 1000:.2f}ms")
    iter_num += 1
if ddp:
    torch.distributed.destroy_process_group()
