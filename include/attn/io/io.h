// attn's file formats in one include: whole-file and atomic writes, safetensors (checkpoints),
// .npy and .npz (NumPy arrays, e.g. pre-trained embedding tables).
#pragma once

#include "attn/io/atomic_file.h"
#include "attn/io/npy.h"
#include "attn/io/npz.h"
#include "attn/io/safetensors.h"
