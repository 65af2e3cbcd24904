// Flushing denormal floats to zero.
//
// A denormal float (0 < |x| < 1.18e-38) makes the CPU take a slow path: on the Sapphire Rapids
// (2026-11-22) a oneDNN GEMM whose input held them ran about 50x slower (2,708 ms against 53 ms
// for 2048x2048x256).
// Training makes them: softmax probabilities of unlikely words and attention weights on far
// positions shrink below 1e-38 as the model grows confident, and a run that started at full speed
// loses 40% of it within twenty minutes. attn therefore sets FTZ (results flushed) and DAZ (inputs
// read as zero) in MXCSR, as torch.set_flush_denormal(True) does. Values that small change no
// result that matters: they are 1e-38 next to the O(1) numbers they are added to.
#pragma once

namespace attn {

// Sets (or clears) FTZ and DAZ on the calling thread and on every OpenMP worker thread. Threads
// created afterwards inherit the calling thread's setting.
void flush_denormals(bool on);

// True when the calling thread flushes denormals.
bool flushing_denormals();

}  // namespace attn
