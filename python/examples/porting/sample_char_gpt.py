"""Samples from train_char_gpt.py's checkpoint, written the way nanoGPT's sample.py is:
torch.load with map_location, the "_orig_mod." prefix a compiled model's state dict carries
removed, generate under no_grad and the autocast context. Only its imports differ.

    /usr/bin/python3 sample_char_gpt.py --out_dir=out-char --device=cpu
"""
import os
import pickle
import sys
from contextlib import nullcontext

import configurator
from backend import torch
from gpt_model import GPT, ModelArgs

out_dir = "out-char"
start = "\n"
num_samples = 2
max_new_tokens = 200
temperature = 0.8
top_k = 20
seed = 1337
device = "cpu"
dtype = "float32"
compile = False
configurator.override(globals(), sys.argv[1:])

torch.manual_seed(seed)
torch.cuda.manual_seed(seed)
device_type = "cuda" if "cuda" in device else "cpu"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = nullcontext() if dtype == "float32" else torch.amp.autocast(device_type=device_type,
                                                                   dtype=ptdtype)

checkpoint = torch.load(os.path.join(out_dir, "ckpt.pt"), map_location=device)
model = GPT(ModelArgs(**checkpoint["model_args"]))
state_dict = checkpoint["model"]
unwanted_prefix = "_orig_mod."
for k, v in list(state_dict.items()):
    if k.startswith(unwanted_prefix):
        state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
model.load_state_dict(state_dict)
model.eval()
model.to(device)
if compile:
    model = torch.compile(model)

with open(checkpoint["meta_path"], "rb") as file:
    meta = pickle.load(file)
stoi, itos = meta["stoi"], meta["itos"]
encode = lambda s: [stoi[c] for c in s]  # noqa: E731
decode = lambda l: "".join([itos[i] for i in l])  # noqa: E731

x = torch.tensor(encode(start), dtype=torch.long, device=device)[None, ...]
with torch.no_grad():
    with ctx:
        for k in range(num_samples):
            y = model.generate(x, max_new_tokens, temperature=temperature, top_k=top_k)
            print(decode(y[0].tolist()))
            print("---------------")
