// Package train runs the training loop: epochs over a datasets.Loader,
// forward and backward on a graph.Machine, an optim.Optimizer step,
// evaluation, metrics files, checkpoints and a progress bar.
//
//	t, err := train.New(train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss},
//		&optim.SGD{LearningRate: 0.1, Momentum: 0.9}, trainLoader, valLoader,
//		train.Config{Epochs: 5, Dir: "out/run"})
//	res, err := t.Run()
//
// Everything is deterministic: the graph's seed fixes the initial weights
// and dropout masks, the loaders' seed fixes the data order, and metrics
// files hold no wall-clock times, so the same command twice writes
// byte-identical files. Checkpoints (Dir/checkpoint.safetensors) hold the
// parameters under their PyTorch names, the optimizer state under
// "optimizer.<param>.<state>" and the position in the data; resuming from
// one reproduces the uninterrupted run exactly. A NaN or ±Inf loss or
// gradient stops training with an error naming the step and tensor before
// the optimizer touches the weights; the last checkpoint stays as it was.
//
// Resuming checks the checkpoint against the run before changing anything:
// its seed, and its position (step = epoch × batches per epoch + batch),
// which must lie within this run's Epochs and MaxSteps; the loss count and
// sum, learning rate and last evaluation must be consistent with it. A
// checkpoint that fails is refused with an error naming the field, rather
// than silently training nothing. Epochs and MaxSteps may grow, and
// EvalEvery, CheckpointEvery, ClipNorm, Schedule and the hooks may change
// between runs: they shape what is recorded, not the state. The file
// itself is read as untrusted input (see package safetensors).
//
// A crash at any moment, SIGKILL included, followed by a resume gives the
// files of an uninterrupted run, byte for byte: checkpoints, the model and
// the metrics files' rewrites are atomic (a killed write's temporary file
// is removed by the next write of the same file), and resuming cuts the
// metrics back to what the checkpoint covers, evaluations included, so an
// evaluation flushed just before the crash is neither lost nor repeated.
//
// Files in Dir:
//
//	steps.csv, steps.jsonl     per step: step, epoch, batch, loss, lr, grad_norm
//	evals.csv, evals.jsonl     per evaluation: step, epoch, train_loss, val_loss, val_accuracy
//	checkpoint.safetensors     the latest checkpoint
//	model.safetensors          the final parameters only: torch's load_state_dict reads it as is
//
// The packages below train are layers of their own, each importing only
// downwards:
//
//	train/safetensors  the file format (below train: train uses it)
//	train/report       an experiment's output folder (CSV, summary.json,
//	                   plots, report.md); a leaf that imports nothing of
//	                   the project
//	train/probe        above train: measurements inside a training network,
//	                   taking train's own step (Gradients)
//	train/experiment   above train and report: grids of settings × seeds
package train
