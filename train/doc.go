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
